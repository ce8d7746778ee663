/*
 * test_kmeans_parallel.cpp: k-means|| (init PGKM_INIT_KMEANS_PARALLEL) and
 * the weighted greedy k-means++ that reduces its candidates.
 *
 * On integer rows every distance and sum is exact, so a brute-force fp64
 * k-means|| written from its definition (Bahmani et al.), drawing from the
 * same seeded stream, must pick the same candidates and the same centers.
 */
#include "engine_run.h"
#include "init.h"
#include "internal_hooks.h"
#include "kpp_reference.h"
#include "rng.h"
#include "thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <vector>

using namespace pgkm_test;
using pgkm::KPAR_OVERSAMPLING;
using pgkm::KPAR_ROUNDS;

namespace
{

/*
 * k-means|| from its definition: a uniform first row; per round, with
 * psi the sum of D^2, each row in order drawn when u psi < l D^2 (u uniform);
 * D^2 and the closest candidate (the first on ties) updated to the batch; up
 * to 8 rounds more while there are fewer than k candidates;
 * then each candidate weighted by its rows and the weighted greedy k-means++
 * (seeded by the stream's next value) picks min(k, candidates) of them.
 */
std::vector<int64_t>
reference_kmeans_parallel(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed,
						  int rounds, double factor)
{
	const int64_t n = (int64_t) x.size() / d;
	const double ell = factor * k;
	pgkm::SplitMix64 rng(seed);
	std::vector<double> dmin(n, std::numeric_limits<double>::infinity());
	std::vector<int64_t> owner(n, -1), cand;
	auto		add = [&](const std::vector<int64_t> &batch) {
		for (int64_t c : batch)
		{
			for (int64_t i = 0; i < n; i++)
			{
				const double v = row_dist2(x, d, i, c);
				if (v < dmin[i])
				{
					dmin[i] = v;
					owner[i] = (int64_t) cand.size();
				}
			}
			cand.push_back(c);
		}
	};
	add({rng.below(n)});
	for (int r = 0; r < rounds || ((int64_t) cand.size() < k && r < rounds + 8); r++)
	{
		double		psi = 0;
		for (double v : dmin)
			psi += v;
		if (!(psi > 0))
			break;
		std::vector<int64_t> batch;
		for (int64_t i = 0; i < n; i++)
			if (rng.uniform() * psi < ell * dmin[i])
				batch.push_back(i);
		add(batch);
	}
	std::vector<double> w(cand.size(), 0.0);
	for (int64_t i = 0; i < n; i++)
		w[owner[i]] += 1.0;
	std::vector<float> cx;
	for (int64_t c : cand)
		cx.insert(cx.end(), x.begin() + c * d, x.begin() + (c + 1) * d);
	const KppReference red = reference_kmeanspp(cx, d, std::min<int64_t>(k, cand.size()), rng.next(), w);
	std::vector<int64_t> rows;
	for (int64_t c : red.rows)
		rows.push_back(cand[c]);
	return rows;
}

EngineResult
run_parallel_init(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed, int threads)
{
	pgkm_options o = cpu_options(k);
	o.init = PGKM_INIT_KMEANS_PARALLEL;
	o.seed = seed;
	o.max_iter = 1;
	o.n_threads = threads;
	return run_engine(x, d, o);
}

/* The engine's k-means|| start equals the reference's, center for center. */
void
expect_reference_start(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed,
					   int threads, int rounds, double factor, const char *what)
{
	const int32_t saved = pgkm_internal_set_kmeans_parallel(rounds, factor);
	EngineResult r = run_parallel_init(x, d, k, seed, threads);
	pgkm_internal_set_kmeans_parallel(saved, 0);
	ASSERT_EQ(r.status, PGKM_DONE) << what << ": " << r.err;
	const auto	rows = reference_kmeans_parallel(x, d, k, pgkm::derive_seed(seed, 0), rounds, factor);
	ASSERT_EQ(r.init.size(), rows.size() * d) << what << " threads " << threads;
	for (size_t c = 0; c < rows.size(); c++)
		for (int32_t j = 0; j < d; j++)
			ASSERT_EQ(r.init[c * d + j], (double) x[rows[c] * d + j])
				<< what << " threads " << threads << ": center " << c << " (reference row " << rows[c] << ")";
}

}							/* namespace */

TEST(KmeansParallel, SameCentersAsTheReference)
{
	for (int32_t d : {1, 3, 7, 17, 33})
	{
		const auto	x = integer_rows(d == 1 ? 41 : 900, d, 20, d == 1 ? 41 : 900, 300 + d);
		for (int threads : {1, 3})
		{
			expect_reference_start(x, d, 30, 5 + d, threads, KPAR_ROUNDS, KPAR_OVERSAMPLING, "default");
			/* batches larger than k go to the device in pieces of k */
			expect_reference_start(x, d, 30, 5 + d, threads, 2, 3.0, "l = 3k");
		}
	}
}

