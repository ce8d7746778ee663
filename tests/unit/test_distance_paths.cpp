/*
 * test_distance_paths.cpp: the direct and GEMM distance forms on the same
 * shapes, the direct kernel's ties, and k-means++ (distinct points at large
 * d, determinism with GEMM, exact row skipping).
 */
#include "blobs.h"
#include "engine_run.h"
#include "reference.h"
#include "device.h"
#include "internal_hooks.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

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
			pgkm_options o = cpu_options(k);
			o.init = PGKM_INIT_GIVEN;
			o.initial_centroids = init.data();
			EngineResult r = run_engine(x, d, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			RefResult	ref = ref_lloyd(x, d, init, o.max_iter, o.tol);
			EXPECT_EQ(r.iterations, ref.iterations) << "d " << d << " crossover " << cross;
			int64_t		mismatched = 0;
			for (size_t i = 0; i < r.labels.size(); i++)
				if (r.labels[i] != ref.labels[i])
				{
					mismatched++;
					double		a = sqdist_fp64(&x[i * d], &ref.centers[(size_t) r.labels[i] * d], d);
					double		b = sqdist_fp64(&x[i * d], &ref.centers[(size_t) ref.labels[i] * d], d);
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
			auto		be = pgkm::make_cpu_device(x.data(), n, d, k, mean.data(), nullptr, &pool);
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
			{
				EXPECT_GT(ties, 0) << "d " << d << " k " << k;	/* the data does make ties */
			}
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
		pgkm_options o = cpu_options(12);
		EngineResult r = run_engine(x, d, o);
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
	pgkm_options o = cpu_options(25);
	o.seed = 77;
	o.max_iter = 5;
	o.n_threads = 1;
	EngineResult a = run_engine(x, 40, o);
	o.n_threads = 3;
	EngineResult b = run_engine(x, 40, o);
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
 * Every row (20,000 is above the sample size), so that the potential is reported.
 */
TEST(DistancePaths, KmeansppPruningChangesNothing)
{
	const int64_t saved_sample = pgkm_internal_set_kpp_sample(0, 0);
	for (int d : {3, 40})
	{
		auto		x = blobs(20000, d, 40, 31 + d, 0.5);
		pgkm_options o = cpu_options(60);
		o.seed = 9;
		o.max_iter = 1;
		std::vector<EngineResult> rs;
		for (int32_t prune : {1, 0})
			for (int32_t threads : {1, 3})
			{
				int32_t		saved = pgkm_internal_set_kpp_pruning(prune);
				o.n_threads = threads;
				rs.push_back(run_engine(x, d, o));
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
			double		b;
			nearest_fp64(&x[i * d], c.data(), k, d, &b);
			pot += b;
		}
		EXPECT_NEAR(rs[0].progress[0].inertia, pot, 1e-5 * pot) << "d " << d;
	}
	pgkm_internal_set_kpp_sample(saved_sample, -1);
}
