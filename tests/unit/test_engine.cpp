#include <dlfcn.h>
/*
 * Engine unit tests: the engine against an independent brute-force fp64
 * Lloyd written here (scikit-learn 1.2 semantics), invariants, determinism,
 * policies, interrupts, argument errors and GPU-plugin failure paths.
 */
#include "device.h"
#include "internal_hooks.h"
#include "thread_pool.h"
#include "pgkm_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace
{

struct Result
{
	int			status = -1;
	std::string err;
	int32_t		k = 0, k_requested = 0, iterations = 0, converged = 0, repairs = 0, best_run = 0;
	double		inertia = 0;
	std::vector<double> centroids, init;
	std::vector<int32_t> labels;
	std::vector<double> dist;
	std::vector<int64_t> sizes;
	std::vector<pgkm_progress> progress;
	std::string device, detail, fallback;
};

pgkm_options
options(int32_t k)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.device = PGKM_DEVICE_CPU;
	return o;
}

/* Runs to completion (or the first non-OK status) and copies the result out. */
Result
run(const std::vector<float> &x, int32_t d, const pgkm_options &o,
	pgkm_interrupt_fn intr = nullptr, void *ctx = nullptr)
{
	Result		r;
	char		err[512] = "";
	pgkm_run   *h = nullptr;
	int64_t		n = (int64_t) (x.size() / (d > 0 ? d : 1));
	r.status = pgkm_run_create(x.data(), n, d, &o, intr, ctx, &h, err, sizeof(err));
	if (r.status != PGKM_OK)
	{
		r.err = err;
		EXPECT_EQ(h, nullptr);
		return r;
	}
	for (;;)
	{
		pgkm_progress p;
		int			st = pgkm_run_step(h, &p, err, sizeof(err));
		if (st == PGKM_OK || st == PGKM_DONE)
			r.progress.push_back(p);
		if (st == PGKM_OK)
			continue;
		r.status = st;
		r.err = err;
		break;
	}
	if (r.status == PGKM_DONE)
	{
		pgkm_result res;
		EXPECT_EQ(pgkm_run_result(h, &res), PGKM_OK);
		r.k = res.k;
		r.k_requested = res.k_requested;
		r.iterations = res.iterations;
		r.converged = res.converged;
		r.repairs = res.empty_cluster_repairs;
		r.best_run = res.best_run;
		r.inertia = res.inertia;
		r.centroids.assign(res.centroids, res.centroids + (size_t) res.k * d);
		r.init.assign(res.initial_centroids, res.initial_centroids + (size_t) res.k * d);
		r.labels.assign(res.labels, res.labels + n);
		r.dist.assign(res.distances, res.distances + n);
		r.sizes.assign(res.sizes, res.sizes + res.k);
		r.device = res.device;
		r.detail = res.device_detail;
		r.fallback = res.fallback_reason;
	}
	pgkm_run_free(h);
	return r;
}

/* Gaussian blobs: `centers` random centres in [-5,5]^d, unit-ish spread, float32. */
std::vector<float>
blobs(int64_t n, int32_t d, int centers, uint64_t seed, double spread = 1.5)
{
	std::mt19937_64 g(seed);
	std::uniform_real_distribution<double> u(-5, 5);
	std::normal_distribution<double> z(0, spread);
	std::vector<double> c((size_t) centers * d);
	for (auto &v : c)
		v = u(g);
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
	{
		int			b = (int) (g() % centers);
		for (int32_t j = 0; j < d; j++)
			x[(size_t) i * d + j] = (float) (c[(size_t) b * d + j] + z(g));
	}
	return x;
}

/* ---- independent brute-force reference: sklearn 1.2 _kmeans_single_lloyd in fp64 ---- */
struct Ref
{
	std::vector<int32_t> labels;
	std::vector<double> centers;
	double		inertia = 0;
	int			iterations = 0;
	bool		converged = false;
};

double
d2(const float *x, const double *c, int d)
{
	double		s = 0;
	for (int j = 0; j < d; j++)
		s += ((double) x[j] - c[j]) * ((double) x[j] - c[j]);
	return s;
}

void
ref_assign(const std::vector<float> &x, int d, const std::vector<double> &c, int k,
		   std::vector<int32_t> &labels)
{
	int64_t		n = (int64_t) x.size() / d;
	for (int64_t i = 0; i < n; i++)
	{
		int			best = 0;
		double		bd = d2(&x[i * d], &c[0], d);
		for (int cc = 1; cc < k; cc++)
		{
			double		v = d2(&x[i * d], &c[(size_t) cc * d], d);
			if (v < bd)
			{
				bd = v;
				best = cc;
			}
		}
		labels[i] = best;
	}
}

Ref
ref_lloyd(const std::vector<float> &x, int d, std::vector<double> centers, int max_iter, double tol)
{
	int64_t		n = (int64_t) x.size() / d;
	int			k = (int) (centers.size() / d);
	double		var = 0;
	for (int j = 0; j < d; j++)
	{
		double		m = 0, v = 0;
		for (int64_t i = 0; i < n; i++)
			m += x[i * d + j];
		m /= n;
		for (int64_t i = 0; i < n; i++)
			v += (x[i * d + j] - m) * (x[i * d + j] - m);
		var += v / n;
	}
	double		tol_s = var / d * tol;
	Ref			r;
	std::vector<int32_t> labels(n, -1), old(n, -1);
	bool		strict = false;
	int			i;
	for (i = 0; i < max_iter; i++)
	{
		ref_assign(x, d, centers, k, labels);
		std::vector<double> nc(centers.size(), 0.0);
		std::vector<int64_t> cnt(k, 0);
		for (int64_t p = 0; p < n; p++)
		{
			cnt[labels[p]]++;
			for (int j = 0; j < d; j++)
				nc[(size_t) labels[p] * d + j] += x[p * d + j];
		}
		double		shift = 0;
		for (int c = 0; c < k; c++)
			for (int j = 0; j < d; j++)
			{
				double		v = cnt[c] ? nc[(size_t) c * d + j] / cnt[c] : centers[(size_t) c * d + j];
				shift += (v - centers[(size_t) c * d + j]) * (v - centers[(size_t) c * d + j]);
				nc[(size_t) c * d + j] = v;
			}
		centers = nc;
		if (labels == old)
		{
			strict = true;
			break;
		}
		if (shift <= tol_s)
			break;
		old = labels;
	}
	r.converged = strict || i < max_iter;
	if (i == max_iter)
		i--;
	ref_assign(x, d, centers, k, labels);
	r.inertia = 0;
	for (int64_t p = 0; p < n; p++)
		r.inertia += d2(&x[p * d], &centers[(size_t) labels[p] * d], d);
	r.labels = labels;
	r.centers = centers;
	r.iterations = i + 1;
	return r;
}

