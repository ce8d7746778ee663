/*
 * test_kmeanspp_sample.cpp: the CPU device's k-means++ on a stratified
 * sample of the rows (src/engine/kmeanspp_sample.cpp).
 *
 * References: the strata rule written out here (row i uniform in the i-th of
 * ns equal strata, drawn from SplitMix64 of seed ^ the GPU plugin's stream
 * constant), the brute-force fp64 k-means++ (kpp_reference.h) run on those
 * rows, and a mixture whose true means are known.
 */
#include "engine_run.h"
#include "init.h"
#include "internal_hooks.h"
#include "kpp_reference.h"
#include "rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

using namespace pgkm_test;

namespace
{

/* The sample written from its definition (cuda/kmeanspp.cu draws the same rows). */
std::vector<int64_t>
strata_reference(int64_t n, int64_t ns, uint64_t seed)
{
	pgkm::SplitMix64 rng(seed ^ 0x5851f42d4c957f2dULL);
	std::vector<int64_t> rows;
	for (int64_t i = 0; i < ns; i++)
	{
		const int64_t lo = i * n / ns, hi = (i + 1) * n / ns;
		rows.push_back(lo + (int64_t) (rng.next() % (uint64_t) (hi - lo)));
	}
	return rows;
}

EngineResult
start_of(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed, int threads)
{
	pgkm_options o = cpu_options(k);
	o.seed = seed;
	o.max_iter = 1;
	o.n_threads = threads;
	return run_engine(x, d, o);
}

}							/* namespace */

TEST(KmeansppSample, SizeIsRowsPerCenterWithAFloorAtMostN)
{
	EXPECT_EQ(pgkm::kpp_sample_size(1000000, 8), 16384);
	EXPECT_EQ(pgkm::kpp_sample_size(1000000, 1024), 32768);
	EXPECT_EQ(pgkm::kpp_sample_size(200000, 256), 16384);
	EXPECT_EQ(pgkm::kpp_sample_size(200000, 2048), 65536);
	EXPECT_EQ(pgkm::kpp_sample_size(20000, 8), 16384);
	EXPECT_EQ(pgkm::kpp_sample_size(5000, 1024), 5000);
	const int64_t saved = pgkm_internal_set_kpp_sample(0, 0);
	EXPECT_EQ(pgkm::kpp_sample_size(1000000, 8), 1000000) << "0 rows per centre: every row";
	pgkm_internal_set_kpp_sample(saved, -1);
}

TEST(KmeansppSample, RowsAreTheStrataRule)
{
	for (int64_t n : {16385, 100000, 1000003})
		for (uint64_t seed : {0u, 7u})
		{
			const int64_t ns = 16384;
			std::vector<int64_t> rows(ns);
			pgkm::SplitMix64 rng(seed ^ pgkm::KPP_SAMPLE_STREAM);
			pgkm::kpp_strata_rows(n, ns, rng, rows.data());
			EXPECT_EQ(rows, strata_reference(n, ns, seed)) << "n " << n << " seed " << seed;
			for (int64_t i = 0; i < ns; i++)
			{
				ASSERT_TRUE(rows[i] >= i * n / ns && rows[i] < (i + 1) * n / ns) << "row " << i;
				/* drawn alone, as the CPU device's gather draws a block */
				ASSERT_EQ(pgkm::kpp_stratum_row(n, ns, seed ^ pgkm::KPP_SAMPLE_STREAM, i), rows[i]) << "row " << i;
			}
			pgkm::SplitMix64 fresh(seed ^ pgkm::KPP_SAMPLE_STREAM);
			for (int64_t i = 0; i < ns; i++)
				fresh.next();
			EXPECT_EQ(rng.state, fresh.state) << "the stream moves on by ns values";
		}
}

/* A table larger than the sample: the reference k-means++ on the strata rows, row for row, any threads. */
TEST(KmeansppSample, StartIsTheReferenceOnTheSample)
{
	const int32_t d = 5, k = 20;
	const int64_t n = 30000, ns = 16384;
	const auto	x = integer_rows(n, d, 40, n, 3);
	const uint64_t seed = 11, run_seed = pgkm::derive_seed(seed, 0);
	const std::vector<int64_t> rows = strata_reference(n, ns, run_seed);
	std::vector<float> xs;
	for (int64_t r : rows)
		xs.insert(xs.end(), x.begin() + r * d, x.begin() + (r + 1) * d);
	const KppReference ref = reference_kmeanspp(xs, d, k, run_seed);
	ASSERT_EQ(ref.rows.size(), (size_t) k);
	for (int threads : {1, 3})
	{
		const EngineResult r = start_of(x, d, k, seed, threads);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		ASSERT_EQ(r.init.size(), (size_t) k * d);
		for (int32_t c = 0; c < k; c++)
			for (int32_t j = 0; j < d; j++)
				ASSERT_EQ(r.init[c * d + j], (double) x[rows[ref.rows[c]] * d + j])
					<< "threads " << threads << " center " << c;
		EXPECT_TRUE(std::isnan(r.progress[0].inertia)) << "a sample's potential is not reported";
	}
}

