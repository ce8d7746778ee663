/*
 * test_pruned_exactness.cpp: the pruned assignment methods (elkan, hamerly,
 * yinyang, sort, auto) return exactly the label of the contract, the fp64
 * argmin with the lowest index on ties (nearest_fp64 of tests/common), under
 * any sequence of centroid changes; and the interval arithmetic behind them
 * (exact_bounds.h) contains the true distance.
 */
#include "blobs.h"
#include "reference.h"

#include "bounded_assign.h"
#include "cpu_assign.h"
#include "exact_bounds.h"
#include "float_kernels.h"
#include "internal_hooks.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

static const int32_t kPruned[] = {PGKM_METHOD_ELKAN, PGKM_METHOD_HAMERLY, PGKM_METHOD_YINYANG,
								  PGKM_METHOD_SORT, PGKM_METHOD_AUTO};

/*
 * One pass of a method over all rows in chunks (two workers' scratch used
 * alternately); *counts gets the pass's counts ('auto' says which method ran).
 */
static std::vector<int32_t>
pass(pgkm::CpuAssign &m, int64_t n, pgkm::AssignCounts *counts)
{
	std::vector<int32_t> out(n, -1);
	const int64_t chunk = 64;
	m.begin_pass(false);
	for (int64_t r0 = 0, ch = 0; r0 < n; r0 += chunk, ch++)
		m.nearest(r0, std::min(n, r0 + chunk), (int) (ch % 2), out.data() + r0);
	*counts = m.take_counts(-1);
	return out;
}

/* Rows whose label is not the reference's, and how many rows tie exactly in fp64. */
static int64_t
wrong_labels(const std::vector<float> &x, int32_t d, const std::vector<double> &c, int32_t k,
			 const std::vector<int32_t> &labels, int64_t *ties = nullptr)
{
	const int64_t n = (int64_t) x.size() / d;
	int64_t		wrong = 0;
	for (int64_t i = 0; i < n; i++)
	{
		double		best;
		int32_t		b = nearest_fp64(&x[i * d], c.data(), k, d, &best);
		wrong += labels[i] != b;
		if (ties)
			for (int32_t ci = 0; ci < k; ci++)
				if (ci != b && sqdist_fp64(&x[i * d], &c[(size_t) ci * d], d) == best)
				{
					++*ties;
					break;
				}
	}
	return wrong;
}

static std::vector<double>
column_means(const std::vector<float> &x, int32_t d)
{
	const int64_t n = (int64_t) x.size() / d;
	std::vector<double> m(d, 0.0);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			m[j] += x[i * d + j];
	for (double &v : m)
		v /= (double) n;
	return m;
}

/* The CpuAssign of a method over x (column means as the CPU device gives them). */
static std::unique_ptr<pgkm::CpuAssign>
make_method(int32_t method, const std::vector<float> &x, int32_t d, int32_t kmax,
			pgkm::ThreadPool *pool)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = kmax;
	o.method = method;
	std::vector<double> mean = column_means(x, d);
	return pgkm::make_cpu_assign(&o, x.data(), (int64_t) (x.size() / d), d, kmax, mean.data(), pool);
}

class PrunedAssign : public ::testing::TestWithParam<int32_t>
{
};

class DenseAndPruned : public ::testing::TestWithParam<int32_t>
{
};

/*
 * Integer data and half-integer centroids make exact fp64 ties everywhere;
 * every third centroid repeats the one before (duplicates tie everywhere).
 * The first centroids are replaced before any pass; then they move in small
 * steps (bounds carried), jump (bounds useless), change twice without a pass
 * in between, and k shrinks and grows back: after every change, every row's
 * label is the reference's.
 */
