/*
 * test_kmeanspp_groups.cpp: greedy k-means++ with rows grouped by closest
 * center (kmeanspp_groups.h) against a brute-force reference of the
 * engine's own arithmetic, on real-valued data where float rounding
 * matters.
 *
 * The reference computes every distance, with no bound and no grouping:
 * float D^2 summed over features in order, per-chunk row-order sums of
 * 1024 rows reduced in chunk order, the same draws from the same stream
 * (rng.h), the lowest potential first on ties. The grouped evaluation picks
 * from gains and error bounds, in any order, so equal centers and the same
 * potential bit for bit are what say that its proof holds. Shapes: blobs
 * at d = 1, 3, 16, 33, k = 1, k = n, k > 64, duplicate rows, 1 and 3
 * threads, weighted rows (against the fp64 reference on integer rows);
 * the step counter proves the grouped evaluation ran.
 */
#include "blobs.h"
#include "engine_run.h"
#include "init.h"
#include "internal_hooks.h"
#include "kpp_reference.h"
#include "kpp_start.h"
#include "rng.h"
#include "thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace pgkm_test;

namespace
{

constexpr int64_t CHUNK = 1024;	/* kmeanspp_cpu.cpp's KPP_CHUNK */

/* Feature order, float, no FMA (this file is built without FMA, so nothing contracts). */
float
sqdist_in_order(const float *a, const float *b, int32_t d)
{
	float		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		float		t = a[j] - b[j];
		s += t * t;
	}
	return s;
}

/* Chunk sums of v in row order. */
std::vector<double>
chunk_sums(const std::vector<float> &v)
{
	const int64_t n = (int64_t) v.size();
	std::vector<double> s((n + CHUNK - 1) / CHUNK, 0.0);
	for (int64_t i = 0; i < n; i++)
		s[i / CHUNK] += v[i];
	return s;
}

double
sum_in_order(const std::vector<double> &v)
{
	double		s = 0;
	for (double a : v)
		s += a;
	return s;
}

/* The first row (D^2 > 0) whose running sum reaches r, scanning chunk sums first (as the engine). */
int64_t
draw(const std::vector<float> &closest, const std::vector<double> &csum, double r)
{
	const int64_t n = (int64_t) closest.size();
	double		cum = 0;
	for (size_t ch = 0; ch < csum.size(); ch++)
	{
		if (csum[ch] > 0 && cum + csum[ch] >= r)
		{
			int64_t		last = -1;
			for (int64_t i = (int64_t) ch * CHUNK; i < std::min(n, (int64_t) (ch + 1) * CHUNK); i++)
			{
				if (closest[i] <= 0)
					continue;
				cum += closest[i];
				last = i;
				if (cum >= r)
					return i;
			}
			return last;
		}
		cum += csum[ch];
	}
	for (int64_t i = n - 1; i >= 0; i--)
		if (closest[i] > 0)
			return i;
	return 0;
}

/* Greedy k-means++ in the engine's arithmetic, every distance computed. */
KppReference
float_reference(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed)
{
	const int64_t n = (int64_t) x.size() / d;
	const int	trials = 2 + (int) std::log((double) k);
	pgkm::SplitMix64 rng(seed);
	KppReference ref;
	ref.rows.push_back(rng.below(n));
	std::vector<float> closest(n);
	for (int64_t i = 0; i < n; i++)
		closest[i] = sqdist_in_order(&x[i * d], &x[ref.rows[0] * d], d);
	std::vector<double> csum = chunk_sums(closest);
	double		pot = sum_in_order(csum);
	while ((int32_t) ref.rows.size() < k && pot > 0)
	{
		std::vector<int64_t> cand(trials);
		for (int t = 0; t < trials; t++)
			cand[t] = draw(closest, csum, rng.uniform() * pot);
		int			best = 0;
		double		best_pot = 0;
		for (int t = 0; t < trials; t++)
		{
			std::vector<double> part(csum.size(), 0.0);
			for (int64_t i = 0; i < n; i++)
				part[i / CHUNK] += std::min(closest[i], sqdist_in_order(&x[i * d], &x[cand[t] * d], d));
			const double p = sum_in_order(part);
			if (t == 0 || p < best_pot)
			{
				best = t;
				best_pot = p;
			}
		}
		ref.rows.push_back(cand[best]);
		for (int64_t i = 0; i < n; i++)
			closest[i] = std::min(closest[i], sqdist_in_order(&x[i * d], &x[cand[best] * d], d));
		csum = chunk_sums(closest);
		pot = sum_in_order(csum);
	}
	ref.potential = pot;
	return ref;
}

/* The engine's start equals the reference's, row for row, and the potential bit for bit. */
void
expect_reference_start(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed, int threads,
					   const char *what)
{
	expect_start_is(float_reference(x, d, k, pgkm::derive_seed(seed, 0)), x, d, k, seed, threads, what);
}

/* Steps the grouped evaluation took since the last call (and how many it left undecided). */
int64_t
grouped_steps(int64_t *undecided_out = nullptr)
{
	int64_t		grouped, undecided;
	pgkm_internal_kpp_steps(&grouped, &undecided);
	if (undecided_out)
		*undecided_out = undecided;
	return grouped;
}

}							/* namespace */

TEST(KmeansppGroups, SameCentersAsTheFloatReferenceOnBlobs)
{
	for (int32_t d : {1, 3, 16, 33})
	{
		const auto	x = blobs(6000, d, 25, 40 + d, 0.6);
		grouped_steps();
		for (int threads : {1, 3})
			expect_reference_start(x, d, 150, 5 + d, threads, "blobs");
		EXPECT_GT(grouped_steps(), 50) << "d " << d << ": the groups were not used";
		/* no room for near pairs: the winner's rows are searched again */
		const int64_t saved = pgkm_internal_set_kpp_near_room(0);
		expect_reference_start(x, d, 150, 5 + d, 2, "blobs, rows searched again");
		pgkm_internal_set_kpp_near_room(saved);
		EXPECT_GT(grouped_steps(), 0) << "d " << d << ": the groups were not used without near pairs";
	}
}

