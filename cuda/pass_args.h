/*
 * pass_args.h: everything a pass kernel needs for one chunk (or tile) of
 * rows, passed by value to every path's kernels.
 */
#ifndef PGKM_CUDA_PASS_ARGS_H
#define PGKM_CUDA_PASS_ARGS_H

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
	const double *c64;			/* k x d fp64 centroids (exact distance), in x's frame */
	int32_t    *labels;			/* n, global */
	double	   *dist2;			/* rows, or NULL */
	unsigned long long *acc;	/* k*d sums then k counts (fixed point or fp64 bits) */
	double		qscale;			/* fixed-point scale (deterministic mode) */
	double	   *partials;		/* inertia partials, one per block */
	unsigned long long *moved;
	const float *tile;			/* GEMM: rows x k of -2 x.c' */
	const float *xlo;			/* GEMM 3xTF32: x' = x + xlo (x holds the TF32 part), or NULL */
	int			priv;			/* accumulate in shared memory first */
	int			agg;			/* fused kernel: pre-sum a warp's rows by label */
	int			det;			/* deterministic fixed-point sums */
};

}							/* namespace pgkm_cuda */

#endif
