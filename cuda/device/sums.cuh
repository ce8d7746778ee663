/*
 * device/sums.cuh: the per-cluster sums every pass kernel accumulates, and
 * the block prologue and epilogue the pass kernels share.
 *
 * Deterministic mode adds each value as a 64-bit fixed-point integer
 * llrint(x * qscale), qscale its column's scale (chosen from the column's
 * max|x| and n so that no sum can overflow, data.cu); integer addition is
 * associative, so any atomic order gives bit-identical sums, the CPU
 * device's. Fast mode adds fp64 with atomics (order-dependent
 * last bits). acc holds k x d sums then k counts, in either representation.
 */
#ifndef PGKM_CUDA_DEVICE_SUMS_CUH
#define PGKM_CUDA_DEVICE_SUMS_CUH

#include "pass_args.h"
#include "device/reduce.cuh"

#include <cstdint>

namespace pgkm_cuda
{

/* v as a fixed-point integer at scale qscale (round to nearest). */
__device__ __forceinline__ long long
fixed_point(float v, double qscale)
{
	return __double2ll_rn((double) v * qscale);
}

/* Adds value v (fp32 data) of cluster c, column j to the accumulators. */
__device__ __forceinline__ void
acc_add(unsigned long long *acc, int64_t idx, float v, int det, double qscale)
{
	if (det)
	{
		long long	q = fixed_point(v, qscale);
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