/* n up to the sample size: every row, as full-data greedy k-means++, bit for bit (potential too). */
TEST(KmeansppSample, TableNoLargerThanTheSampleIsTheFullRun)
{
	pgkm::SplitMix64 rng(5);
	const int32_t d = 7, k = 30;
	std::vector<float> x((size_t) 16384 * d);
	for (size_t i = 0; i < x.size(); i++)
		x[i] = (float) (rng.uniform() * 4.0 + (i / d % 9));
	const EngineResult sampled = start_of(x, d, k, 2, 2);
	const int64_t saved = pgkm_internal_set_kpp_sample(0, 0);
	const EngineResult full = start_of(x, d, k, 2, 2);
	pgkm_internal_set_kpp_sample(saved, -1);
	ASSERT_EQ(sampled.status, PGKM_DONE) << sampled.err;
	ASSERT_EQ(full.status, PGKM_DONE) << full.err;
	EXPECT_EQ(sampled.init, full.init);
	EXPECT_TRUE(std::isfinite(full.progress[0].inertia));
	EXPECT_EQ(sampled.progress[0].inertia, full.progress[0].inertia);
}

/* 12 distinct rows among 40,000: the sample holds them all, the start stops at 12, the result has 12 clusters. */
TEST(KmeansppSample, FewerDistinctPointsThanK)
{
	const int32_t d = 3;
	const auto	x = integer_rows(40000, d, 50, 12, 8);
	for (int threads : {1, 2})
	{
		const EngineResult r = start_of(x, d, 20, 6, threads);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.k, 12);
		std::set<std::vector<double>> got, want;
		for (int32_t c = 0; c < r.k; c++)
			got.insert(std::vector<double>(r.centroids.begin() + c * d, r.centroids.begin() + (c + 1) * d));
		for (int i = 0; i < 12; i++)
			want.insert(std::vector<double>(x.begin() + i * d, x.begin() + (i + 1) * d));
		EXPECT_EQ(got, want);
	}
}

/*
 * Quality on a known mixture: 25 unit-variance blobs on a grid 100 apart,
 * 100,000 rows (sampled). Each seed's start has one centre per blob, its
 * potential over all rows is below 3 n d (a row's own blob mean gives n d),
 * and Lloyd from it ends within 0.1 % of the true means' inertia.
 */
TEST(KmeansppSample, OneCenterPerBlobOfAKnownMixture)
{
	const int32_t d = 4, k = 25;
	const int64_t n = 100000;
	pgkm::SplitMix64 rng(17);
	std::vector<double> mean((size_t) k * d, 0.0);
	for (int c = 0; c < k; c++)
	{
		mean[(size_t) c * d] = 100.0 * (c % 5);
		mean[(size_t) c * d + 1] = 100.0 * (c / 5);
	}
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
		{
			/* Box-Muller normal, then rounded to float */
			const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
			x[i * d + j] = (float) (mean[(size_t) (i % k) * d + j] + std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
		}
	auto		cost = [&](const std::vector<double> &c, int32_t kc) {
		double		s = 0;
		for (int64_t i = 0; i < n; i++)
		{
			double		best = INFINITY;
			for (int32_t m = 0; m < kc; m++)
			{
				double		t = 0;
				for (int32_t j = 0; j < d; j++)
					t += ((double) x[i * d + j] - c[(size_t) m * d + j]) * ((double) x[i * d + j] - c[(size_t) m * d + j]);
				best = std::min(best, t);
			}
			s += best;
		}
		return s;
	};
	const double truth = cost(mean, k);
	for (uint64_t seed : {1u, 2u, 3u, 4u, 5u})
	{
		pgkm_options o = cpu_options(k);
		o.seed = seed;
		o.max_iter = 50;
		const EngineResult r = run_engine(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		std::set<int> blobs;
		for (int32_t c = 0; c < k; c++)
		{
			const int	b = (int) std::lround(r.init[(size_t) c * d] / 100.0) + 5 * (int) std::lround(r.init[(size_t) c * d + 1] / 100.0);
			blobs.insert(b);
		}
		EXPECT_EQ(blobs.size(), (size_t) k) << "seed " << seed << ": a blob without a centre";
		EXPECT_LT(cost(r.init, k), 3.0 * n * d) << "seed " << seed;
		EXPECT_LT(r.inertia, truth * 1.001) << "seed " << seed;
	}
}
