/*
 * gram_kernels.h: the CPU's Gram tile kernel for kernel k-means, one per
 * instruction set, picked at run time like the nearest-centroid kernel
 * (argmin_kernels.h, whose Isa and best_isa() it shares).
 *
 * A tile is G[a][b] = sum_j A[a][j] B[b][j] in float for up to 256 rows of
 * each side (the centred rows of two row panels). Both sides are packed
 * first, feature-major: A in panels of CB rows broadcast one at a time
 * ([block][j][CB]), B in blocks of R rows that sit in vector lanes
 * ([block][j][R]); the kernel then keeps a CB x R accumulator tile in
 * registers over a block of ARGMIN_KC features, so no BLAS is needed.
 * Padding rows are zero; their results are ignored.
 */
#ifndef PGKM_GRAM_KERNELS_H
#define PGKM_GRAM_KERNELS_H

#include "argmin_kernels.h"

#include <cstdint>

namespace pgkm
{

struct GramArgs
{
	const float *a;				/* blocks_a x d x cb */
	const float *b;				/* blocks_b x d x rows_per_block */
	int32_t		d;
	int32_t		blocks_a;
	int32_t		blocks_b;
	float	   *out;			/* (blocks_a cb) x ld, ld >= blocks_b rows_per_block */
	int64_t		ld;
};

struct GramKernel
{
	Isa			isa;
	const char *name;
	int32_t		cb;				/* A rows per panel */
	int32_t		rows_per_block; /* B rows per block (R) */
	void		(*run) (const GramArgs &a);
};

/* The kernel of the best instruction set this CPU runs. */
const GramKernel &gram_kernel();

/*
 * Packs rows r0 .. r0 + nr - 1 of x (n x d) centred on mean (x - mean in
 * float) into blocks of per rows, feature-major ([block][j][per]), zero
 * past nr; blocks = ceil(rows / per) of them, rows >= nr.
 */
void		gram_pack(const float *x, int64_t r0, int64_t nr, int64_t rows, int32_t d,
					  const float *mean, int32_t per, float *out);

/* The per-set entry points (gram_avx512.cpp, gram_avx2.cpp, gram_portable.cpp). */
void		gram_run_portable(const GramArgs &a);
#if defined(__x86_64__)
void		gram_run_avx2(const GramArgs &a);
void		gram_run_avx512(const GramArgs &a);
#endif

}							/* namespace pgkm */

#endif							/* PGKM_GRAM_KERNELS_H */