TEST(KmeansppGroups, KEqualsOneAndKEqualsN)
{
	const int32_t d = 7;
	const auto	x = blobs(300, d, 6, 3, 0.4);
	expect_reference_start(x, d, 1, 8, 2, "k = 1");
	grouped_steps();
	expect_reference_start(x, d, 300, 8, 2, "k = n");
	EXPECT_GT(grouped_steps(), 0);
}

TEST(KmeansppGroups, DuplicateRowsStopAtTheDistinctRows)
{
	/* 90 distinct real-valued rows repeated to 3000: candidates often repeat, k stops at 90 */
	const int32_t d = 5;
	const auto	base = blobs(90, d, 9, 77, 0.3);
	pgkm::SplitMix64 rng(4);
	const std::vector<float> x = repeat_rows(base, d, 3000, rng);
	const KppReference ref = float_reference(x, d, 120, pgkm::derive_seed(2, 0));
	ASSERT_EQ(ref.rows.size(), 90u);
	EXPECT_EQ(ref.potential, 0.0);
	grouped_steps();
	for (int threads : {1, 3})
		expect_reference_start(x, d, 120, 2, threads, "duplicates");
	EXPECT_GT(grouped_steps(), 0);
}

TEST(KmeansppGroups, WeightedRowsAsTheReference)
{
	/*
	 * k-means|| reduces its candidates with weights. Clustered integer rows
	 * keep every float distance and sum exact, so the fp64 reference's
	 * centres and potential are the engine's, bit for bit.
	 */
	for (int32_t d : {3, 16})
	{
		auto		x = blobs(6000, d, 25, 60 + d, 0.6);
		for (float &v : x)
			v = std::round(v * 4.0f);
		const int64_t n = (int64_t) x.size() / d;
		pgkm::SplitMix64 rng(9 + d);
		std::vector<double> w(n);
		for (double &v : w)
			v = (double) rng.below(5);	/* zero weights included: never drawn */
		pgkm::ThreadPool pool(3, nullptr, nullptr);
		std::vector<double> c((size_t) 150 * d);
		double		pot = 0;
		grouped_steps();
		const int32_t found = pgkm::kmeanspp_cpu(x.data(), n, d, 150, 77, &pool, c.data(), &pot, w.data());
		EXPECT_GT(grouped_steps(), 0) << "d " << d << ": the groups were not used";
		const KppReference ref = reference_kmeanspp(x, d, 150, 77, w);
		ASSERT_EQ((size_t) found, ref.rows.size()) << "d " << d;
		for (int32_t i = 0; i < found; i++)
			for (int32_t j = 0; j < d; j++)
				ASSERT_EQ(c[(size_t) i * d + j], (double) x[ref.rows[i] * d + j]) << "d " << d << ", center " << i;
		EXPECT_EQ(pot, ref.potential) << "d " << d;
	}
}

TEST(KmeansppGroups, ExactTiesBetweenDifferentRowsGoToTheRowOrderPass)
{
	/*
	 * 20 copies of one plus-shaped cluster (integer coordinates, so every
	 * sum is exact), far apart: once the heavy middles are centers, every
	 * arm candidate gains exactly the same, the bounds cannot separate
	 * them, and the row-order pass must pick the first.
	 */
	const int32_t d = 2;
	std::vector<float> x;
	auto		add = [&](float a, float b, int times) {
		for (int r = 0; r < times; r++)
		{
			x.push_back(a);
			x.push_back(b);
		}
	};
	for (int c = 0; c < 20; c++)
	{
		const float base = 1000.0f * c;
		add(base, 0, 100);
		add(base + 1, 0, 10);
		add(base - 1, 0, 10);
		add(base, 1, 10);
		add(base, -1, 10);
	}
	int64_t		undecided = 0;
	grouped_steps();
	for (int threads : {1, 3})
		expect_reference_start(x, d, 100, 3, threads, "ties");
	EXPECT_GT(grouped_steps(&undecided), 0);
	EXPECT_GT(undecided, 0) << "no tie reached the row-order pass";
}

TEST(KmeansppGroups, SameCentersWithRowsOnlyAndWithNoSkipping)
{
	/* large d and k: grouped steps, row-order steps and (odd d) the tails of the SIMD loops */
	const int32_t d = 101;
	const auto	x = blobs(8000, d, 40, 12, 1.0);
	std::vector<EngineResult> rs;
	for (int32_t mode : {1, 2, 0})
	{
		const int32_t saved = pgkm_internal_set_kpp_pruning(mode);
		pgkm_options o = cpu_options(300);
		o.seed = 21;
		o.max_iter = 1;
		o.n_threads = 2;
		grouped_steps();
		rs.push_back(run_engine(x, d, o));
		const int64_t steps = grouped_steps();
		pgkm_internal_set_kpp_pruning(saved);
		ASSERT_EQ(rs.back().status, PGKM_DONE) << rs.back().err;
		if (mode == 1)
			EXPECT_GT(steps, 200);
		else
			EXPECT_EQ(steps, 0);
	}
	for (size_t i = 1; i < rs.size(); i++)
	{
		EXPECT_EQ(rs[i].init, rs[0].init) << "mode run " << i;
		EXPECT_EQ(rs[i].progress[0].inertia, rs[0].progress[0].inertia) << "mode run " << i;
	}
}