static void
exact_under_changes(int32_t method, bool alternate)
{
	std::mt19937_64 gen(11);
	for (int d : {1, 2, 5, 33})
		for (int kmax : {1, 7, 40})
		{
			const int64_t n = 700;
			std::vector<float> x((size_t) n * d);
			for (auto &v : x)
				v = (float) (gen() % 9) - 4.0f;
			auto		centroids = [&](int k, double scale) {
				std::vector<double> c((size_t) k * d);
				for (int ci = 0; ci < k; ci++)
					for (int j = 0; j < d; j++)
						c[(size_t) ci * d + j] = (ci % 3 == 2) ? c[(size_t) (ci - 1) * d + j]
							: ((double) (gen() % 9) - 4.0 + (gen() % 2) * 0.5) * scale;
				return c;
			};
			pgkm::ThreadPool pool(2, nullptr, nullptr);
			std::vector<double> mean = column_means(x, d);
			pgkm::BoundedAssign *bounded = nullptr;
			std::unique_ptr<pgkm::CpuAssign> m;
			if (alternate)
			{
				auto		b = pgkm::make_bounded_assign(method, x.data(), n, d, kmax, mean.data(), &pool);
				bounded = b.get();
				m = std::move(b);
			}
			else
				m = make_method(method, x, d, kmax, &pool);
			std::vector<double> c = centroids(kmax, 1.0);
			int64_t		ties = 0;
			int			checked = 0, passes = 0;
			auto		check = [&](int k, const char *what) {
				if (bounded)	/* dense, pruned, pruned, dense, ... */
					bounded->set_dense(passes % 3 == 0);
				passes++;
				m->set_centroids(c.data(), k);
				pgkm::AssignCounts counts;
				std::vector<int32_t> got = pass(*m, n, &counts);
				checked += counts.method != PGKM_METHOD_LLOYD;
				EXPECT_EQ(wrong_labels(x, d, c, k, got, &ties), 0)
					<< what << " d " << d << " k " << k << " method " << method;
			};
			m->set_centroids(centroids(kmax, 2.0).data(), kmax);	/* replaced before the first pass */
			check(kmax, "first");
			for (int step = 0; step < 4; step++)
			{
				for (double &v : c)
					v += ((double) (gen() % 5) - 2.0) * 0.125;	/* small exact moves keep ties */
				check(kmax, "drift");
			}
			c = centroids(kmax, 1.0);
			check(kmax, "jump");
			m->set_centroids(centroids(kmax, 3.0).data(), kmax);	/* no pass over these */
			for (double &v : c)
				v += 0.5;
			check(kmax, "two changes");
			if (kmax > 2)
			{
				c.resize((size_t) (kmax - 2) * d);
				check(kmax - 2, "fewer centroids");
				c = centroids(kmax, 1.0);
				check(kmax, "k back");
			}
			/*
			 * 'auto' prunes only where its counts say it pays (not on this
			 * data); its dense and pruned passes are checked with alternate.
			 */
			const int	pruned_passes = method == PGKM_METHOD_AUTO ? 0 : 7;
			EXPECT_GE(checked, pruned_passes) << "passes by a pruned method, d " << d;
			if (kmax >= 7)
			{
				EXPECT_GT(ties, 0) << "the data makes exact ties, d " << d;
			}
		}
}

TEST_P(PrunedAssign, ExactLabelsUnderAnyCentroidChange)
{
	exact_under_changes(GetParam(), false);
}

/*
 * The same with dense passes (Lloyd's tiled kernel, its best and runner-up
 * kept as bounds: what 'auto' runs while pruning does not pay) between the
 * pruned ones: a pruned pass after a dense one starts from those bounds.
 */
TEST_P(DenseAndPruned, ExactLabelsAcrossDenseAndPrunedPasses)
{
	exact_under_changes(GetParam(), true);
}

/*
 * Twin centroids 1e-6 apart, rows drawn around one of each pair: the two
 * fp64 distances of a row differ by less than float32 can resolve, with
 * and without a large offset (1e4) in the data. The label is still the
 * fp64 argmin, and the fp64 recheck is what decided it.
 */
