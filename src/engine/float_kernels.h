/*
 * float_kernels.h: the float32 squared distances of the pruned assignment
 * methods, between a centred float row and centred float centroids. Any
 * summation order and FMA are allowed: exact_bounds.h bounds the error of
 * every order, and the label never rests on these floats alone.
 */
#ifndef PGKM_FLOAT_KERNELS_H
#define PGKM_FLOAT_KERNELS_H

#include "exact_bounds.h"

#include <cstdint>

namespace pgkm
{

/* Centroids per block of the transposed layout (one 16-lane vector). */
constexpr int32_t BLOCK = 16;

/* sum over j < d of (a_j - b_j)^2 in float. */
float		fsqdist(const float *a, const float *b, int32_t d);

/*
 * xc = fl32(x - m) (d floats; exact_bounds.h point 3), *n2 = the fp64 sum
 * of the squares of xc (any order), and the float squared distance of xc
 * to the centred centroid c (as fsqdist, any order).
 */
float		centre_dist(const float *x, const float *m, const float *c, int32_t d, float *xc,
						double *n2);

/*
 * The squared distances of row x to the centroids of nb consecutive blocks,
 * each block d x BLOCK floats (feature-major: block[j * BLOCK + lane]), into
 * out[0 .. nb * BLOCK).
 */
void		fsqdist_blocks(const float *x, const float *blocks, int32_t d, int32_t nb, float *out);

/* Rows per call of gemm_rows_block: its accumulators fill the vector registers. */
constexpr int32_t GEMM_ROWS = 8;

/*
 * The GEMM-form values (exact_bounds.h point 6) of nr <= GEMM_ROWS centred
 * rows x[r] (d floats each) against one block (d x BLOCK, feature-major)
 * with norms cn[BLOCK]: out[r][lane] = cn[lane] - 2 x[r].c'_lane, and
 * *mins[r] = the smallest of the row's BLOCK values. The block is read once
 * for all the rows.
 */
void		gemm_rows_block(const float *const *x, int32_t nr, const float *block, const float *cn,
							int32_t d, float *const *out, float *const *mins);

/*
 * The positions i < n with l[i] <= lim into idx (in order); returns how
 * many. Branch-free.
 */
int32_t		select_le(const float *l, int32_t n, float lim, int32_t *idx);

/*
 * Bounds from m rows of Lloyd's tiled kernel (best and runner-up values,
 * float x2; exact_bounds.h point 6, e_c <= ec_max): hi[r] >= the distance
 * to the best's centroid, lo[r] <= the distance to every other centroid.
 */
void		gemm_row_bounds(const float *best, const float *second, const float *x2, int64_t m,
							const GemmMargins &gm, double ec_max, double *hi, double *lo);

/* out[i] = to_float_down(GemmMargins::lo(r, V[i], e)) for V[0 .. n). */
void		gemm_lo_array(const float *V, int32_t n, const GemmRow &r, double e, float *out);

/* The smallest of l[0 .. n) (n > 0). */
float		min_f(const float *l, int32_t n);

/* out[i] = lo_f(F[i], p) (exact_bounds.h) for finite F[0 .. n). */
void		lo_f_array(const float *F, int32_t n, FloatLo p, float *out);

/*
 * Lower bounds l[0 .. n) lowered by the upper bounds s[i] of their drifts
 * (sub_down_f); returns the smallest result.
 */
float		lower_bounds_drift(float *l, const float *s, int32_t n);

/* lower_bounds_drift's result, l left as it is. */
float		lower_bounds_drift_min(const float *l, const float *s, int32_t n);

/*
 * Elkan's filter: keep[c] = 1 where l[c] <= lim and icd[c] <= sep_lim (the
 * candidates no bound rules out), 0 elsewhere; returns how many are kept.
 */
int32_t		bounds_filter(const float *l, const float *icd, float lim, float sep_lim, int32_t n,
						  uint8_t *keep);

/*
 * The smallest of F[0 .. n) (n > 0, a multiple of BLOCK) and its first
 * position; *finite = no F is infinite or NaN.
 */
int32_t		argmin_f(const float *F, int32_t n, float *min, bool *finite);

/* out[b] = the smallest of the BLOCK values of block b of F, for nb blocks. */
void		block_mins(const float *F, int32_t nb, float *out);

}							/* namespace pgkm */

#endif							/* PGKM_FLOAT_KERNELS_H */
