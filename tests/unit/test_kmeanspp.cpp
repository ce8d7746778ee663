/*
 * test_kmeanspp.cpp: the CPU engine's greedy k-means++ against a brute-force
 * fp64 k-means++ written from its definition, drawing from the same seeded
 * stream (rng.h: SplitMix64, the run's derived seed).
 *
 * The data are small integers, so every squared distance and every sum is
 * exact in float and in double: the engine's float D^2, its chunked sums and
 * its pruning cannot change a draw or a pick, and the reference must choose
 * the same rows in the same order, with the same final potential. Shapes: d
 * odd (1, 3, 7, 17, 33), k = 1, k = n, duplicate rows (fewer distinct points
 * than k), 1 to 4 threads, pruning on and off.
 */
#include "engine_run.h"
#include "internal_hooks.h"
#include "kpp_reference.h"
#include "kpp_start.h"
#include "rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace pgkm_test;

namespace
{

/* The engine's k-means++ start (progress step 0) equals the reference's, row for row. */
void
expect_reference_start(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed,
					   int threads, const char *what)
{
	expect_start_is(reference_kmeanspp(x, d, k, pgkm::derive_seed(seed, 0)), x, d, k, seed, threads,
					what);
}

}							/* namespace */

TEST(Kmeanspp, SameRowsAsTheReferenceForOddD)
{
	for (int32_t d : {1, 3, 7, 17, 33})
	{
		/* d = 1 has 41 values only: fewer rows keep the distinct points above k */
		const auto	x = integer_rows(d == 1 ? 41 : 700, d, 20, d == 1 ? 41 : 700, 100 + d);
		for (int threads : {1, 3})
			expect_reference_start(x, d, 25, 7 + d, threads, "odd d");
	}
}

TEST(Kmeanspp, SameRowsAsTheReferenceWithPruningOff)
{
	const auto	x = integer_rows(600, 9, 30, 600, 5);
	const int32_t saved = pgkm_internal_set_kpp_pruning(0);
	expect_reference_start(x, 9, 40, 3, 2, "pruning off");
	pgkm_internal_set_kpp_pruning(saved);
	expect_reference_start(x, 9, 40, 3, 2, "pruning on");
}

TEST(Kmeanspp, KEqualsOneIsTheSeededRow)
{
	const auto	x = integer_rows(300, 7, 10, 300, 11);
	for (uint64_t seed : {0u, 1u, 99u})
		expect_reference_start(x, 7, 1, seed, 2, "k = 1");
}

TEST(Kmeanspp, KEqualsNTakesEveryRow)
{
	const int32_t d = 3, n = 60;
	const auto	x = integer_rows(n, d, 50, n, 21);
	expect_reference_start(x, d, n, 4, 2, "k = n");
	pgkm_options o = cpu_options(n);
	o.seed = 4;
	o.max_iter = 1;
	EngineResult r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	/* every row once: as sets of rows, the start is the data */
	std::vector<std::vector<double>> got, want;
	for (int i = 0; i < n; i++)
	{
		got.emplace_back(r.init.begin() + i * d, r.init.begin() + (i + 1) * d);
		want.emplace_back(x.begin() + i * d, x.begin() + (i + 1) * d);
	}
	std::sort(got.begin(), got.end());
	std::sort(want.begin(), want.end());
	EXPECT_EQ(got, want);
	EXPECT_EQ(r.inertia, 0.0);
}

TEST(Kmeanspp, DuplicateRowsGiveEachDistinctRowOnce)
{
	/* 12 distinct rows, 480 rows in all, k = 20: the reference stops at 12 */
	const int32_t d = 5;
	const auto	x = integer_rows(480, d, 3, 12, 8);
	const KppReference ref = reference_kmeanspp(x, d, 20, pgkm::derive_seed(6, 0));
	ASSERT_EQ(ref.rows.size(), 12u);
	EXPECT_EQ(ref.potential, 0.0);
	expect_reference_start(x, d, 20, 6, 1, "duplicates");
	expect_reference_start(x, d, 20, 6, 4, "duplicates");
}

TEST(Kmeanspp, SameStartForAnyThreadCount)
{
	/* real-valued rows (no exact sums): threads still change nothing, bit for bit */
	pgkm::SplitMix64 rng(42);
	const int32_t d = 33;
	std::vector<float> x(5000 * d);
	for (size_t i = 0; i < x.size(); i++)
		x[i] = (float) (rng.uniform() * 10.0 + (i / d % 7) * 3.0);
	std::vector<EngineResult> rs;
	for (int threads : {1, 2, 3, 4})
	{
		pgkm_options o = cpu_options(70);
		o.seed = 12;
		o.max_iter = 1;
		o.n_threads = threads;
		rs.push_back(run_engine(x, d, o));
		ASSERT_EQ(rs.back().status, PGKM_DONE) << rs.back().err;
	}
	for (size_t i = 1; i < rs.size(); i++)
	{
		EXPECT_EQ(rs[i].init, rs[0].init) << "threads " << i + 1;
		EXPECT_EQ(rs[i].progress[0].inertia, rs[0].progress[0].inertia) << "threads " << i + 1;
	}
}