TEST_P(PrunedAssign, ExactLabelsOnFloatNearTies)
{
	const int32_t method = GetParam();
	std::mt19937_64 gen(12);
	std::normal_distribution<double> z(0, 1);
	const int32_t d = 8, k = 24;
	const int64_t n = 2000;
	for (double offset : {0.0, 1e4})
	{
		std::vector<double> c((size_t) k * d);
		for (int32_t p = 0; p < k; p += 2)
			for (int32_t j = 0; j < d; j++)
			{
				c[(size_t) p * d + j] = offset + 3 * z(gen);
				c[(size_t) (p + 1) * d + j] = c[(size_t) p * d + j] + 1e-6 * z(gen);
			}
		std::vector<float> x((size_t) n * d);
		for (int64_t i = 0; i < n; i++)
		{
			const double *ci = &c[(size_t) (gen() % k) * d];
			for (int32_t j = 0; j < d; j++)
				x[i * d + j] = (float) (ci[j] + 0.3 * z(gen));
		}
		pgkm::ThreadPool pool(2, nullptr, nullptr);
		auto		m = make_method(method, x, d, k, &pool);
		for (int step = 0; step < 5; step++)
		{
			m->set_centroids(c.data(), k);
			pgkm::AssignCounts counts;
			std::vector<int32_t> got = pass(*m, n, &counts);
			EXPECT_EQ(wrong_labels(x, d, c, k, got), 0) << "offset " << offset << " step " << step;
			if (counts.method != PGKM_METHOD_LLOYD)
			{
				EXPECT_GT(counts.exact, n / 4) << "near-ties went to the fp64 recheck";
			}
			for (auto &v : c)
				v += 1e-9 * z(gen);	/* drift far below float resolution */
		}
	}
}

INSTANTIATE_TEST_SUITE_P(Methods, PrunedAssign, ::testing::ValuesIn(kPruned),
						 [](const ::testing::TestParamInfo<int32_t> &p) {
							 return std::string(pgkm_method_name(p.param));
						 });

static const int32_t kBounded[] = {PGKM_METHOD_ELKAN, PGKM_METHOD_HAMERLY, PGKM_METHOD_YINYANG,
								   PGKM_METHOD_SORT};

INSTANTIATE_TEST_SUITE_P(Methods, DenseAndPruned, ::testing::ValuesIn(kBounded),
						 [](const ::testing::TestParamInfo<int32_t> &p) {
							 return std::string(pgkm_method_name(p.param));
						 });

/*
 * The intervals of exact_bounds.h contain the true distance (long double)
 * for float distances from the kernels and for E, on offset data, and the
 * prune rule never separates values whose E are in the wrong order.
 */
TEST(ExactBounds, IntervalsContainTheTrueDistance)
{
	std::mt19937_64 gen(13);
	std::normal_distribution<double> z(0, 1);
	for (int d : {1, 3, 16, 37, 300})
	{
		pgkm::ExactMargins m(d);
		std::vector<float> x(d), xc(d), cf(d);
		std::vector<double> c(d), mean(d);
		for (int trial = 0; trial < 400; trial++)
		{
			const double off = trial % 2 ? 1e4 : 0.0, sc = std::pow(10.0, (double) (trial % 7) - 3);
			for (int j = 0; j < d; j++)
			{
				mean[j] = off + z(gen);
				x[j] = (float) (off + sc * z(gen));
				c[j] = trial % 5 == 0 ? (double) x[j] + 1e-6 * z(gen) : off + sc * z(gen);
			}
			/* the centring of CentroidGeometry, spelled out */
			double		n2 = 0, e2 = 0, r2 = 0;
			for (int j = 0; j < d; j++)
			{
				float		mf = (float) mean[j];
				xc[j] = x[j] - mf;
				n2 += (double) xc[j] * xc[j];
				double		r = c[j] - (double) mf;
				cf[j] = (float) r;
				e2 += ((double) cf[j] - r) * ((double) cf[j] - r);
				r2 += r * r;
			}
			const double ex = m.row_error(std::sqrt(n2));
			const double ec = pgkm::up(m.norm_up(std::sqrt(e2)) + m.norm_up(std::sqrt(r2)) * 0x1p-52 + 0x1p-60);
			long double truth = 0;
			for (int j = 0; j < d; j++)
				truth += ((long double) x[j] - c[j]) * ((long double) x[j] - c[j]);
			truth = std::sqrt(truth);
			float		F = pgkm::fsqdist(xc.data(), cf.data(), d);
			const double e = pgkm::up(ex + ec);
			EXPECT_LE((long double) m.lo_float(F, e), truth) << "d " << d << " trial " << trial;
			EXPECT_GE((long double) m.hi_float(F, e), truth) << "d " << d << " trial " << trial;
			double		E = pgkm::sqdist_exact(x.data(), c.data(), d);
			EXPECT_GE((long double) m.hi_exact(E), truth);
			EXPECT_EQ(E, sqdist_fp64(x.data(), c.data(), d)) << "E is the reference's distance";
		}
	}
}

