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
 * The squared distances of row x to the centroids of nb consecutive blocks,
 * each block d x BLOCK floats (feature-major: block[j * BLOCK + lane]), into
 * out[0 .. nb * BLOCK).
 */
void		fsqdist_blocks(const float *x, const float *blocks, int32_t d, int32_t nb, float *out);

/* out[i] = lo_f(F[i], p) (exact_bounds.h) for finite F[0 .. n). */
void		lo_f_array(const float *F, int32_t n, FloatLo p, float *out);

/*
 * Lower bounds l[0 .. n) lowered by the upper bounds s[i] of their drifts
 * (sub_down_f); returns the smallest result.
 */
float		lower_bounds_drift(float *l, const float *s, int32_t n);

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
