/*
 * kernel_kmeanspp.cpp: greedy k-means++ in feature space (kernel_kmeans.h),
 * scikit-learn's variant with distances taken from K:
 *   ||phi(x_i) - phi(x_c)||^2 = K_ii + K_cc - 2 K_ic   (clamped at 0).
 * The first seed is a uniform row; each next one is the best of
 * 2 + floor(ln k) candidates drawn with probability proportional to the
 * current D^2 (the one leaving the lowest potential, lowest trial on ties).
 * It needs only K's diagonal and the candidates' rows of K (KernelDevice::rows),
 * so it runs on the host for every device.
 */
#include "init.h"
#include "kernel_kmeans.h"
#include "rng.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pgkm
{

static constexpr int64_t KPP_CHUNK = 4096;

/*
 * The row a uniform draw r in [0, total) lands on: the first whose
 * cumulative D^2 exceeds r, found through the chunk sums; rounding that
 * runs past the end gives the last row with D^2 > 0.
 */
static int64_t
draw_row(const std::vector<double> &closest, const std::vector<double> &csum, double r)
{
	const int64_t n = (int64_t) closest.size();
	double		acc = 0;
	for (size_t ch = 0; ch < csum.size(); ch++)
	{
		if (acc + csum[ch] <= r)
		{
			acc += csum[ch];
			continue;
		}
		const int64_t end = std::min<int64_t>(n, (int64_t) (ch + 1) * KPP_CHUNK);
		for (int64_t i = (int64_t) ch * KPP_CHUNK; i < end; i++)
		{
			acc += closest[i];
			if (acc > r && closest[i] > 0)
				return i;
		}
	}
	for (int64_t i = n - 1; i >= 0; i--)
		if (closest[i] > 0)
			return i;
	return 0;
}

int32_t
kernel_kmeanspp(KernelDevice *dev, int64_t n, int32_t k, uint64_t seed, ThreadPool *pool,
				int64_t *seeds, int32_t *labels, double *potential)
{
	const double *diag = dev->diag();
	const int	trials = 2 + (int) std::log((double) k);
	const int64_t nchunks = (n + KPP_CHUNK - 1) / KPP_CHUNK;
	SplitMix64	rng(seed);
	std::vector<double> closest(n), csum(nchunks), tpart((size_t) nchunks * trials);
	std::vector<float> krows((size_t) trials * n);
	std::vector<int64_t> cand(trials);

	auto		sqdist = [&](const float *row, int64_t c, int64_t i) {
		double		v = diag[i] + diag[c] - 2.0 * (double) row[i];
		return v > 0 ? v : 0.0;
	};
	auto		chunk_sums = [&]() {
		double		tot = 0;
		for (int64_t ch = 0; ch < nchunks; ch++)
		{
			double		s = 0;
			for (int64_t i = ch * KPP_CHUNK; i < std::min(n, (ch + 1) * KPP_CHUNK); i++)
				s += closest[i];
			csum[ch] = s;
			tot += s;
		}
		return tot;
	};

	seeds[0] = rng.below(n);
	dev->rows(&seeds[0], 1, krows.data());
	for (int64_t i = 0; i < n; i++)
	{
		closest[i] = sqdist(krows.data(), seeds[0], i);
		labels[i] = 0;
	}
	double		pot = chunk_sums();
	int32_t		found = 1;
	for (; found < k && pot > 0; found++)
	{
		for (int t = 0; t < trials; t++)
			cand[t] = draw_row(closest, csum, rng.uniform() * pot);
		dev->rows(cand.data(), trials, krows.data());
		pool->parallel_for(nchunks, [&](int64_t ch, int) {
			for (int t = 0; t < trials; t++)
			{
				const float *row = krows.data() + (size_t) t * n;
				double		s = 0;
				for (int64_t i = ch * KPP_CHUNK; i < std::min(n, (ch + 1) * KPP_CHUNK); i++)
					s += std::min(closest[i], sqdist(row, cand[t], i));
				tpart[(size_t) ch * trials + t] = s;
			}
		});
		const int	best = best_trial(tpart.data(), nchunks, trials);
		seeds[found] = cand[best];
		const float *row = krows.data() + (size_t) best * n;
		for (int64_t i = 0; i < n; i++)
		{
			double		v = sqdist(row, cand[best], i);
			if (v < closest[i])
			{
				closest[i] = v;
				labels[i] = found;
			}
		}
		pot = chunk_sums();
	}
	*potential = pot;
	return found;
}

}							/* namespace pgkm */