/*
 * Point 6: GEMM-form values of gemm_rows_block (a block of 16 centroids,
 * up to 8 rows at once) turned into intervals with the row's X^2 from the
 * fp64 sum and from a float sum, on offset data: they contain the true
 * distance, and the cut of a threshold t never drops a value whose true
 * distance is t or less.
 */
TEST(ExactBounds, GemmFormIntervalsContainTheTrueDistance)
{
	std::mt19937_64 gen(15);
	std::normal_distribution<double> z(0, 1);
	const int32_t B = pgkm::BLOCK;
	int64_t		cuts = 0, values = 0;
	for (int d : {1, 3, 16, 37, 300})
	{
		pgkm::ExactMargins m(d);
		pgkm::GemmMargins gm(d);
		for (int trial = 0; trial < 60; trial++)
		{
			const double off = trial % 2 ? 1e4 : 0.0, sc = std::pow(10.0, (double) (trial % 7) - 3);
			const int	nr = 1 + trial % pgkm::GEMM_ROWS;
			std::vector<double> mean(d), c((size_t) B * d);
			std::vector<float> x((size_t) nr * d), xc((size_t) nr * d), block((size_t) d * B), cn(B);
			std::vector<double> ec(B);
			for (int j = 0; j < d; j++)
				mean[j] = off + z(gen);
			for (int r = 0; r < nr; r++)
				for (int j = 0; j < d; j++)
				{
					x[(size_t) r * d + j] = (float) (off + sc * z(gen));
					xc[(size_t) r * d + j] = x[(size_t) r * d + j] - (float) mean[j];
				}
			double		cmax = 0;
			for (int q = 0; q < B; q++)
			{
				double		e2 = 0, r2 = 0, f2 = 0;
				float		nf = 0;
				for (int j = 0; j < d; j++)
				{
					c[(size_t) q * d + j] = q % 4 == 0 ? (double) x[j] + 1e-6 * z(gen) : off + sc * z(gen);
					const double r = c[(size_t) q * d + j] - (double) (float) mean[j];
					const float f = (float) r;
					block[(size_t) j * B + q] = f;
					e2 += ((double) f - r) * ((double) f - r);
					r2 += r * r;
					f2 += (double) f * f;
					nf += f * f;
				}
				cn[q] = nf;
				cmax = std::max(cmax, f2);
				ec[q] = pgkm::up(m.norm_up(std::sqrt(e2)) + m.norm_up(std::sqrt(r2)) * 0x1p-52 + 0x1p-60);
			}
			gm.set_c(m.norm_up(std::sqrt(cmax)));
			std::vector<float> V((size_t) nr * B), mins(nr);
			std::vector<const float *> xs(nr);
			std::vector<float *> outs(nr), mp(nr);
			for (int r = 0; r < nr; r++)
			{
				xs[r] = &xc[(size_t) r * d];
				outs[r] = &V[(size_t) r * B];
				mp[r] = &mins[r];
			}
			pgkm::gemm_rows_block(xs.data(), nr, block.data(), cn.data(), d, outs.data(), mp.data());
			for (int r = 0; r < nr; r++)
			{
				double		n2 = 0;
				float		x2f = 0;
				for (int j = 0; j < d; j++)
				{
					const float v = xc[(size_t) r * d + j];
					n2 += (double) v * v;
					x2f += v * v;
				}
				const pgkm::GemmRow rows[2] = {gm.row_exact(n2, m.row_error(std::sqrt(n2))),
											   gm.row_float(x2f)};
				EXPECT_EQ(mins[r], *std::min_element(&V[(size_t) r * B], &V[(size_t) r * B + B]));
				for (int q = 0; q < B; q++)
				{
					long double truth = 0;
					for (int j = 0; j < d; j++)
					{
						const long double t = (long double) x[(size_t) r * d + j] - c[(size_t) q * d + j];
						truth += t * t;
					}
					truth = std::sqrt(truth);
					const float v = V[(size_t) r * B + q];
					for (const pgkm::GemmRow &g : rows)
					{
						values++;
						const double e = pgkm::up(g.ex + ec[q]);
						EXPECT_LE((long double) gm.lo(g, v, e), truth) << "d " << d << " trial " << trial;
						EXPECT_GE((long double) gm.hi(g, v, e), truth) << "d " << d << " trial " << trial;
						/* no cut at a threshold the true distance reaches */
						const double t = std::nextafter((double) truth, 1e300);
						EXPECT_LE(v, gm.vcut(g, t, e)) << "d " << d << " trial " << trial;
						cuts += v > gm.vcut(g, 0.5 * (double) truth, e);
					}
				}
			}
		}
	}
	/* the cut is tight enough to decide most values at half their distance */
	EXPECT_GT(cuts, values / 2) << cuts << " of " << values;
}

