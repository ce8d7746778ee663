/*
 * stats.cpp: the data statistics pass (stats.h).
 */
#include "stats.h"
#include "errors.h"
#include "thread_pool.h"
#include "units.h"
#include "util.h"

#include <algorithm>
#include <cmath>

namespace pgkm
{

/*
 * Rows per chunk of the statistics pass: about 65,536 values, so that a
 * chunk's loop is long but every thread gets chunks (65,536 rows a chunk
 * left 245,760 x 32 on 4 threads and 100k x 768 on 2), and at least 64 rows,
 * which keeps the chunks' partial sums (d each) under 1/32 of the data.
 */
int64_t
stats_chunk_rows(int32_t d)
{
	return std::max<int64_t>(64, (65536 + d - 1) / d);
}

/*
 * One parallel pass of per-chunk column sums: for each row, add(xi, i, ch, p)
 * adds its terms into the chunk's d partials p, or returns false to stop the
 * chunk (the caller records why). Chunks are fixed-size and reduced in chunk
 * order by the caller, so the sums do not depend on the thread count.
 */
template <class AddRow>
static void
chunk_column_sums(const float *x, int64_t n, int32_t d, ThreadPool *pool,
				  std::vector<double> &part, int64_t nchunks, AddRow add)
{
	const int64_t rows = stats_chunk_rows(d);
	pool->parallel_for(nchunks, [&](int64_t ch, int w) {
		int64_t		r0 = ch * rows, r1 = std::min(n, r0 + rows);
		double	   *p = part.data() + (size_t) ch * d;
		std::fill(p, p + d, 0.0);
		for (int64_t i = r0; i < r1; i++)
		{
			if ((i & 0x3FFF) == 0)
				pool->checkpoint(w);
			if (!add(x + i * d, i, ch, p))
				return;
		}
	});
}

/*
 * Two parallel passes over the data: the first rejects NaN/Inf and values
 * beyond max_safe_abs(d) (units.h) and sums the columns for the means, the second sums squared deviations for the mean
 * per-feature variance (fp64, per-chunk partials reduced in chunk order).
 */
DataStats
data_statistics(const float *x, int64_t n, int32_t d, ThreadPool *pool)
{
	const int64_t nchunks = (n + stats_chunk_rows(d) - 1) / stats_chunk_rows(d);
	const float limit = (float) max_safe_abs(d);
	std::vector<double> part((size_t) nchunks * d);
	std::vector<int64_t> bad(nchunks, -1);
	chunk_column_sums(x, n, d, pool, part, nchunks, [&](const float *xi, int64_t i, int64_t ch, double *p) {
		for (int32_t j = 0; j < d; j++)
		{
			if (!(std::fabs(xi[j]) <= limit))	/* NaN and infinity too */
			{
				bad[ch] = i * d + j;
				return false;
			}
			p[j] += xi[j];
		}
		return true;
	});
	for (int64_t ch = 0; ch < nchunks; ch++)
		if (bad[ch] >= 0)
		{
			int64_t		row = bad[ch] / d;
			int32_t		col = (int32_t) (bad[ch] % d);
			if (std::isfinite(x[bad[ch]]))
				throw EngineError(PGKM_ERR_INVALID,
								  fmt("row %lld (0-based) feature %d (0-based) is %g, beyond the %g that single-precision distances of %d features allow; pass the data scaled down (pgkm_options.scale_log2)",
									  (long long) row, col, (double) x[bad[ch]], (double) limit, d));
			throw EngineError(PGKM_ERR_INVALID,
							  fmt("row %lld (0-based) feature %d (0-based) is %s; NaN and infinite values cannot be clustered",
								  (long long) row, col, pgkm_nonfinite_name(x[bad[ch]])));
		}
	DataStats	s;
	s.mean.assign(d, 0.0);
	for (int64_t ch = 0; ch < nchunks; ch++)
		for (int32_t j = 0; j < d; j++)
			s.mean[j] += part[(size_t) ch * d + j];
	for (int32_t j = 0; j < d; j++)
		s.mean[j] /= (double) n;
	const double *mean = s.mean.data();
	chunk_column_sums(x, n, d, pool, part, nchunks, [&](const float *xi, int64_t, int64_t, double *p) {
		for (int32_t j = 0; j < d; j++)
		{
			double		t = (double) xi[j] - mean[j];
			p[j] += t * t;
		}
		return true;
	});
	double		var_sum = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		v = 0;
		for (int64_t ch = 0; ch < nchunks; ch++)
			v += part[(size_t) ch * d + j];
		var_sum += v / (double) n;
	}
	s.mean_var = var_sum / d;
	return s;
}

}							/* namespace pgkm */
