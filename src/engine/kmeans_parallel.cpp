/*
 * kmeans_parallel.cpp: k-means|| (Bahmani, Moseley, Vattani, Kumar,
 * Vassilvitskii, "Scalable K-Means++", VLDB 2012) on the host (init.h).
 *
 * Each round adds a batch of rows, each row drawn independently with
 * probability min(1, l D^2 / potential), and brings every row's D^2 down to
 * the batch: one nearest-centroid pass of the CPU device (the Lloyd kernel,
 * exact fp64 distances) against the batch. The candidates, weighted by the
 * rows closest to them, are then reduced to k centers by greedy k-means++
 * (kmeanspp_cpu with weights). The rounds cost about rounds x l / k Lloyd
 * iterations, instead of the 2 + ln k passes' worth of distances that greedy
 * k-means++ over all rows evaluates.
 */
#include "device.h"
#include "init.h"
#include "internal_hooks.h"
#include "rng.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

namespace pgkm
{

/* Rounds beyond the planned ones while there are fewer than k candidates. */
static constexpr int KPAR_EXTRA_ROUNDS = 8;

static std::atomic<int32_t> kpar_rounds {KPAR_ROUNDS};
static std::atomic<double> kpar_oversampling {KPAR_OVERSAMPLING};

extern "C" int32_t
pgkm_internal_set_kmeans_parallel(int32_t rounds, double oversampling)
{
	kpar_oversampling.store(oversampling > 0 ? oversampling : KPAR_OVERSAMPLING);
	return kpar_rounds.exchange(rounds > 0 ? rounds : KPAR_ROUNDS);
}

int32_t
kmeans_parallel_init(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed,
					 const double *mean, ThreadPool *pool, double *centers)
{
	const int	rounds = kpar_rounds.load();
	const double ell = kpar_oversampling.load() * k;
	SplitMix64	rng(seed);
	std::vector<double> dmin(n, std::numeric_limits<double>::infinity());
	std::vector<int32_t> owner(n, -1);
	std::vector<int64_t> cand;	/* candidate rows, in the order they were drawn */
	std::vector<int32_t> labels(n);
	std::vector<double> dist2(n);

	/* D^2 and owner against a batch of rows, in device passes of at most k centers */
	auto		add_batch = [&](const std::vector<int64_t> &batch) {
		for (size_t b0 = 0; b0 < batch.size(); b0 += (size_t) k)
		{
			const int32_t m = (int32_t) std::min<size_t>((size_t) k, batch.size() - b0);
			std::vector<double> c((size_t) m * d);
			for (int32_t i = 0; i < m; i++)
				for (int32_t j = 0; j < d; j++)
					c[(size_t) i * d + j] = x[batch[b0 + i] * d + j];
			std::unique_ptr<Device> dev = make_cpu_device(x, n, d, m, mean, nullptr, pool);
			dev->set_centroids(c.data(), m);
			std::vector<int64_t> sizes(m);
			double		inertia;
			dev->assign(labels.data(), dist2.data(), sizes.data(), &inertia);
			const int32_t base = (int32_t) cand.size();
			for (int64_t i = 0; i < n; i++)
				if (dist2[i] < dmin[i])
				{
					dmin[i] = dist2[i];
					owner[i] = base + labels[i];
				}
			cand.insert(cand.end(), batch.begin() + b0, batch.begin() + b0 + m);
		}
	};

	/* the first candidate: a uniform row, its D^2 without a device pass */
	const int64_t first = rng.below(n);
	const int64_t chunk = 16384;
	pool->parallel_for((n + chunk - 1) / chunk, [&](int64_t ch, int) {
		const float *c = x + first * d;
		for (int64_t i = ch * chunk; i < std::min(n, (ch + 1) * chunk); i++)
		{
			double		s = 0;
			for (int32_t j = 0; j < d; j++)
			{
				const double t = (double) x[i * d + j] - (double) c[j];
				s += t * t;
			}
			dmin[i] = s;
			owner[i] = 0;
		}
	});
	cand.push_back(first);
	/* rounds more while fewer than k candidates (small data), as long as rows remain apart */
	for (int r = 0; r < rounds || ((int64_t) cand.size() < k && r < rounds + KPAR_EXTRA_ROUNDS); r++)
	{
		pool->poll();
		double		psi = 0;
		for (int64_t i = 0; i < n; i++)
			psi += dmin[i];
		if (!(psi > 0))
			break;
		std::vector<int64_t> batch;
		for (int64_t i = 0; i < n; i++)
			if (rng.uniform() * psi < ell * dmin[i])
				batch.push_back(i);
		if (!batch.empty())
			add_batch(batch);
	}

	/* the candidates, weighted by the rows closest to them, reduced to k centers */
	const int64_t nc = (int64_t) cand.size();
	std::vector<double> weight(nc, 0.0);
	for (int64_t i = 0; i < n; i++)
		weight[owner[i]] += 1.0;
	std::vector<float> cx((size_t) nc * d);
	for (int64_t c = 0; c < nc; c++)
		std::copy(x + cand[c] * d, x + (cand[c] + 1) * d, cx.begin() + (size_t) c * d);
	return kmeanspp_cpu(cx.data(), nc, d, std::min<int64_t>(k, nc), rng.next(), pool, centers,
						nullptr, weight.data());
}

}							/* namespace pgkm */
