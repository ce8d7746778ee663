/*
 * hamerly_args.h: what the kernels of a bounded pass get (Hamerly and
 * Yinyang: hamerly.cu, hamerly_label.cu, yinyang.cu; Elkan: elkan.cu; sort:
 * sort.cu; the shared centroid_geometry.cu), by value. Fields a method does
 * not use are null.
 */
#ifndef PGKM_CUDA_HAMERLY_ARGS_H
#define PGKM_CUDA_HAMERLY_ARGS_H

#include "label_bound.h"

#include <cstdint>

namespace pgkm_cuda
{

struct HamArgs
{
	const float *x, *xlo, *shift;	/* resident rows as kept (stored_value) */
	int64_t		n;
	int			d, k;
	const double *c64, *cprev;	/* current centroids; those the bounds refer to */
	float	   *cf;				/* float(c64), k x d */
	int32_t    *labels;
	double	   *lower;			/* per row: <= ||x - c|| for every c but its label's
								 * (Yinyang: >= ||x - c_label||, hamerly.cu's T) */
	int32_t    *open;			/* rows to label */
	unsigned int *open_count;	/* open's length, then ties' */
	int32_t    *ties;			/* listed rows the float level left to fp64 */
	double	   *geom;			/* k drifts, then k half-distances */
	double		gup, glo;		/* hamerly.cu's 1 + 5g and 1 - 2g */
	double		tiny;			/* covers the terms' underflows */
	int			first;			/* no valid bounds: every row is listed */
	int64_t		list0, list1;	/* a labelling launch's part of its list */
	unsigned long long *moved;
	const float *cfc, *bias, *mu;	/* the path's centred centroids (c' or -2c'), fl(||c'||^2), the centring point */
	/* Yinyang (yinyang.cu); t = 0 and nullptr for Hamerly */
	int			t;				/* groups: YY_GROUP consecutive positions of perm each */
	double	   *glower;			/* t x n: <= ||x - c|| for every c of the group but the row's label */
	const int32_t *perm, *pos;	/* centroid at each position; each centroid's position (group: / YY_GROUP) */
	unsigned long long *work;	/* distances the labelling computed */
	float	   *pairs;			/* k x k: <= ||c_a - c_j|| (row a), or null */
	int32_t    *pair_idx;		/* k x k: j at (a, j), for the sort's values, or null */
	float	   *lbound;			/* Elkan, n x k: <= ||x - c_j|| for the centroids cprev */
	const float *rank_key;		/* sort, k x k: row a's pairs ascending */
	const int32_t *rank_idx;	/* sort: their centroids */
	unsigned long long *computed;	/* Elkan, sort: distances computed */
};

/* The centroid at position p of the labelling's order. */
__host__ __device__ inline int
centroid_at(const HamArgs &a, int p)
{
	return a.perm ? a.perm[p] : p;
}

/*
 * The centred level's margins (hamerly_label.cu): the path's test, and for
 * the runner-up's lower bound Eg = gf2 + gfx X >= |V - (||c'||^2 - 2 x'.c')|,
 * X^2 within [(x2 - ud) inv_lo, (x2 + ud) inv_hi], e = 2^-23 X + ec >=
 * ||x' - (x - mu)|| + ||c' - (c - mu)||.
 */
struct CentredBound
{
	LabelTest	test;
	float		mscale;			/* V = fl(mscale acc + bias): -2 over c', 1 over -2c' */
	double		gf2, gfx, inv_lo, inv_hi, ud, ec;
};

}							/* namespace pgkm_cuda */

#endif
