/*
 * pgkm_cuda_device.cuh: device helpers shared by the pass kernels of every
 * path (header-only: the plugin has no relocatable device code).
 */
#ifndef PGKM_CUDA_DEVICE_CUH
#define PGKM_CUDA_DEVICE_CUH

#include "pgkm_cuda_internal.cuh"

#include <cstdint>

namespace pgkm_cuda
{

static constexpr unsigned FULL = 0xffffffffu;

/* Adds value v (fp32 data) of cluster c, column j to the accumulators. */
__device__ __forceinline__ void
acc_add(unsigned long long *acc, int64_t idx, float v, int det, double qscale)
{
	if (det)
	{
		long long	q = __double2ll_rn((double) v * qscale);
		atomicAdd(acc + idx, (unsigned long long) q);
	}
	else
		atomicAdd(reinterpret_cast<double *>(acc) + idx, (double) v);
}

__device__ __forceinline__ void
acc_count(unsigned long long *acc, int64_t idx, int det)
{
	if (det)
		atomicAdd(acc + idx, 1ULL);
	else
		atomicAdd(reinterpret_cast<double *>(acc) + idx, 1.0);
}

/* Block's private sums -> global: one atomic per non-zero word (either mode). */
__device__ __forceinline__ void
flush_private(const unsigned long long *pacc, unsigned long long *acc, int64_t nacc, int det)
{
	for (int64_t i = threadIdx.x; i < nacc; i += blockDim.x)
	{
		unsigned long long v = pacc[i];
		if (!v)
			continue;			/* integer 0 or fp64 +0.0 */
		if (det)
			atomicAdd(acc + i, v);
		else
			atomicAdd(reinterpret_cast<double *>(acc) + i, __longlong_as_double((long long) v));
	}
}

/* Sum over the block in a fixed tree order; result valid in thread 0. */
__device__ __forceinline__ double
block_sum(double v, double *sh)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	int			w = threadIdx.x >> 5, l = threadIdx.x & 31;
	__syncthreads();
	if (l == 0)
		sh[w] = v;
	__syncthreads();
	double		t = 0;
	if (threadIdx.x < 32)
	{
		t = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : 0.0;
		for (int o = 16; o > 0; o >>= 1)
			t += __shfl_down_sync(0xffffffffu, t, o);
	}
	return t;
}

/*
 * v summed over the block through sh[blockDim.x] in a fixed tree order
 * (blockDim.x a power of two), so the result is bit-identical run to run;
 * every thread gets it. sh may be written again only after a __syncthreads.
 */
__device__ __forceinline__ double
block_tree_sum(double v, double *sh)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w >>= 1)
	{
		if ((int) threadIdx.x < w)
			sh[threadIdx.x] += sh[threadIdx.x + w];
		__syncthreads();
	}
	return sh[0];
}

/*
 * A pass kernel's block prologue, the same for every path: the block's moved
 * counter and (if the block keeps them) its private sums start at zero. The
 * first __syncthreads of the caller orders these stores before any use.
 */
__device__ __forceinline__ void
start_pass_block(const PassArgs &a, unsigned int *moved_sh, unsigned long long *pacc, int64_t nacc)
{
	if (threadIdx.x == 0)
		*moved_sh = 0;
	if (a.priv)
		for (int64_t i = threadIdx.x; i < nacc; i += blockDim.x)
			pacc[i] = 0ULL;
}

/*
 * A pass kernel's block epilogue, the same for every path: the block's
 * inertia into its own partial slot (fixed-order reduction later), its moved
 * count into the pass total, and its private sums (if any) into the global
 * sums. my_moved may be 0 for kernels that do not count moves.
 */
__device__ __forceinline__ void
finish_pass_block(const PassArgs &a, int64_t slot_base, double my_inertia, unsigned my_moved,
				  double *red, unsigned int *moved_sh, const unsigned long long *pacc, int64_t nacc)
{
	double		tot = block_sum(my_inertia, red);
	if (threadIdx.x == 0)
		a.partials[slot_base + blockIdx.x] = tot;
	if (my_moved)
		atomicAdd(moved_sh, my_moved);
	__syncthreads();
	if (threadIdx.x == 0 && *moved_sh)
		atomicAdd(a.moved, (unsigned long long) *moved_sh);
	if (a.priv)
		flush_private(pacc, a.acc, nacc, a.det);	/* the __syncthreads above ends the adds */
}

}							/* namespace pgkm_cuda */

#endif