/* Lower bounds kept in float never exceed the double they come from. */
TEST(ExactBounds, FloatRoundingIsOutward)
{
	std::mt19937_64 gen(14);
	for (int i = 0; i < 100000; i++)
	{
		double		v = std::ldexp((double) (gen() >> 11), -53 + (int) (gen() % 200) - 100);
		EXPECT_LE((double) pgkm::to_float_down(v), v);
		EXPECT_GE((double) pgkm::to_float_up(v), v);
		float		l = (float) v, s = (float) (v * ((gen() % 1000) / 999.0));
		EXPECT_LE((double) pgkm::sub_down_f(l, s), std::max(0.0, (double) l - (double) s));
		EXPECT_LE(pgkm::down(v), v);
		EXPECT_GE(pgkm::up(v), v);
	}
}

/* CPU 'auto' priced from counts while it lives (the same choices on any machine). */
struct CountedAutoPasses
{
	explicit CountedAutoPasses(double bounded_factor = 1.0)
		: old_(pgkm_internal_set_auto_counted_seconds(bounded_factor)) {}
	~CountedAutoPasses() { pgkm_internal_set_auto_counted_seconds(old_); }
	double		old_;
};

/* CPU 'auto' over Wu & Hong's blobs (n rows, d, k), fed one pass at a time. */
struct AutoRun
{
	AutoRun(int64_t rows, int32_t d_, int32_t k_, double s2, uint64_t seed)
		: d(d_), k(k_), x(wu_hong_blobs(rows, d_, k_, s2, seed)), n((int64_t) x.size() / d_),
		  pool(2, nullptr, nullptr), m(make_method(PGKM_METHOD_AUTO, x, d_, k_, &pool)) {}

	/*
	 * One pass with centroids c, every label checked, then its counts with
	 * moved rows said to have moved; last: the run's final assignment.
	 */
	pgkm::AssignCounts pass(const std::vector<double> &c, int64_t moved, const char *what, bool last = false)
	{
		m->set_centroids(c.data(), k);
		m->begin_pass(last);
		std::vector<int32_t> out(n, -1);
		for (int64_t r0 = 0, ch = 0; r0 < n; r0 += 256, ch++)
			m->nearest(r0, std::min(n, r0 + 256), (int) (ch % 2), out.data() + r0);
		EXPECT_EQ(wrong_labels(x, d, c, k, out), 0) << what;
		return m->take_counts(moved);
	}
	/* 0 Lloyd's own, 1 dense, 2 pruned */
	int			kind(const pgkm::AssignCounts &a) const
	{
		return a.distances == -1 ? 0 : a.method == PGKM_METHOD_YINYANG ? 2 : 1;
	}

	int32_t		d, k;
	std::vector<float> x;
	int64_t		n;
	pgkm::ThreadPool pool;
	std::unique_ptr<pgkm::CpuAssign> m;
};

