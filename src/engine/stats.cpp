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

/* Rows in interleaved accumulators up to this many features (a short row's columns are too few chains). */
static constexpr int32_t BANKED_MAX_D = 16;
static constexpr int ROW_BANKS = 4;

/*
 * p[0..d) = the column sums of f(value, column) over rows [r0, r1) of x.
 * CHECK (the first pass, f the value): top[0..d) the column maxima of
 * |value|, and false when a value is beyond *limit or NaN (p then unused),
 * told by the maxima and by a NaN sum after the loops, which then keep no
 * running test a value; else limit and top are unused. Up to BANKED_MAX_D features, row i goes to accumulator
 * i mod ROW_BANKS (one chain a column made every row wait for the last row's
 * add: the pass ran at about 10 cycles a row at d = 2), combined as
 * (a0 + a1) + (a2 + a3); longer rows add in row order, their columns being
 * the independent chains. The order depends on the shape only.
 */
template <int D, bool CHECK, class F>
static inline bool
column_sums(const float *x, int64_t r0, int64_t r1, int32_t dd, double *p,
			const float *limit, float *top, F f)
{
	const int32_t d = D > 0 ? D : dd;
	/* std::max(m, NaN) keeps m, but a NaN makes its column's sum NaN (chunks of < 2^16 values below the limit cannot overflow) */
	const auto	within = [&]() {
		bool		ok = true;
		for (int32_t j = 0; j < d; j++)
			ok &= top[j] <= *limit && !std::isnan(p[j]);
		return ok;
	};
	if (d > BANKED_MAX_D)
	{
		std::fill(p, p + d, 0.0);
		if (CHECK)
			std::fill(top, top + d, 0.0f);
		for (int64_t i = r0; i < r1; i++)
			for (int32_t j = 0; j < d; j++)
			{
				const float v = x[i * d + j];
				if (CHECK)
					top[j] = std::max(top[j], std::fabs(v));
				p[j] += f(v, j);
			}
		return !CHECK || within();
	}
	double		acc[ROW_BANKS][BANKED_MAX_D] = {};
	float		mx[BANKED_MAX_D] = {};
	int64_t		i = r0;
	for (; i + ROW_BANKS <= r1; i += ROW_BANKS)
		for (int b = 0; b < ROW_BANKS; b++)
			for (int32_t j = 0; j < d; j++)
			{
				const float v = x[(i + b) * d + j];
				if (CHECK)
					mx[j] = std::max(mx[j], std::fabs(v));
				acc[b][j] += f(v, j);
			}
	for (int b = 0; i < r1; i++, b++)
		for (int32_t j = 0; j < d; j++)
		{
			const float v = x[i * d + j];
			if (CHECK)
				mx[j] = std::max(mx[j], std::fabs(v));
			acc[b][j] += f(v, j);
		}
	for (int32_t j = 0; j < d; j++)
		p[j] = (acc[0][j] + acc[1][j]) + (acc[2][j] + acc[3][j]);
	if (CHECK)
		std::copy(mx, mx + d, top);
	return !CHECK || within();
}

/* column_sums with d fixed at compile time where rows are shortest (the loop's own overhead) */
template <bool CHECK, class F>
static bool
column_sums_any(const float *x, int64_t r0, int64_t r1, int32_t d, double *p, const float *limit,
				float *top, F f)
{
	switch (d)
	{
		case 1: return column_sums<1, CHECK>(x, r0, r1, d, p, limit, top, f);
		case 2: return column_sums<2, CHECK>(x, r0, r1, d, p, limit, top, f);
		case 3: return column_sums<3, CHECK>(x, r0, r1, d, p, limit, top, f);
		case 4: return column_sums<4, CHECK>(x, r0, r1, d, p, limit, top, f);
		default: return column_sums<0, CHECK>(x, r0, r1, d, p, limit, top, f);
	}
}

/*
 * One parallel pass of per-chunk column sums of f into part (d a chunk).
 * Chunks are fixed-size and reduced in chunk order by the caller, so the
 * sums do not depend on the thread count. With limit, a chunk holding a
 * value beyond it (or NaN) records the first one's index in bad, and each
 * chunk's column maxima of |value| go to tops (d a chunk).
 */
template <class F>
static void
chunk_column_sums(const float *x, int64_t n, int32_t d, ThreadPool *pool, std::vector<double> &part,
				  int64_t nchunks, const float *limit, std::vector<int64_t> *bad, float *tops, F f)
{
	const int64_t rows = stats_chunk_rows(d);
	pool->parallel_for(nchunks, [&](int64_t ch, int w) {
		pool->checkpoint(w);
		const int64_t r0 = ch * rows, r1 = std::min(n, r0 + rows);
		const bool	ok = limit ? column_sums_any<true>(x, r0, r1, d, part.data() + (size_t) ch * d, limit,
														 tops + (size_t) ch * d, f)
			: column_sums_any<false>(x, r0, r1, d, part.data() + (size_t) ch * d, nullptr, nullptr, f);
		if (!ok)
		{
			int64_t		t = r0 * d;
			while (std::fabs(x[t]) <= *limit)
				t++;
			(*bad)[ch] = t;
		}
	});
}

/*
 * Two parallel passes over the data: the first rejects NaN/Inf and values
 * beyond max_safe_abs(d) (units.h), sums the columns for the means and finds
 * each column's largest |value|, the second sums squared deviations for the mean
 * per-feature variance (fp64, per-chunk partials reduced in chunk order).
 */
DataStats
data_statistics(const float *x, int64_t n, int32_t d, ThreadPool *pool)
{
	const int64_t nchunks = (n + stats_chunk_rows(d) - 1) / stats_chunk_rows(d);
	const float limit = (float) max_safe_abs(d);
	std::vector<double> part((size_t) nchunks * d);
	std::vector<int64_t> bad(nchunks, -1);
	std::vector<float> tops((size_t) nchunks * d);
	chunk_column_sums(x, n, d, pool, part, nchunks, &limit, &bad, tops.data(),
					  [](float v, int32_t) { return (double) v; });
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
	s.maxabs.assign(d, 0.0f);
	for (int64_t ch = 0; ch < nchunks; ch++)
		for (int32_t j = 0; j < d; j++)
		{
			s.mean[j] += part[(size_t) ch * d + j];
			s.maxabs[j] = std::max(s.maxabs[j], tops[(size_t) ch * d + j]);
		}
	for (int32_t j = 0; j < d; j++)
		s.mean[j] /= (double) n;
	const double *mean = s.mean.data();
	chunk_column_sums(x, n, d, pool, part, nchunks, nullptr, nullptr, nullptr, [mean](float v, int32_t j) {
		const double t = (double) v - mean[j];
		return t * t;
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
