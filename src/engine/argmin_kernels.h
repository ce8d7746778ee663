/*
 * argmin_kernels.h: the CPU's nearest-centroid kernel, one per instruction
 * set, picked at run time.
 *
 * For a block of rows it computes, per row and centroid, the GEMM-form value
 *   v_c = fl(n_c - 2 fl(x'.c')),  x' = fl(x - m),  c' = float(c - m),
 *   n_c = float(||c'||^2 summed in fp64)
 * (label_bounds.h bounds its error, with or without FMA, for dot products
 * summed in blocks of ARGMIN_KB features), and keeps per row the argmin (lowest index on
 * equal floats), the best and the runner-up values, and fl(||x'||^2). No
 * rows x k matrix is written: the argmin runs on the accumulator tile
 * while it is still in registers.
 *
 * Layout: rows sit in vector lanes (a block of R rows is transposed and
 * centred on the fly, W x W in registers), centroids are broadcast from
 * panels of CB centroids, feature-major ([block][j][CB]). The panels and n_c
 * of padding centroids are 0 and +inf, so they never win.
 *
 * Instruction sets: AVX-512 (W = 16), AVX2 + FMA (W = 8), and a portable
 * build (W = 4: SSE on x86-64, NEON on AArch64), each its own translation
 * unit compiled for that set; best_isa() reads the CPU once. The float
 * values may differ between sets (FMA, summation order); the labels do not,
 * because every row is then settled against the fp64 bound.
 */
#ifndef PGKM_ARGMIN_KERNELS_H
#define PGKM_ARGMIN_KERNELS_H

#include <cstdint>

namespace pgkm
{

enum class Isa : int32_t
{
	Portable = 0,
	Avx2 = 1,
	Avx512 = 2
};

/* Features per K block: the transposed rows of a block stay within L1/L2. */
constexpr int32_t ARGMIN_KC = 512;
/*
 * Features per summation block: each block's dot products start from 0 and
 * are then added to the running sums, so a value passes through at most
 * argmin_dot_depth(d) roundings instead of d: label_bounds.h's error bound
 * shrinks about sqrt(d) / 2 times at large d, and with it the rows left to
 * fp64. ARGMIN_KC is a multiple of it.
 */
constexpr int32_t ARGMIN_KB = 32;

inline int32_t
argmin_dot_depth(int32_t d)
{
	return d <= ARGMIN_KB ? d : ARGMIN_KB + (d + ARGMIN_KB - 1) / ARGMIN_KB;
}
/* Centroids per group when the K dimension is split (bounds the partial tile). */
constexpr int32_t ARGMIN_GROUP = 1024;

struct ArgminArgs
{
	const float *x;				/* rows, row-major n x d */
	int64_t		rows;			/* rows in this call */
	int32_t		d;
	const float *mean;			/* m, d floats */
	const float *panels;		/* nblocks x d x CB */
	const float *cnorm;			/* nblocks x CB, +inf past k */
	int32_t		k;
	float	   *xt;				/* scratch: ARGMIN_KC x R floats */
	float	   *partial;		/* scratch: ARGMIN_GROUP x R floats (used when d > ARGMIN_KC) */
	int32_t    *idx;			/* out, per row */
	float	   *best;
	float	   *second;
	float	   *x2;
};

struct ArgminKernel
{
	Isa			isa;
	const char *name;
	int32_t		cb;				/* centroids per panel */
	int32_t		rows_per_block;	/* R */
	void		(*run) (const ArgminArgs &a);
};

/* The best set this CPU runs (read once). */
Isa			best_isa();

/* The kernel of isa, or of the best set when the CPU lacks it (nullptr never). */
const ArgminKernel &argmin_kernel(Isa isa);

/* The kernel in use: best_isa() unless a test hook picked another. */
const ArgminKernel &current_argmin_kernel();

/* Packs k x d centred float centroids into the panel layout of a kernel with cb per panel. */
void		pack_panels(const float *centc, const float *cnorm, int32_t k, int32_t d, int32_t cb,
						float *panels, float *cnorm_padded);

/* Floats of the panels (and of the padded norms) for k centroids. */
inline int64_t
panel_floats(int32_t k, int32_t d, int32_t cb)
{
	return (int64_t) ((k + cb - 1) / cb) * cb * d;
}

inline int64_t
padded_norms(int32_t k, int32_t cb)
{
	return (int64_t) ((k + cb - 1) / cb) * cb;
}

/* The per-set entry points (argmin_avx512.cpp, argmin_avx2.cpp, argmin_portable.cpp). */
void		argmin_run_portable(const ArgminArgs &a);
#if defined(__x86_64__)
void		argmin_run_avx2(const ArgminArgs &a);
void		argmin_run_avx512(const ArgminArgs &a);
#endif

}							/* namespace pgkm */

#endif							/* PGKM_ARGMIN_KERNELS_H */