/*
 * 'auto' on the CPU pass by pass, driven through take_counts's moved rows:
 * Lloyd's own passes (counted as -1, every distance) while many rows move,
 * none tried at convergence (moved 0) nor while the try budget is short
 * and rows still move; the first try once rows settle (under 0.5 %) and
 * its price (1.4 Lloyd passes at k = 40) is within a tenth of the run: a
 * dense pass, a sampled one, pruned passes once the sample says they pay,
 * and Lloyd's own again after a pruned pass that lost; no try started by
 * the run's final assignment; every label exact. Passes are priced from
 * their counts (in Lloyd distances), not timed.
 */
TEST(AutoAssign, PlainDensePrunedByMovedRowsAndCounts)
{
	CountedAutoPasses counted;
	AutoRun		ar(6000, 16, 40, 0.01, 31);
	const int64_t n = ar.n;
	const int32_t k = ar.k;
	std::vector<double> c = pick_rows(ar.x, ar.d, k, 32);
	auto		run = [&](int64_t moved, const char *what) { return ar.pass(c, moved, what); };
	pgkm::AssignCounts a = run(n, "first");
	EXPECT_EQ(a.distances, -1) << "Lloyd's own pass";
	a = run(n / 10, "many moved");
	EXPECT_EQ(a.distances, -1) << "Lloyd's own pass while 10 % of the rows move";
	a = run(0, "converged");
	EXPECT_EQ(a.distances, -1);
	for (int p = 0; p < 17; p++)
	{
		a = run(n / 100, "1 % moved: no budget for a try yet");
		EXPECT_EQ(a.distances, -1) << "no try for the last pass of a converged run";
	}
	a = run(1, "settling");
	EXPECT_EQ(a.distances, -1);
	{
		AutoRun		last_run(6000, 16, 40, 0.01, 31);
		for (int64_t moved : {n, n / 10, (int64_t) 0})
			last_run.pass(c, moved, "before");
		for (int p = 0; p < 17; p++)
			last_run.pass(c, n / 100, "before");
		last_run.pass(c, 1, "settling");
		a = last_run.pass(c, 0, "the run's final assignment", true);
		EXPECT_EQ(a.distances, -1) << "a try is not started by the final assignment";
	}
	a = run(0, "settled");
	EXPECT_EQ(a.method, PGKM_METHOD_LLOYD);
	EXPECT_EQ(a.distances, n * k) << "a dense pass once rows settle";
	a = run(0, "dense, sampled");
	EXPECT_EQ(a.distances, n * k);
	a = run(0, "pruned");
	EXPECT_EQ(a.method, PGKM_METHOD_YINYANG) << "unchanged centroids: pruning pays";
	EXPECT_LT(a.distances, n * k / 4);
	c = pick_rows(ar.x, ar.d, k, 33);	/* every bound useless */
	a = run(n / 10, "pruned, lost");
	EXPECT_EQ(a.method, PGKM_METHOD_YINYANG);
	a = run(n / 100, "Lloyd's own again");
	EXPECT_EQ(a.distances, -1);
	a = run(n / 100, "and no budget for another try");
	EXPECT_EQ(a.distances, -1);
}

/*
 * Tries that do not pay stay within the budget: with every pass's
 * centroids new rows (bounds useless) and 1 % of the rows moving, a try
 * comes when the budget covers it, its fair sample (the second dense pass:
 * the first one's bounds are stale after Lloyd's own passes) says no, and
 * Lloyd's own passes follow once its losses exceed the budget. A dense
 * pass is priced at 12 Lloyd distances a row beyond Lloyd's own
 * (auto_assign.cpp), so over P passes the dense ones stay under
 * 0.03 P k / 12, and two for the first try.
 */
TEST(AutoAssign, TriesThatDoNotPayStayWithinTheBudget)
{
	CountedAutoPasses counted;
	AutoRun		ar(3000, 8, 24, 0.3, 41);
	const int64_t n = ar.n;
	const int32_t k = ar.k;
	const int	passes = 600;
	int			dense = 0, pruned = 0, first_try = -1, run = 0, single = 0;
	for (int p = 0; p < passes; p++)
	{
		pgkm::AssignCounts a = ar.pass(pick_rows(ar.x, ar.d, k, 1000 + p), n / 100, "useless bounds");
		dense += a.distances == n * k;
		/* a try's first dense pass samples stale bounds: never a try of one dense pass */
		if (a.distances == n * k)
			run++;
		else
		{
			single += run == 1;
			run = 0;
		}
		pruned += a.method == PGKM_METHOD_YINYANG;
		if (a.distances == n * k && first_try < 0)
			first_try = p;
	}
	EXPECT_GT(first_try, 0) << "no try before the budget covers one";
	EXPECT_GE(dense, 4) << "tries go on";
	EXPECT_LE(dense, 0.03 * passes * k / 12 + 2);
	EXPECT_EQ(pruned, 0) << "every fair sample says no";
	EXPECT_EQ(single, 0) << "a try ended on a stale sample";
}

