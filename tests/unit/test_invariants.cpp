/*
 * test_invariants.cpp: what holds for every run: labels are the argmin,
 * inertia never increases, results are the same for any thread count and
 * seed-determined, more runs are never worse.
 */
#include "blobs.h"
#include "engine_run.h"
#include "internal_hooks.h"
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

/* ---- invariants ---- */
TEST(Invariants, LabelsAreArgminAndInertiaNeverIncreases)
{
	for (int d : {3, 32})
	{
		const int	k = 20;
		auto		x = blobs(20000, d, 12, 55 + d, 2.5);
		pgkm_options o = cpu_options(k);
		o.seed = 3;
		o.tol = 0;
		o.max_iter = 50;
		EngineResult r = run_engine(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		int64_t		n = (int64_t) x.size() / d;
		int64_t		ties = 0;
		for (int64_t i = 0; i < n; i++)
		{
			double		own = sqdist_fp64(&x[i * d], &r.centroids[(size_t) r.labels[i] * d], d);
			double		best;
			nearest_fp64(&x[i * d], r.centroids.data(), r.k, d, &best);
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
		pgkm_options o = cpu_options(16);
		o.seed = 42;
		o.n_init = 2;
		EngineResult base;
		for (int t : {1, 2, 3, 7})
		{
			o.n_threads = t;
			EngineResult r = run_engine(x, d, o);
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

/*
 * The centroid sums are exact fixed-point integers (centroid_sums.h),
 * whether each worker adds the rows it labels to its own sums (the whole
 * first pass, then only the rows that moved) or the update splits the
 * clusters among the threads (forced here with a zero budget for the
 * workers' sums; k = 3 with 48 features: parts and feature slices): the run
 * follows the fp64 reference Lloyd, which sums the same integers, bit for
 * bit at 1, 2, 7 and 16 threads (k = 40 at d = 2: 15 workers adding rows of
 * 141 chunks; k = 330 at d = 24; n no multiple of the update's block or of
 * a chunk).
 */
TEST(Determinism, UpdateMatchesTheReferenceForAnyThreadCount)
{
	struct Shape
	{
		int32_t		d, k;
	};
	for (const Shape &s : {Shape {48, 3}, Shape {2, 40}, Shape {24, 330}})
	{
		const int64_t n = 9001;
		std::vector<float> x = blobs(n, s.d, 6, 31 + s.d, 2.0, 6.0);
		std::vector<double> init = pick_rows(x, s.d, s.k, 8);
		pgkm_options o = cpu_options(s.k);
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
		o.max_iter = 6;
		o.tol = 0;
		RefResult ref = ref_lloyd(x, s.d, init, o.max_iter, o.tol);
		for (int64_t budget : {(int64_t) -1, (int64_t) 0})
		for (int32_t threads : {1, 2, 7, 16})
		{
			SCOPED_TRACE("d=" + std::to_string(s.d) + " k=" + std::to_string(s.k) + " threads=" +
						 std::to_string(threads) + (budget ? "" : ", split sums"));
			o.n_threads = threads;
			const int64_t was = pgkm_internal_set_worker_sums_budget(budget);
			EngineResult r = run_engine(x, s.d, o);
			pgkm_internal_set_worker_sums_budget(was);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			EXPECT_EQ(r.iterations, ref.iterations);
			EXPECT_EQ(r.labels, ref.labels);
			EXPECT_EQ(r.centroids, ref.centers);	/* bitwise */
		}
	}
}

TEST(Determinism, SameSeedSameResultOtherSeedDiffers)
{
	auto		x = blobs(5000, 4, 6, 9);
	for (int init : {PGKM_INIT_KMEANSPP, PGKM_INIT_RANDOM})
	{
		pgkm_options o = cpu_options(6);
		o.init = init;
		o.seed = 11;
		EngineResult a = run_engine(x, 4, o), b = run_engine(x, 4, o);
		o.seed = 12;
		EngineResult c = run_engine(x, 4, o);
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
	pgkm_options o = cpu_options(15);
	o.seed = 5;
	EngineResult one = run_engine(x, 3, o);
	o.n_init = 4;
	EngineResult four = run_engine(x, 3, o);
	ASSERT_EQ(one.status, PGKM_DONE);
	ASSERT_EQ(four.status, PGKM_DONE);
	EXPECT_LE(four.inertia, one.inertia);
	/* run 0 of n_init = 4 is the n_init = 1 run, so it wins only with the same inertia */
	if (four.best_run == 0)
	{
		EXPECT_EQ(four.inertia, one.inertia);
	}
	EXPECT_EQ(four.progress.front().run, 0);
	EXPECT_EQ(four.progress.back().run, 3);
}

TEST(Determinism, EachRunStartsFromNoLabels)
{
	/* two distinct points: every run starts from the same two centers */
	std::vector<float> x = {0, 0, 0, 0, 0, 0, 4, 4, 4, 4};
	pgkm_options o = cpu_options(2);
	o.n_init = 3;
	o.init = PGKM_INIT_RANDOM;
	EngineResult r = run_engine(x, 2, o);
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
