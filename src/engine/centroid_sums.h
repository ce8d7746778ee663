/*
 * centroid_sums.h: the update's per-cluster sums of rows, as 64-bit
 * fixed-point integers: value v of column j counts as rint(v * scale[j]),
 * scale[j] a power of two chosen from the column's largest |v| and n so that
 * no sum can overflow. Integer addition is associative, so any split of the
 * rows among threads, any order, and adding a moved row's value to its new
 * cluster and taking it from its old one all give the same bits as summing
 * every cluster afresh. Arithmetic is modulo 2^64 (uint64_t): a partial
 * total may wrap, the final sums fit.
 */
#ifndef PGKM_CENTROID_SUMS_H
#define PGKM_CENTROID_SUMS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace pgkm
{

class ThreadPool;

/*
 * The fixed-point scale of a column of n rows whose largest |value| is
 * maxabs: 2^(min(50, 61 - e_n) - e_m), where n + 1 < 2^e_n and maxabs <
 * 2^e_m (frexp). So |rint(v * scale)| < 2^min(50, 61 - e_n): the sum of n
 * values stays below 2^61, and below 2^51 fixed_point's rounding is exact.
 * The resolution is 2^-(min(50, 61 - e_n)) of the column's range: 2^-37 at
 * 10M rows, far finer than float32 near the column's extremes. The CUDA
 * plugin's sums use the same scales, so both devices' sums are the same bits.
 */
static inline double
fixed_point_scale(int64_t n, float maxabs)
{
	int			e_n = 0, e_m = 0;
	std::frexp((double) n + 1.0, &e_n);
	std::frexp(maxabs > 0 ? (double) maxabs : 1.0, &e_m);
	return std::ldexp(1.0, std::min(50, 61 - e_n) - e_m);
}

/*
 * rint(v * scale), round half to even, as two's-complement bits: v * scale
 * is exact (scale a power of two) and below 2^51 in magnitude, so adding
 * 1.5 * 2^52 rounds it to an integer held in the low mantissa bits.
 */
static inline uint64_t
fixed_point(float v, double scale)
{
	const double t = (double) v * scale + 6755399441055744.0;
	uint64_t	b;
	std::memcpy(&b, &t, sizeof(b));
	return b - UINT64_C(0x4338000000000000);
}

/*
 * v on its column's grid, rint(v * scale) / scale, rounded as fixed_point
 * rounds (|v scale| < 2^50: adding 1.5 2^52 rounds to an integer, half to
 * even). Exact in float for a value below 2^24 steps, the only ones it
 * changes. Data on the grid has exact sums: the assignment and the update
 * see the same values, so Lloyd cannot cycle on a column whose tiny values
 * the sums would merge (0 and 1 beside 1e16).
 */
static inline float
on_sum_grid(float v, double scale)
{
	const double r = ((double) v * scale + 6755399441055744.0) - 6755399441055744.0;
	return (float) (r / scale);
}

/*
 * x (n x d) in place on its sums' grid: each value below 2^24 steps of its
 * column's grid becomes on_sum_grid(v, fixed_point_scale(n, maxabs[j]));
 * float resolves the grid above that. Blocks with no such value (all but a
 * few in most data) are only read, 8 lanes at a time. Returns whether any
 * value changed; scales (when given) gets the d scales.
 */
bool		put_on_sum_grid(float *x, int64_t n, int32_t d, const float *maxabs, ThreadPool *pool,
							std::vector<double> *scales = nullptr);

/* Where float stops resolving a column's grid of that scale: below 2^24 steps. */
static inline double
sum_grid_below(double scale)
{
	return 0x1p24 / scale;
}

/* A value in x's units on the grid of a column of that scale, where it is below 2^24 steps (v itself above). */
static inline double
on_sum_grid_if_below(double v, double scale)
{
	return std::fabs(v) < sum_grid_below(scale) ? (double) on_sum_grid((float) v, scale) : v;
}

/* A fixed-point sum as a value: (double) s / scale, with inv_scale = 1 / scale (exact). */
static inline double
fixed_point_value(uint64_t s, double inv_scale)
{
	return (double) (int64_t) s * inv_scale;
}

/* sums[labels[i]] += x[i] (all d features) for rows i = 0..rows. */
void		add_rows_fixed(const float *x, int64_t rows, int32_t d, const int32_t *labels,
						   const double *scale, uint64_t *sums);

/*
 * For each listed row r = rows[t], t < m: sums[to[r]] += x[r] and, where
 * from[t] >= 0, sums[from[t]] -= x[r] (a row that moved between clusters).
 */
void		move_rows_fixed(const float *x, int32_t d, const int32_t *rows, const int32_t *from,
							int32_t m, const int32_t *to, const double *scale, uint64_t *sums);

/*
 * sums[labels[rows[t]]][j0..j1) += x[rows[t]][j0..j1) for t = 0..m (x and
 * labels indexed from the same row).
 */
void		add_listed_rows(const float *x, int32_t d, int32_t j0, int32_t j1, const int32_t *rows,
							int32_t m, const int32_t *labels, const double *scale, uint64_t *sums);

}							/* namespace pgkm */

#endif							/* PGKM_CENTROID_SUMS_H */