/*
 * The clock's veto, with each bounded pass timed at its count price plus
 * two Lloyd passes (test hook): the counts say pruning pays on unchanged
 * centroids, the seconds say it does not, so the try ends once its losses
 * pass the budget and the grace, and others stay within them; at the
 * counts' own price the try goes on to the end.
 */
static std::vector<int>
settled_pass_kinds(double bounded_factor, int passes)
{
	CountedAutoPasses counted(bounded_factor);
	AutoRun		ar(6000, 16, 40, 0.01, 31);
	const std::vector<double> c = pick_rows(ar.x, ar.d, ar.k, 32);
	std::vector<int> kinds;
	for (int p = 0; p < passes; p++)
		kinds.push_back(ar.kind(ar.pass(c, p < 3 ? ar.n / 100 : 1, "unchanged centroids")));
	return kinds;
}

TEST(AutoAssign, ClockVetoesTriesThatCountsWouldKeep)
{
	const std::vector<int> counted = settled_pass_kinds(1.0, 120);
	const auto	pruned = std::find(counted.begin(), counted.end(), 2);
	ASSERT_NE(pruned, counted.end()) << "the counts start a try";
	EXPECT_EQ(std::count(pruned, counted.end(), 2), counted.end() - pruned) << "and keep it";
	const std::vector<int> timed = settled_pass_kinds(3.0, 120);
	const auto	first = std::find(timed.begin(), timed.end(), 2);
	ASSERT_NE(first, timed.end()) << "the counts start a try";
	const auto	back = std::find(first, timed.end(), 0);
	ASSERT_NE(back, timed.end()) << "the clock ends it";
	EXPECT_LT(back - first, 10);
	/* each bounded pass loses a Lloyd pass or more: within 3 % of 120 passes and 3 of grace, after the first try */
	EXPECT_LE(std::count_if(back, timed.end(), [](int kind) { return kind != 0; }), 7)
		<< "few tries after it";
}

/*
 * A try's dense passes go on while its losses fit the budget (test hook):
 * with none, the try that settling rows start (1 in 3000 moved) ends at its
 * first fair sample that says no, and no other comes; with no limit, dense
 * passes go on, waiting for the sample to say yes.
 */
static std::vector<int>
auto_pass_kinds(double budget, int passes)
{
	const double old = pgkm_internal_set_auto_try_budget(budget);
	AutoRun		ar(3000, 8, 24, 0.3, 43);
	pgkm_internal_set_auto_try_budget(old);
	std::vector<int> kinds;
	for (int p = 0; p < passes; p++)	/* new centroids each pass: bounds useless */
		kinds.push_back(ar.kind(ar.pass(pick_rows(ar.x, ar.d, ar.k, 2000 + p), 1, "useless bounds")));
	return kinds;
}

TEST(AutoAssign, DensePassesWhileTheBudgetAllows)
{
	CountedAutoPasses counted;
	/*
	 * With no budget, Lloyd's own until a try's price (2.3 Lloyd passes at
	 * k = 24) is within a tenth of the run, then a try (fresh: no sample;
	 * fair: no); with no limit, a try after two timed Lloyd passes.
	 */
	std::vector<int> none(40, 0);
	none[24] = none[25] = 1;
	EXPECT_EQ(auto_pass_kinds(0, 40), none);
	std::vector<int> unlimited(40, 1);
	unlimited[0] = unlimited[1] = unlimited[2] = 0;
	EXPECT_EQ(auto_pass_kinds(1e9, 40), unlimited);
}
