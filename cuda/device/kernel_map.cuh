/*
 * device/kernel_map.cuh: kernel k-means' elementwise map on the device, the
 * CPU device's arithmetic (src/engine/kernel_cpu.cpp, map_row and exact) in
 * the same order with every fp64 operation rounded on its own (no
 * contraction into FMAs, which the CPU build does not do either): from the
 * float Gram entry g = <x'_i, x'_l> of the centred rows,
 *   RBF:   exp(-gamma max(||x'_i||^2 + ||x'_l||^2 - 2 g, 0))
 *   dot:   kappa(((g + <x'_i, m>) + <x'_l, m>) + <m, m>)
 * and, where the squared distance is within the float product's rounding
 * of 0, the value straight from the raw rows in fp64 (identical rows: K_ii).
 */
#ifndef PGKM_CUDA_DEVICE_KERNEL_MAP_CUH
#define PGKM_CUDA_DEVICE_KERNEL_MAP_CUH

#include "pgkm_engine.h"

#include <cstdint>

namespace pgkm_cuda
{

struct KMapArgs
{
	int			kind;			/* pgkm_kernel */
	int			degree;
	double		gamma, coef0;
	double		mm;				/* <m, m> */
	double		near;			/* relative squared distance below which a value is recomputed */
	const double *diag, *cnorm, *coff;	/* n: K_ii, ||x'_i||^2, <x'_i, m> */
	const float *x;				/* raw rows, n x d */
	int			d;
	unsigned int *flag;
};

#ifdef __CUDACC__

/* kappa of a dot product for kernel KIND (linear, polynomial, sigmoid): KernelParams::of_dot. */
template <int KIND>
__device__ __forceinline__ double
kmap_of_dot_k(const KMapArgs &m, double u)
{
	if (KIND == PGKM_KERNEL_POLYNOMIAL)
	{
		double		b = __dadd_rn(__dmul_rn(m.gamma, u), m.coef0), r = 1.0;
		for (int e = m.degree; e > 0; e >>= 1)
		{
			if (e & 1)
				r = __dmul_rn(r, b);
			if (e > 1)
				b = __dmul_rn(b, b);
		}
		return r;
	}
	if (KIND == PGKM_KERNEL_SIGMOID)
		return tanh(__dadd_rn(__dmul_rn(m.gamma, u), m.coef0));
	return u;
}

__device__ __forceinline__ double
kmap_of_dot(const KMapArgs &m, double u)
{
	return m.kind == PGKM_KERNEL_POLYNOMIAL ? kmap_of_dot_k<PGKM_KERNEL_POLYNOMIAL>(m, u)
		: m.kind == PGKM_KERNEL_SIGMOID ? kmap_of_dot_k<PGKM_KERNEL_SIGMOID>(m, u) : u;
}

/* kappa of a squared distance (RBF), clamped at 0. */
__device__ __forceinline__ double
kmap_of_sqdist(const KMapArgs &m, double d2)
{
	return exp(__dmul_rn(-m.gamma, d2 > 0 ? d2 : 0.0));
}

/* K_il in fp64 from the raw rows (KernelParams::of_rows); identical rows give K_ii. */
static __device__ __noinline__ double
kmap_exact(const KMapArgs &m, int64_t i, int64_t l)
{
	const float *a = m.x + i * m.d, *b = m.x + l * m.d;
	double		d2 = 0, dot = 0;
	for (int j = 0; j < m.d; j++)
	{
		const double u = a[j], v = b[j], t = __dsub_rn(u, v);
		d2 = __dadd_rn(d2, __dmul_rn(t, t));
		dot = __dadd_rn(dot, __dmul_rn(u, v));
	}
	if (d2 == 0)
		return m.diag[i];
	return m.kind == PGKM_KERNEL_RBF ? kmap_of_sqdist(m, d2) : kmap_of_dot(m, dot);
}

/*
 * K_il (i != l) of kernel KIND from the Gram entry g, with row i's and row
 * l's statistics passed in (callers hold them in registers).
 */
template <int KIND>
__device__ __forceinline__ double
kmap_value_k(const KMapArgs &m, float g, int64_t i, int64_t l, double cni, double coi, double cnl, double col)
{
	const double gv = g, s = __dadd_rn(cni, cnl), d2 = __dsub_rn(s, 2.0 * gv);
	double		v;
	if (KIND == PGKM_KERNEL_RBF)
		v = kmap_of_sqdist(m, d2);
	else
		v = kmap_of_dot_k<KIND>(m, __dadd_rn(__dadd_rn(__dadd_rn(gv, coi), col), m.mm));
	if (d2 <= __dmul_rn(m.near, s))
		v = kmap_exact(m, i, l);
	return v;
}

/* The same for m.kind (one uniform branch). */
__device__ __forceinline__ double
kmap_value(const KMapArgs &m, float g, int64_t i, int64_t l, double cni, double coi, double cnl, double col)
{
	switch (m.kind)
	{
		case PGKM_KERNEL_RBF:
			return kmap_value_k<PGKM_KERNEL_RBF>(m, g, i, l, cni, coi, cnl, col);
		case PGKM_KERNEL_POLYNOMIAL:
			return kmap_value_k<PGKM_KERNEL_POLYNOMIAL>(m, g, i, l, cni, coi, cnl, col);
		case PGKM_KERNEL_SIGMOID:
			return kmap_value_k<PGKM_KERNEL_SIGMOID>(m, g, i, l, cni, coi, cnl, col);
		default:
			return kmap_value_k<PGKM_KERNEL_LINEAR>(m, g, i, l, cni, coi, cnl, col);
	}
}

/* The float a stored or summed K value is; flags a value that is not finite. */
__device__ __forceinline__ float
kmap_float(const KMapArgs &m, double v)
{
	const float f = (float) v;
	if (!isfinite(f))
		atomicOr(m.flag, 1u);
	return f;
}

#endif

}							/* namespace pgkm_cuda */

#endif
