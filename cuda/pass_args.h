/*
 * pass_args.h: everything a pass kernel needs for one chunk (or tile) of
 * rows, passed by value to every path's kernels.
 */
#ifndef PGKM_CUDA_PASS_ARGS_H
#define PGKM_CUDA_PASS_ARGS_H

#include "label_bound.h"

#include <cstdint>

namespace pgkm_cuda
{

struct PassArgs
{
	const float *x;				/* rows x d, this chunk */
	int64_t		rows;
	int64_t		row0;			/* global index of the chunk's first row */
	int32_t		d, k;
	const float *cf;			/* centroids for the argmin (layout per path) */
	const float *bias;			/* k, DOT / GEMM / TILED */
	const float *mu;			/* d, centring point (DOT, TILED) */
	const double *c64;			/* k x d fp64 centroids: labels, exact distances */
	int32_t    *labels;			/* n, global */
	double	   *dist2;			/* rows, or NULL */
	unsigned long long *acc;	/* k*d sums then k counts (fixed point or fp64 bits) */
	const double *qscale;		/* d: fixed-point scale per column (deterministic mode) */
	double	   *partials;		/* inertia partials, one per block */
	unsigned long long *moved;
	const float *tile;			/* GEMM: rows x k of -2 x.c' */
	const float *xlo;			/* GEMM 3xTF32: the row is x + xlo (x holds its TF32 part), or NULL */
	LabelTest	test;			/* when a float argmin is the exact label (label_bound.h) */
	const float *shift;			/* GEMM: the exact shift s of the kept rows (x = x' + s), else NULL */
	const float *norms;			/* GEMM: per row of the chunk, ||x'||^2 rounded up */
	int32_t    *list;			/* TILED: chunk rows left to decide in fp64 */
	unsigned int *list_count;	/* TILED: how many, this chunk */
	unsigned long long *list_mask;	/* TILED, k <= 64: each listed row's candidates (bit c), else NULL */
	unsigned long long *decided;	/* rows decided in fp64 this pass */
	int			priv;			/* accumulate in shared memory first */
	int			agg;			/* fused kernel: pre-sum a warp's rows by label */
	int			det;			/* deterministic fixed-point sums */
};

}							/* namespace pgkm_cuda */

#endif