TEST(KmeansParallel, KEqualsOneAndDuplicates)
{
	const auto	x = integer_rows(400, 5, 10, 400, 2);
	expect_reference_start(x, 5, 1, 3, 2, KPAR_ROUNDS, KPAR_OVERSAMPLING, "k = 1");
	/* 9 distinct rows: at most 9 candidates are ever drawn (drawn rows have D^2 = 0) */
	const auto	dup = integer_rows(500, 4, 2, 9, 17);
	expect_reference_start(dup, 4, 9, 8, 2, KPAR_ROUNDS, KPAR_OVERSAMPLING, "duplicates");
	EngineResult r = run_parallel_init(dup, 4, 12, 8, 2);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.k, 9);
	EXPECT_EQ(r.inertia, 0.0);
}

TEST(KmeansParallel, SameStartForAnyThreadCount)
{
	pgkm::SplitMix64 rng(4);
	const int32_t d = 17;
	std::vector<float> x(20000 * d);
	for (size_t i = 0; i < x.size(); i++)
		x[i] = (float) (rng.uniform() * 4.0 + (i / d % 11) * 2.5);
	std::vector<EngineResult> rs;
	for (int threads : {1, 2, 4})
	{
		rs.push_back(run_parallel_init(x, d, 150, 21, threads));
		ASSERT_EQ(rs.back().status, PGKM_DONE) << rs.back().err;
	}
	ASSERT_EQ(rs[0].k, 150);
	std::set<std::vector<double>> distinct;
	for (int c = 0; c < 150; c++)
		distinct.insert(std::vector<double>(rs[0].init.begin() + c * d, rs[0].init.begin() + (c + 1) * d));
	EXPECT_EQ(distinct.size(), 150u);
	for (size_t i = 1; i < rs.size(); i++)
	{
		EXPECT_EQ(rs[i].init, rs[0].init) << "run " << i;
		EXPECT_EQ(rs[i].centroids, rs[0].centroids) << "run " << i;
	}
}

/* Well-separated blobs, one per center: k-means|| seeds every blob, as k-means++ does. */
TEST(KmeansParallel, OneCenterPerSeparatedBlob)
{
	const int32_t d = 6, k = 40;
	pgkm::SplitMix64 rng(9);
	std::vector<float> x;
	for (int i = 0; i < 8000; i++)
	{
		const int	b = i % k;
		for (int32_t j = 0; j < d; j++)
			x.push_back((float) (100.0 * ((b >> (j % 6)) & 1) + 1000.0 * (b / 8 == j) + rng.uniform()));
	}
	for (uint64_t seed : {1u, 2u, 3u})
	{
		EngineResult r = run_parallel_init(x, d, k, seed, 2);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		std::set<int32_t> blobs;
		for (int c = 0; c < r.k; c++)
		{
			/* the blob of a center is the blob of its nearest row */
			double		best = 1e300;
			int			bi = -1;
			for (int i = 0; i < 8000; i++)
			{
				double		s = 0;
				for (int32_t j = 0; j < d; j++)
					s += (r.init[c * d + j] - x[i * d + j]) * (r.init[c * d + j] - x[i * d + j]);
				if (s < best)
				{
					best = s;
					bi = i % k;
				}
			}
			blobs.insert(bi);
		}
		EXPECT_EQ(blobs.size(), (size_t) k) << "seed " << seed;
	}
}

TEST(KmeansParallel, WeightedKmeansppMatchesTheReference)
{
	const int32_t d = 7;
	const auto	x = integer_rows(300, d, 15, 300, 6);
	pgkm::SplitMix64 rng(1);
	std::vector<double> w(300);
	for (double &v : w)
		v = (double) rng.below(5);	/* zero weights included: never drawn */
	pgkm::ThreadPool pool(3, nullptr, nullptr);
	std::vector<double> c(20 * d);
	double		pot = 0;
	const int32_t found = pgkm::kmeanspp_cpu(x.data(), 300, d, 20, 77, &pool, c.data(), &pot, w.data());
	const KppReference ref = reference_kmeanspp(x, d, 20, 77, w);
	ASSERT_EQ((size_t) found, ref.rows.size());
	for (int32_t i = 0; i < found; i++)
	{
		EXPECT_GT(w[ref.rows[i]], 0.0) << "center " << i;
		for (int32_t j = 0; j < d; j++)
			ASSERT_EQ(c[i * d + j], (double) x[ref.rows[i] * d + j]) << "center " << i;
	}
	EXPECT_EQ(pot, ref.potential);
}

TEST(KmeansParallel, KernelMethodRefusesIt)
{
	std::vector<float> x(200);
	for (size_t i = 0; i < x.size(); i++)
		x[i] = (float) (i % 17);
	pgkm_options o = cpu_options(3);
	o.method = PGKM_METHOD_KERNEL;
	o.init = PGKM_INIT_KMEANS_PARALLEL;
	EngineResult r = run_engine(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_INVALID);
	EXPECT_NE(r.err.find("not k-means||"), std::string::npos) << r.err;
}
