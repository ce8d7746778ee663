/*
 * stats.h: the data statistics pass that precedes every run.
 */
#ifndef PGKM_STATS_H
#define PGKM_STATS_H

#include <cstdint>
#include <vector>

namespace pgkm
{

class ThreadPool;

struct DataStats
{
	std::vector<double> mean;	/* column means */
	std::vector<float> maxabs;	/* column maxima of |x| (the centroid sums' scales) */
	double		mean_var = 0;	/* mean per-feature variance */
};

/*
 * Column means and the mean per-feature variance of x (n x d float32), in
 * fp64, the same for any thread count. Rejects NaN, infinite values and
 * values beyond max_safe_abs(d) with an EngineError naming the first bad
 * row and feature.
 */
DataStats	data_statistics(const float *x, int64_t n, int32_t d, ThreadPool *pool);

/* Rows per chunk of that pass (shape only); its partial sums hold d doubles a chunk. */
int64_t		stats_chunk_rows(int32_t d);

}							/* namespace pgkm */

#endif							/* PGKM_STATS_H */