/* k rows picked with a fixed generator, as fp64 starting centroids. */
std::vector<double>
pick_rows(const std::vector<float> &x, int d, int k, uint64_t seed)
{
	int64_t		n = (int64_t) x.size() / d;
	std::mt19937_64 g(seed);
	std::vector<double> c;
	std::vector<int64_t> used;
	while ((int) used.size() < k)
	{
		int64_t		i = (int64_t) (g() % n);
		if (std::find(used.begin(), used.end(), i) != used.end())
			continue;
		used.push_back(i);
		for (int j = 0; j < d; j++)
			c.push_back(x[i * d + j]);
	}
	return c;
}

}							/* namespace */

/* ---- against the reference, direct (d=2) and GEMM (d=16, 64, 300) distance paths ---- */
class AgainstReference : public ::testing::TestWithParam<std::tuple<int, int, int>>
{
};

TEST_P(AgainstReference, SameLabelsCentroidsInertiaIterations)
{
	auto [d, k, n] = GetParam();
	auto		x = blobs(n, d, k, 1000 + d, d >= 64 ? 4.0 : 1.5);
	auto		init = pick_rows(x, d, k, 7 + d);
	pgkm_options o = options(k);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.max_iter = 100;
	o.tol = 1e-4;
	o.n_threads = 2;
	Result		r = run(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	Ref			ref = ref_lloyd(x, d, init, o.max_iter, o.tol);
	ASSERT_EQ(r.k, k);
	EXPECT_GT(ref.iterations, 2);	/* the data makes Lloyd work */
	EXPECT_EQ(r.iterations, ref.iterations);
	EXPECT_EQ(r.converged, ref.converged ? 1 : 0);
	int64_t		mismatched = 0;
	for (size_t i = 0; i < r.labels.size(); i++)
		mismatched += r.labels[i] != ref.labels[i];
	EXPECT_EQ(mismatched, 0);
	for (size_t i = 0; i < ref.centers.size(); i++)
		ASSERT_NEAR(r.centroids[i], ref.centers[i], 1e-5) << "centroid value " << i;
	EXPECT_NEAR(r.inertia, ref.inertia, 1e-6 * ref.inertia);
	for (size_t i = 0; i < init.size(); i++)
		ASSERT_EQ(r.init[i], init[i]);
	EXPECT_EQ(r.repairs, 0);
	/* distances are Euclidean to the own centroid, summing to the inertia */
	double		s = 0;
	for (size_t i = 0; i < r.dist.size(); i++)
	{
		double		e = std::sqrt(d2(&x[i * d], &r.centroids[(size_t) r.labels[i] * d], d));
		ASSERT_NEAR(r.dist[i], e, 1e-9 * (1 + e));
		s += r.dist[i] * r.dist[i];
	}
	EXPECT_NEAR(s, r.inertia, 1e-9 * r.inertia);
	int64_t		total = 0;
	for (int c = 0; c < k; c++)
		total += r.sizes[c];
	EXPECT_EQ(total, n);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AgainstReference,
						 ::testing::Values(std::make_tuple(2, 8, 5000),
										   std::make_tuple(5, 12, 4000),
										   std::make_tuple(16, 10, 4000),
										   std::make_tuple(64, 10, 3000),
										   std::make_tuple(300, 6, 1500)));

/* ---- invariants ---- */
TEST(Invariants, LabelsAreArgminAndInertiaNeverIncreases)
{
	for (int d : {3, 32})
	{
		const int	k = 20;
		auto		x = blobs(20000, d, 12, 55 + d, 2.5);
		pgkm_options o = options(k);
		o.seed = 3;
		o.tol = 0;
		o.max_iter = 50;
		Result		r = run(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		int64_t		n = (int64_t) x.size() / d;
		int64_t		ties = 0;
		for (int64_t i = 0; i < n; i++)
		{
			double		own = d2(&x[i * d], &r.centroids[(size_t) r.labels[i] * d], d);
			double		best = own;
			for (int c = 0; c < r.k; c++)
				best = std::min(best, d2(&x[i * d], &r.centroids[(size_t) c * d], d));
			/* a float32 argmin may pick a different centroid only on a near-tie */
			ASSERT_LE(own, best * (1 + 1e-5) + 1e-9) << "row " << i;
			ties += own > best;
		}
		EXPECT_LE(ties, n / 1000);
		/* progress[0] is the init step; then one entry per Lloyd iteration */
		ASSERT_GE(r.progress.size(), 4u);
		EXPECT_EQ(r.progress[0].iteration, 0);
		double		prev = INFINITY;
		int			iters = 0;
		for (size_t i = 1; i + 1 < r.progress.size(); i++)
		{
			EXPECT_EQ(r.progress[i].iteration, (int) i);
			EXPECT_LE(r.progress[i].inertia, prev * (1 + 1e-12)) << "iteration " << i;
			prev = r.progress[i].inertia;
			iters++;
		}
		EXPECT_EQ(iters, r.iterations);
		EXPECT_LE(r.inertia, prev * (1 + 1e-12));
		EXPECT_EQ(r.progress.back().inertia, r.inertia);
	}
}

TEST(Determinism, IdenticalAcrossThreadCounts)
{
	for (int d : {2, 24})
	{
		auto		x = blobs(30000, d, 9, 77, 2.0);
		pgkm_options o = options(16);
		o.seed = 42;
		o.n_init = 2;
		Result		base;
		for (int t : {1, 2, 3, 7})
		{
			o.n_threads = t;
			Result		r = run(x, d, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			if (t == 1)
			{
				base = r;
				EXPECT_EQ(r.detail, "1 thread");
				continue;
			}
			EXPECT_EQ(r.detail, std::to_string(t) + " threads");
			EXPECT_EQ(r.labels, base.labels) << "threads " << t;
			EXPECT_EQ(r.centroids, base.centroids) << "threads " << t;	/* bitwise */
			EXPECT_EQ(r.init, base.init);
			EXPECT_EQ(r.inertia, base.inertia);
			EXPECT_EQ(r.iterations, base.iterations);
			EXPECT_EQ(r.dist, base.dist);
		}
	}
}

TEST(Determinism, SameSeedSameResultOtherSeedDiffers)
{
	auto		x = blobs(5000, 4, 6, 9);
	for (int init : {PGKM_INIT_KMEANSPP, PGKM_INIT_RANDOM})
	{
		pgkm_options o = options(6);
		o.init = init;
		o.seed = 11;
		Result		a = run(x, 4, o), b = run(x, 4, o);
		o.seed = 12;
		Result		c = run(x, 4, o);
		ASSERT_EQ(a.status, PGKM_DONE);
		ASSERT_EQ(c.status, PGKM_DONE);
		EXPECT_EQ(a.init, b.init);
		EXPECT_EQ(a.labels, b.labels);
		EXPECT_EQ(a.centroids, b.centroids);
		EXPECT_NE(a.init, c.init);
		/* init centroids are rows of the data, pairwise distinct */
		for (int i = 0; i < a.k; i++)
		{
			bool		is_row = false;
			for (size_t r = 0; r < x.size() / 4 && !is_row; r++)
				is_row = std::equal(&x[r * 4], &x[r * 4] + 4, &a.init[(size_t) i * 4],
									[](float f, double v) { return (double) f == v; });
			EXPECT_TRUE(is_row);
			for (int j = 0; j < i; j++)
				EXPECT_FALSE(std::equal(&a.init[(size_t) i * 4], &a.init[(size_t) i * 4] + 4,
										&a.init[(size_t) j * 4]));
		}
	}
}

TEST(Determinism, MoreRunsNeverWorse)
{
	auto		x = blobs(6000, 3, 15, 21, 3.0);
	pgkm_options o = options(15);
	o.seed = 5;
	Result		one = run(x, 3, o);
	o.n_init = 4;
	Result		four = run(x, 3, o);
	ASSERT_EQ(one.status, PGKM_DONE);
	ASSERT_EQ(four.status, PGKM_DONE);
	EXPECT_LE(four.inertia, one.inertia);
	/* run 0 of n_init = 4 is the n_init = 1 run, so it wins only with the same inertia */
	if (four.best_run == 0)
		EXPECT_EQ(four.inertia, one.inertia);
	EXPECT_EQ(four.progress.front().run, 0);
	EXPECT_EQ(four.progress.back().run, 3);
}

TEST(Determinism, EachRunStartsFromNoLabels)
{
	/* two distinct points: every run starts from the same two centers */
	std::vector<float> x = {0, 0, 0, 0, 0, 0, 4, 4, 4, 4};
	pgkm_options o = options(2);
	o.n_init = 3;
	o.init = PGKM_INIT_RANDOM;
	Result		r = run(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	int			firsts = 0;
	for (const pgkm_progress &p : r.progress)
		if (p.iteration == 1 && p.moved != 0)
		{
			firsts++;
			EXPECT_EQ(p.moved, 5) << "run " << p.run;
		}
	EXPECT_EQ(firsts, 3);
	EXPECT_EQ(r.iterations, 1);	/* centers did not move: shift 0 <= tol (sklearn stops here too) */
	EXPECT_EQ(r.converged, 1);
}

/* ---- known answers ---- */
TEST(KnownAnswers, TwoSeparatedGroups)
{
	/* {0,0},{0,1},{1,0},{1,1} and the same shifted by 100 */
	std::vector<float> x = {0, 0, 0, 1, 1, 0, 1, 1, 100, 100, 100, 101, 101, 100, 101, 101};
	/* k-means++ always seeds one center per group here (random init may not: a local optimum) */
	for (int init : {PGKM_INIT_KMEANSPP})
		for (uint64_t seed = 0; seed < 20; seed++)
		{
			pgkm_options o = options(2);
			o.init = init;
			o.seed = seed;
			Result		r = run(x, 2, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			ASSERT_EQ(r.k, 2);
			EXPECT_EQ(r.labels[0], r.labels[3]);
			EXPECT_NE(r.labels[0], r.labels[4]);
			int			lo = r.labels[0], hi = r.labels[4];
			EXPECT_DOUBLE_EQ(r.centroids[lo * 2], 0.5);
			EXPECT_DOUBLE_EQ(r.centroids[lo * 2 + 1], 0.5);
			EXPECT_DOUBLE_EQ(r.centroids[hi * 2], 100.5);
			EXPECT_DOUBLE_EQ(r.centroids[hi * 2 + 1], 100.5);
			EXPECT_DOUBLE_EQ(r.inertia, 4.0);	/* 8 points at squared distance 0.5 */
			EXPECT_EQ(r.sizes[0], 4);
			EXPECT_EQ(r.sizes[1], 4);
			EXPECT_EQ(r.converged, 1);
			for (double v : r.dist)
				EXPECT_DOUBLE_EQ(v, std::sqrt(0.5));
		}
}

TEST(KnownAnswers, KEqualsN)
{
	std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, -1, 0};
	pgkm_options o = options(5);
	Result		r = run(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.k, 5);
	EXPECT_EQ(r.inertia, 0.0);
	std::vector<int32_t> l = r.labels;
	std::sort(l.begin(), l.end());
	EXPECT_EQ(l, (std::vector<int32_t>{0, 1, 2, 3, 4}));
	for (int c = 0; c < 5; c++)
		EXPECT_EQ(r.sizes[c], 1);
}

TEST(KnownAnswers, KEqualsOne)
{
	std::vector<float> x = {1, 10, 3, 20, 5, 30};
	pgkm_options o = options(1);
	Result		r = run(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_DOUBLE_EQ(r.centroids[0], 3.0);
	EXPECT_DOUBLE_EQ(r.centroids[1], 20.0);
	EXPECT_DOUBLE_EQ(r.inertia, 4 + 100 + 4 + 100);
}

/* ---- policies ---- */
TEST(Policies, FewerDistinctPointsThanK)
{
	/* three distinct points, each repeated */
	std::vector<float> x;
	for (int rep = 0; rep < 4; rep++)
		for (float v : {0.f, 0.f, 5.f, 5.f, -3.f, 2.f})
			x.push_back(v);
	for (int init : {PGKM_INIT_KMEANSPP, PGKM_INIT_RANDOM})
	{
		pgkm_options o = options(5);
		o.init = init;
		Result		r = run(x, 2, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.k, 3);
		EXPECT_EQ(r.k_requested, 5);
		EXPECT_EQ(r.inertia, 0.0);
		ASSERT_EQ(r.sizes.size(), 3u);
		for (int c = 0; c < 3; c++)
			EXPECT_EQ(r.sizes[c], 4);
		for (int32_t l : r.labels)
			EXPECT_LT(l, 3);
	}
	/* all rows equal: one cluster */
	std::vector<float> same(40, 1.5f);
	pgkm_options o = options(3);
	Result		r = run(same, 4, o);
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_EQ(r.k, 1);
	EXPECT_EQ(r.sizes[0], 10);
}

TEST(Policies, GivenCentroidsOnFewerDistinctPointsDropUnfillableClusters)
{
	std::vector<float> x;
	for (int rep = 0; rep < 4; rep++)
		for (float v : {0.f, 0.f, 5.f, 5.f, -3.f, 2.f})
			x.push_back(v);
	/* five given centroids, two of them duplicates: only three clusters can hold points */
	std::vector<double> init = {0, 0, 5, 5, -3, 2, 0, 0, 5, 5};
	for (double tol : {1e-4, 0.0})
	{
		pgkm_options o = options(5);
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
		o.tol = tol;
		Result		r = run(x, 2, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.k, 3);
		EXPECT_EQ(r.k_requested, 5);
		EXPECT_EQ(r.inertia, 0.0);
		EXPECT_EQ(r.sizes, (std::vector<int64_t>{4, 4, 4}));
		EXPECT_EQ(r.centroids, (std::vector<double>{0, 0, 5, 5, -3, 2}));
		EXPECT_EQ(r.init, (std::vector<double>{0, 0, 5, 5, -3, 2}));
		EXPECT_EQ(r.labels[0], 0);
		EXPECT_EQ(r.labels[1], 1);
		EXPECT_EQ(r.labels[2], 2);
		EXPECT_GE(r.repairs, 1);
		EXPECT_LT(r.iterations, 10);
	}
}

TEST(Policies, EmptyClusterIsSplitFromTheLargest)
{
	auto		x = blobs(3000, 2, 3, 31, 1.0);
	/* third centroid far away from all data: it gets no point in iteration 1 */
	std::vector<double> init = {x[0], x[1], x[2], x[3], 1e4, 1e4};
	pgkm_options o = options(3);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.tol = 0;					/* run to strict convergence */
	Result		r = run(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.converged, 1);
	EXPECT_GE(r.repairs, 1);
	EXPECT_EQ(r.k, 3);
	for (int c = 0; c < 3; c++)
		EXPECT_GT(r.sizes[c], 0) << "cluster " << c;
	EXPECT_EQ(r.init, init);
	/* the repaired run ends at a Lloyd fixed point: centroids are the means */
	std::vector<double> m(6, 0.0);
	for (size_t i = 0; i < r.labels.size(); i++)
		for (int j = 0; j < 2; j++)
			m[r.labels[i] * 2 + j] += x[i * 2 + j] / (double) r.sizes[r.labels[i]];
	for (int i = 0; i < 6; i++)
		EXPECT_NEAR(r.centroids[i], m[i], 1e-9);
}

/* ---- interrupts ---- */
namespace
{
struct Deadline
{
	std::chrono::steady_clock::time_point at;
	std::atomic<int> calls {0};
	std::chrono::steady_clock::time_point fired {};
};
int
deadline_interrupt(void *ctx)
{
	auto	   *dl = (Deadline *) ctx;
	dl->calls++;
	auto		now = std::chrono::steady_clock::now();
	if (now >= dl->at)
	{
		if (dl->fired == std::chrono::steady_clock::time_point {})
			dl->fired = now;
		return 1;
	}
	return 0;
}
}							/* namespace */

TEST(Interrupts, StopsPromptlyDuringIterations)
{
	const int64_t n = 300000;
	auto		x = blobs(n, 16, 20, 5, 3.0);
	pgkm_options o = options(64);
	o.tol = 0;
	o.max_iter = 1000;
	o.n_threads = 2;
	Deadline	dl;
	dl.at = std::chrono::steady_clock::now() + std::chrono::hours(1);
	char		err[256];
	pgkm_run   *h = nullptr;
	ASSERT_EQ(pgkm_run_create(x.data(), n, 16, &o, deadline_interrupt, &dl, &h, err, sizeof(err)), PGKM_OK);
	pgkm_progress p;
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* init */
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* iteration 1 */
	/* fire mid-way through a later pass (a pass over 300k x 16 x 64 takes tens of ms) */
	dl.at = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
	int			st;
	while ((st = pgkm_run_step(h, &p, err, sizeof(err))) == PGKM_OK)
		;
	auto		end = std::chrono::steady_clock::now();
	EXPECT_EQ(st, PGKM_INTERRUPTED) << err;
	EXPECT_STREQ(err, "k-means interrupted");
	double		latency = std::chrono::duration<double>(end - dl.fired).count();
	RecordProperty("interrupt_latency_ms", (int) (latency * 1000));
	/* generous bound: the design target is < 100 ms; not a performance assertion */
	EXPECT_LT(latency, 1.0);
	pgkm_run_free(h);
}

TEST(Interrupts, StopsDuringCreateAndInit)
{
	auto		x = blobs(50000, 8, 5, 6);
	pgkm_options o = options(32);
	Deadline	dl;
	dl.at = std::chrono::steady_clock::now();	/* already due */
	char		err[256];
	pgkm_run   *h = nullptr;
	int			st = pgkm_run_create(x.data(), 50000, 8, &o, deadline_interrupt, &dl, &h, err, sizeof(err));
	EXPECT_EQ(st, PGKM_INTERRUPTED);
	EXPECT_EQ(h, nullptr);
	/* a run interrupted mid-way refuses further steps with a clear error */
	Deadline	later;
	later.at = std::chrono::steady_clock::now() + std::chrono::hours(1);
	ASSERT_EQ(pgkm_run_create(x.data(), 50000, 8, &o, deadline_interrupt, &later, &h, err, sizeof(err)), PGKM_OK);
	later.at = std::chrono::steady_clock::now();
	pgkm_progress p;
	EXPECT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_INTERRUPTED);
	EXPECT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_ERR_INVALID);
	pgkm_result res;
	EXPECT_EQ(pgkm_run_result(h, &res), PGKM_ERR_INVALID);
	pgkm_run_free(h);
}

/* ---- argument errors ---- */
TEST(Errors, InvalidArgumentsAreRejectedWithAClearMessage)
{
	std::vector<float> x = {0, 0, 1, 1, 2, 2, 3, 3};
	auto		expect = [&](pgkm_options o, int32_t d, const char *fragment, std::vector<float> data) {
		Result		r = run(data, d, o);
		EXPECT_EQ(r.status, PGKM_ERR_INVALID) << fragment;
		EXPECT_NE(r.err.find(fragment), std::string::npos) << "message: " << r.err;
	};
	pgkm_options o = options(2);
	o.k = 0;
	expect(o, 2, "k must be at least 1 (got 0)", x);
	o.k = 5;
	expect(o, 2, "k (5) must not exceed the number of rows (4)", x);
	o = options(2);
	expect(o, 0, "number of features must be at least 1", x);
	o.max_iter = 0;
	expect(o, 2, "max_iter must be at least 1", x);
	o = options(2);
	o.tol = -1;
	expect(o, 2, "tol must be a finite number >= 0", x);
	o.tol = NAN;
	expect(o, 2, "tol must be a finite number >= 0", x);
	o = options(2);
	o.n_init = 0;
	expect(o, 2, "n_init must be at least 1", x);
	o = options(2);
	o.init = PGKM_INIT_GIVEN;
	expect(o, 2, "initial_centroids", x);
	o = options(2);
	o.method = 9;
	expect(o, 2, "valid: lloyd", x);
	std::vector<float> bad = x;
	bad[5] = NAN;
	expect(options(2), 2, "row 2 (0-based) feature 1 (0-based) is NaN", bad);
	bad[5] = -INFINITY;
	expect(options(2), 2, "is -Infinity", bad);
	/* empty data */
	char		err[128];
	pgkm_run   *h = nullptr;
	pgkm_options ok = options(1);
	EXPECT_EQ(pgkm_run_create(x.data(), 0, 2, &ok, nullptr, nullptr, &h, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_STREQ(err, "no rows to cluster");
	EXPECT_EQ(pgkm_run_create(x.data(), 4, 2, nullptr, nullptr, nullptr, &h, err, sizeof(err)), PGKM_ERR_INVALID);
	/* a tiny message buffer is still terminated */
	char		tiny[8];
	EXPECT_EQ(pgkm_run_create(x.data(), 0, 2, &ok, nullptr, nullptr, &h, tiny, sizeof(tiny)), PGKM_ERR_INVALID);
	EXPECT_EQ(strlen(tiny), 7u);
}

/* ---- GPU plugin failure paths (no GPU here) ---- */
TEST(GpuPlugin, MissingPluginAutoFallsBackGpuFails)
{
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	pgkm_options o = options(2);
	o.device = PGKM_DEVICE_AUTO;
	o.gpu_plugin_path = "/nonexistent/pg_kmeans_cuda.so";
	Result		r = run(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "cpu");
	EXPECT_NE(r.fallback.find("/nonexistent/pg_kmeans_cuda.so"), std::string::npos) << r.fallback;
	o.device = PGKM_DEVICE_GPU;
	r = run(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_NE(r.err.find("cannot load GPU engine plugin"), std::string::npos) << r.err;
	o.gpu_plugin_path = nullptr;
	r = run(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_NE(r.err.find("no GPU engine plugin path"), std::string::npos) << r.err;
	o.device = PGKM_DEVICE_CPU;
	o.gpu_plugin_path = "/nonexistent/pg_kmeans_cuda.so";
	r = run(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_EQ(r.fallback, "");	/* device=cpu is not a fallback */
	char		info[256];
	EXPECT_EQ(pgkm_gpu_available("/nonexistent/pg_kmeans_cuda.so", info, sizeof(info)), 0);
	EXPECT_NE(std::string(info).find("cannot load"), std::string::npos);
	EXPECT_EQ(pgkm_gpu_available(nullptr, info, sizeof(info)), 0);
}

TEST(GpuPlugin, LibraryWithoutEntryPointIsRefused)
{
	/* a real shared library that is not our plugin */
	const char *lib = nullptr;
	for (const char *p : {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"})
		if (FILE *f = fopen(p, "r"))
		{
			fclose(f);
			lib = p;
			break;
		}
	ASSERT_NE(lib, nullptr);
	char		info[256];
	EXPECT_EQ(pgkm_gpu_available(lib, info, sizeof(info)), 0);
	EXPECT_NE(std::string(info).find("does not export pgkm_cuda_get_api"), std::string::npos) << info;
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	pgkm_options o = options(2);
	o.device = PGKM_DEVICE_GPU;
	o.gpu_plugin_path = lib;
	Result		r = run(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_NE(r.err.find("does not export"), std::string::npos);
}

/* ---- small helpers of the API ---- */
TEST(Api, NearestAndEstimate)
{
	std::vector<double> c = {0, 0, 10, 10, 5, 5};
	double		x[2] = {6, 4.5}, d2v = -1;
	EXPECT_EQ(pgkm_nearest(c.data(), 3, 2, x, &d2v), 2);
	EXPECT_DOUBLE_EQ(d2v, 1 + 0.25);
	double		tie[2] = {2.5, 2.5};
	EXPECT_EQ(pgkm_nearest(c.data(), 3, 2, tie, nullptr), 0);	/* lowest index on ties */
	pgkm_options o = options(64);
	int64_t		small = pgkm_estimate_bytes(1000, 16, &o);
	int64_t		big = pgkm_estimate_bytes(1000000, 16, &o);
	EXPECT_GT(small, 0);
	EXPECT_GE(big, 1000000LL * (4 + 8));	/* at least labels + distances */
	EXPECT_GT(big, small);
	EXPECT_LT(big, 1000000LL * 16 * 4 * 2);	/* well below twice the data itself */
	pgkm_options def;
	pgkm_options_default(&def);
	EXPECT_EQ(def.max_iter, 300);
	EXPECT_EQ(def.tol, 1e-4);
	EXPECT_EQ(def.n_init, 1);
	EXPECT_EQ(def.init, PGKM_INIT_KMEANSPP);
	EXPECT_EQ(def.device, PGKM_DEVICE_AUTO);
	EXPECT_EQ(def.deterministic, 1);
}

/* ---- both distance paths on the same shapes ---- */
extern "C" int32_t pgkm_internal_set_gemm_min_d(int32_t d);

namespace
{
/* Restores the process-wide crossover when a test ends. */
struct GemmCrossover
{
	int32_t		saved;
	explicit GemmCrossover(int32_t d) : saved(pgkm_internal_set_gemm_min_d(d)) {}
	~GemmCrossover() { pgkm_internal_set_gemm_min_d(saved); }
};
}							/* namespace */

TEST(DistancePaths, DirectAndGemmBothMatchTheReference)
{
	for (int d : {2, 16})
		for (int32_t cross : {1, 1 << 30})	/* 1: always GEMM; huge: always direct */
		{
			GemmCrossover g(cross);
			const int	k = 9;
			auto		x = blobs(4000, d, k, 300 + d, 1.5);
			/* a large common offset: cancellation in ||x||^2 - 2 x.c + ||c||^2 without centring */
			for (auto &v : x)
				v += 1000.0f;
			auto		init = pick_rows(x, d, k, 99);
			pgkm_options o = options(k);
			o.init = PGKM_INIT_GIVEN;
			o.initial_centroids = init.data();
			Result		r = run(x, d, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			Ref			ref = ref_lloyd(x, d, init, o.max_iter, o.tol);
			EXPECT_EQ(r.iterations, ref.iterations) << "d " << d << " crossover " << cross;
			int64_t		mismatched = 0;
			for (size_t i = 0; i < r.labels.size(); i++)
				if (r.labels[i] != ref.labels[i])
				{
					mismatched++;
					double		a = d2(&x[i * d], &ref.centers[(size_t) r.labels[i] * d], d);
					double		b = d2(&x[i * d], &ref.centers[(size_t) ref.labels[i] * d], d);
					ADD_FAILURE() << "row " << i << " engine " << r.labels[i] << " (" << a << ") ref "
						<< ref.labels[i] << " (" << b << ")";
				}
			EXPECT_EQ(mismatched, 0) << "d " << d << " crossover " << cross;
			for (size_t i = 0; i < ref.centers.size(); i++)
				ASSERT_NEAR(r.centroids[i], ref.centers[i], 1e-5);
			EXPECT_NEAR(r.inertia, ref.inertia, 1e-6 * ref.inertia);
		}
}

/*
 * The direct kernel (one lane per row, compare + blend over centroids) against
 * a scalar float argmin in the same summation order: integer grid data and
 * repeated / equidistant centroids make exact ties, which must go to the
 * lowest index; row counts that are not a multiple of the row block and
 * k <= 8, k not a multiple of 8, and the unrolled (d <= 4) and generic d.
 */
TEST(DistancePaths, DirectArgminTiesGoToTheLowestIndex)
{
	GemmCrossover g(1 << 30);	/* always direct */
	std::mt19937_64 gen(5);
	for (int d : {1, 2, 3, 6})
		for (int k : {1, 3, 8, 9, 33})
		{
			const int64_t n = 1000 + 7;
			std::vector<float> x((size_t) n * d);
			for (auto &v : x)
				v = (float) (gen() % 9) - 4.0f;
			std::vector<double> c((size_t) k * d);
			for (int ci = 0; ci < k; ci++)
				for (int j = 0; j < d; j++)	/* every third centroid repeats the one before */
					c[(size_t) ci * d + j] = (ci % 3 == 2) ? c[(size_t) (ci - 1) * d + j]
						: (double) (gen() % 9) - 4.0 + (gen() % 2) * 0.5;
			std::vector<double> mean(d, 0.0);
			pgkm::ThreadPool pool(2, nullptr, nullptr);
			auto		be = pgkm::make_cpu_device(x.data(), n, d, k, mean.data(), &pool);
			be->set_centroids(c.data(), k);
			std::vector<int32_t> labels(n, -1);
			std::vector<double> dist2(n);
			std::vector<int64_t> sizes(k);
			double		inertia = 0;
			be->assign(labels.data(), dist2.data(), sizes.data(), &inertia);
			int64_t		ties = 0, wrong = 0;
			for (int64_t i = 0; i < n; i++)
			{
				float		best = std::numeric_limits<float>::infinity();
				int			bi = 0, at_best = 0;
				for (int ci = 0; ci < k; ci++)
				{
					float		s = 0;
					for (int j = 0; j < d; j++)
					{
						float		t = x[(size_t) i * d + j] - (float) c[(size_t) ci * d + j];
						s += t * t;
					}
					if (s < best)
					{
						best = s;
						bi = ci;
						at_best = 1;
					}
					else if (s == best)
						at_best++;
				}
				ties += at_best > 1;
				wrong += labels[i] != bi;
			}
			EXPECT_EQ(wrong, 0) << "d " << d << " k " << k;
			if (k >= 3)
				EXPECT_GT(ties, 0) << "d " << d << " k " << k;	/* the data does make ties */
		}
}

TEST(DistancePaths, KmeansppFindsExactlyTheDistinctPointsAtLargeD)
{
	/* 7 distinct rows of d = 64 around a large offset, each repeated 50 times */
	const int	d = 64, distinct = 7;
	auto		base = blobs(distinct, d, distinct, 17, 3.0);
	std::vector<float> x;
	for (int rep = 0; rep < 50; rep++)
		for (int i = 0; i < distinct; i++)
			for (int j = 0; j < d; j++)
				x.push_back(base[(size_t) i * d + j] + 500.0f);
	for (int32_t cross : {1, 1 << 30})
	{
		GemmCrossover g(cross);
		pgkm_options o = options(12);
		Result		r = run(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.k, distinct);
		EXPECT_EQ(r.inertia, 0.0);
		for (int c = 0; c < r.k; c++)
			EXPECT_EQ(r.sizes[c], 50);
	}
}

TEST(DistancePaths, KmeansppIsDeterministicAcrossThreadsWithGemm)
{
	auto		x = blobs(9000, 40, 10, 8, 2.0);
	pgkm_options o = options(25);
	o.seed = 77;
	o.max_iter = 5;
	o.n_threads = 1;
	Result		a = run(x, 40, o);
	o.n_threads = 3;
	Result		b = run(x, 40, o);
	ASSERT_EQ(a.status, PGKM_DONE);
	EXPECT_EQ(a.init, b.init);
	EXPECT_EQ(a.centroids, b.centroids);
	EXPECT_EQ(a.inertia, b.inertia);
}

/*
 * k-means++ skips rows that the triangle inequality proves unaffected by a
 * candidate; skipping must change nothing: the same centres bit for bit as
 * computing every distance, at small d (winner's distances recomputed) and
 * large d (kept from the trial pass), for 1 and 3 threads, and the potential
 * (progress inertia of the init step) equals a brute-force fp64 check.
 */
TEST(DistancePaths, KmeansppPruningChangesNothing)
{
	for (int d : {3, 40})
	{
		auto		x = blobs(20000, d, 40, 31 + d, 0.5);
		pgkm_options o = options(60);
		o.seed = 9;
		o.max_iter = 1;
		std::vector<Result> rs;
		for (int32_t prune : {1, 0})
			for (int32_t threads : {1, 3})
			{
				int32_t		saved = pgkm_internal_set_kpp_pruning(prune);
				o.n_threads = threads;
				rs.push_back(run(x, d, o));
				pgkm_internal_set_kpp_pruning(saved);
				ASSERT_EQ(rs.back().status, PGKM_DONE) << rs.back().err;
			}
		for (size_t i = 1; i < rs.size(); i++)
		{
			EXPECT_EQ(rs[i].init, rs[0].init) << "d " << d << " run " << i;
			EXPECT_EQ(rs[i].progress[0].inertia, rs[0].progress[0].inertia) << "d " << d;
		}
		/* the potential is the sum of each row's squared distance to its nearest centre */
		const auto &c = rs[0].init;
		const int	k = (int) (c.size() / d);
		double		pot = 0;
		for (size_t i = 0; i < x.size() / d; i++)
		{
			double		b = std::numeric_limits<double>::infinity();
			for (int q = 0; q < k; q++)
				b = std::min(b, d2(&x[i * d], &c[(size_t) q * d], d));
			pot += b;
		}
		EXPECT_NEAR(rs[0].progress[0].inertia, pot, 1e-5 * pot) << "d " << d;
	}
}

/* ---- the GPU driver path, through a CPU stand-in plugin (tests/unit/fake_cuda_plugin) ---- */
#ifdef PGKM_FAKE_CUDA_PLUGIN
namespace
{
/* Sets an environment switch of the fake plugin for the scope. */
struct EnvSwitch
{
	const char *name;
	explicit EnvSwitch(const char *n) : name(n) { setenv(n, "1", 1); }
	~EnvSwitch() { unsetenv(name); }
};

pgkm_options
gpu_options(int32_t k, int32_t device = PGKM_DEVICE_GPU)
{
	pgkm_options o = options(k);
	o.device = device;
	o.gpu_plugin_path = PGKM_FAKE_CUDA_PLUGIN;
	return o;
}

/* The stand-in needs no NVIDIA driver: skip the loader's driver check in this binary. */
extern "C" const char *pgkm_internal_set_driver_library(const char *soname);
const std::string driver_check_saved = pgkm_internal_set_driver_library("");
}							/* namespace */

/* With no driver the plugin (and the cuBLAS it links) is never loaded. */
TEST(GpuDriver, NoDriverMeansNoPluginLoad)
{
	pgkm_internal_set_driver_library("libpgkm-no-such-driver.so.1");
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	Result		r = run(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "cpu");
	EXPECT_EQ(r.fallback, "no NVIDIA driver (libpgkm-no-such-driver.so.1 cannot be loaded)");
	r = run(x, 2, gpu_options(2));
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_EQ(dlopen(PGKM_FAKE_CUDA_PLUGIN, RTLD_NOW | RTLD_NOLOAD), nullptr);
	pgkm_internal_set_driver_library("");
}

/* Runs first in this group: the loader caches a plugin only once its probe succeeded. */
TEST(GpuDriver, ProbeAndSetupFailures)
{
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	{
		EnvSwitch	fail("PGKM_FAKE_PROBE_FAIL");
		Result		r = run(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.device, "cpu");
		EXPECT_EQ(r.fallback, "no usable GPU: fake: no CUDA device");
		r = run(x, 2, gpu_options(2));
		EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
		EXPECT_EQ(r.err, "no usable GPU: fake: no CUDA device");
		char		info[256];
		EXPECT_EQ(pgkm_gpu_available(PGKM_FAKE_CUDA_PLUGIN, info, sizeof(info)), 0);
		EXPECT_STREQ(info, "no usable GPU: fake: no CUDA device");
	}
	char		info[256];
	EXPECT_EQ(pgkm_gpu_available(PGKM_FAKE_CUDA_PLUGIN, info, sizeof(info)), 1);
	EXPECT_STREQ(info, "Fake GPU (CPU stand-in), 1 GiB");
	{
		EnvSwitch	fail("PGKM_FAKE_CREATE_FAIL");
		Result		r = run(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.device, "cpu");
		EXPECT_NE(r.fallback.find("fake: out of device memory"), std::string::npos) << r.fallback;
		r = run(x, 2, gpu_options(2));
		EXPECT_EQ(r.status, PGKM_ERR_NOMEM);
		EXPECT_NE(r.err.find("fake: out of device memory"), std::string::npos) << r.err;
	}
	Result		r = run(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_EQ(r.device, "gpu");
	EXPECT_EQ(r.detail, "Fake GPU (CPU stand-in), 1 GiB");
	EXPECT_EQ(r.fallback, "");
}

TEST(GpuDriver, SameResultAsCpuFromTheSameInitialCentroids)
{
	const int	d = 5, k = 8;
	auto		x = blobs(3000, d, k, 404, 1.5);
	auto		init = pick_rows(x, d, k, 5);
	pgkm_options o = gpu_options(k);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	Result		g = run(x, d, o);
	o.device = PGKM_DEVICE_CPU;
	Result		c = run(x, d, o);
	ASSERT_EQ(g.status, PGKM_DONE) << g.err;
	ASSERT_EQ(c.status, PGKM_DONE) << c.err;
	EXPECT_EQ(g.device, "gpu");
	EXPECT_EQ(c.device, "cpu");
	EXPECT_GT(g.iterations, 2);
	EXPECT_EQ(g.iterations, c.iterations);
	EXPECT_EQ(g.converged, c.converged);
	EXPECT_EQ(g.labels, c.labels);
	EXPECT_EQ(g.sizes, c.sizes);
	for (size_t i = 0; i < c.centroids.size(); i++)
		ASSERT_NEAR(g.centroids[i], c.centroids[i], 1e-9);
	EXPECT_NEAR(g.inertia, c.inertia, 1e-9 * c.inertia);
	Ref			ref = ref_lloyd(x, d, init, o.max_iter, o.tol);
	EXPECT_NEAR(g.inertia, ref.inertia, 1e-9 * ref.inertia);
	/* progress reports the plugin's per-iteration numbers */
	ASSERT_EQ(g.progress.size(), c.progress.size());
	for (size_t i = 1; i + 1 < g.progress.size(); i++)
	{
		EXPECT_EQ(g.progress[i].moved, c.progress[i].moved);
		EXPECT_NEAR(g.progress[i].inertia, c.progress[i].inertia, 1e-9 * c.progress[i].inertia);
	}
}

TEST(GpuDriver, EmptyClusterRepairIsTheSameOnBothEngines)
{
	auto		x = blobs(2000, 2, 3, 31, 1.0);
	std::vector<double> init = {x[0], x[1], x[2], x[3], 1e4, 1e4};
	pgkm_options o = gpu_options(3);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.tol = 0;
	Result		g = run(x, 2, o);
	o.device = PGKM_DEVICE_CPU;
	Result		c = run(x, 2, o);
	ASSERT_EQ(g.status, PGKM_DONE) << g.err;
	ASSERT_EQ(c.status, PGKM_DONE);
	EXPECT_GE(g.repairs, 1);
	EXPECT_EQ(g.repairs, c.repairs);
	EXPECT_EQ(g.labels, c.labels);
	for (int i = 0; i < 6; i++)
		EXPECT_NEAR(g.centroids[i], c.centroids[i], 1e-9);
	for (int64_t s : g.sizes)
		EXPECT_GT(s, 0);
}

TEST(GpuDriver, FewerDistinctPointsShrinksK)
{
	std::vector<float> x;
	for (int rep = 0; rep < 5; rep++)
		for (float v : {0.f, 0.f, 5.f, 5.f, -3.f, 2.f})
			x.push_back(v);
	Result		r = run(x, 2, gpu_options(6));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "gpu");
	EXPECT_EQ(r.k, 3);
	EXPECT_EQ(r.k_requested, 6);
	EXPECT_EQ(r.inertia, 0.0);
	for (int64_t s : r.sizes)
		EXPECT_EQ(s, 5);
}

namespace
{
int
flag_interrupt(void *ctx)
{
	return ((std::atomic<int> *) ctx)->load();
}
}							/* namespace */

/* The engine polls nothing itself between plugin calls: only the plugin can see this flag. */
TEST(GpuDriver, InterruptReachesThePlugin)
{
	auto		x = blobs(20000, 4, 8, 3);
	pgkm_options o = gpu_options(8);
	std::atomic<int> flag {0};
	char		err[256];
	pgkm_run   *h = nullptr;
	ASSERT_EQ(pgkm_run_create(x.data(), 20000, 4, &o, flag_interrupt, &flag, &h, err, sizeof(err)), PGKM_OK) << err;
	pgkm_progress p;
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* init */
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* iteration 1 */
	EXPECT_EQ(p.iteration, 1);
	EXPECT_EQ(p.moved, 20000);
	flag = 1;
	EXPECT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_INTERRUPTED);
	pgkm_run_free(h);
}
#endif
