/*
 * kmeanspp_sample.cpp: the CPU device's k-means++ (init.h): greedy
 * k-means++ (kmeanspp_cpu) on a stratified sample of the rows when the table
 * is larger than the sample, so that init costs a few Lloyd iterations; on
 * every row otherwise (then it is kmeanspp_cpu's result, bit for bit).
 *
 * The sample is drawn by rng.h's kpp_strata_rows, as the GPU plugin draws
 * its own (cuda/kmeanspp.cu). Its size is by rows per
 * centre (KPP_SAMPLE_PER_CENTER k, at least KPP_SAMPLE_MIN): chosen by the
 * quality check in bench/RESULTS.md ("k-means++ on a sample").
 */
#include "init.h"
#include "internal_hooks.h"
#include "rng.h"
#include "row_array.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <vector>

namespace pgkm
{

/* -1: the defaults; 0 rows per centre: every row (full-data greedy k-means++) */
static std::atomic<int64_t> sample_per_center {-1}, sample_min {-1};

extern "C" int64_t
pgkm_internal_set_kpp_sample(int64_t per_center, int64_t min_rows)
{
	sample_min.store(min_rows);
	return sample_per_center.exchange(per_center);
}

int64_t
kpp_sample_size(int64_t n, int32_t k)
{
	const int64_t per = sample_per_center.load(std::memory_order_relaxed);
	const int64_t lo = sample_min.load(std::memory_order_relaxed);
	if (per == 0)
		return n;
	const int64_t want = std::max<int64_t>(lo < 0 ? KPP_SAMPLE_MIN : lo,
										   (per < 0 ? KPP_SAMPLE_PER_CENTER : per) * (int64_t) k);
	return std::min(n, want);
}

int32_t
kmeanspp_sampled_cpu(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed,
					 ThreadPool *pool, double *centers, double *potential)
{
	const int64_t ns = kpp_sample_size(n, k);
	if (ns >= n)
		return kmeanspp_cpu(x, n, d, k, seed, pool, centers, potential, nullptr);
	PhaseClock<PGKM_KPP_PHASES> clock(kpp_phase_totals);
	const uint64_t stream = seed ^ KPP_SAMPLE_STREAM;
	/*
	 * The draw (kpp_strata_rows' rows, a block at a time) and the gather:
	 * rows about n / ns apart, each a cache miss the hardware prefetcher
	 * does not foresee, so each row's lines are asked for AHEAD rows before
	 * its copy, in blocks small enough for every thread. The copy writes
	 * every value (no zero fill first).
	 */
	RowArray<float> xs;
	xs.resize((size_t) ns * d);
	constexpr int64_t block = 512, AHEAD = 16;
	const size_t row_bytes = sizeof(float) * d;
	pool->parallel_for((ns + block - 1) / block, [&](int64_t b, int) {
		const int64_t i0 = b * block, i1 = std::min(ns, i0 + block);
		int64_t		rows[block];
		for (int64_t i = i0; i < i1; i++)
			rows[i - i0] = kpp_stratum_row(n, ns, stream, i);
		for (int64_t i = i0; i < i1; i++)
		{
			if (i + AHEAD < i1)
			{
				const char *ahead = (const char *) (x + rows[i + AHEAD - i0] * d);
				for (size_t off = 0; off < row_bytes; off += 64)
					__builtin_prefetch(ahead + off);
			}
			memcpy(&xs[(size_t) i * d], x + rows[i - i0] * d, row_bytes);
		}
	});
	clock.mark(KPP_SAMPLE);
	/* centers are sample rows, so rows of x; the potential is over the sample only, so not reported */
	const int32_t found = kmeanspp_cpu(xs.data(), ns, d, k, seed, pool, centers, nullptr, nullptr);
	if (potential)
		*potential = std::numeric_limits<double>::quiet_NaN();
	return found;
}

}							/* namespace pgkm */
