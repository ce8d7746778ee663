/*
 * device/bounded_row.cuh: a bounded pass's per-row arithmetic (the proofs
 * are in hamerly.cu's header): from an fp64 squared distance e within
 * g = gamma^w_{d+40} of the real R (sqdist_exact's, or an any-order sum),
 *   upper_dist: T >= sqrt(R) with T^2 (1 - g) >= e, so any centroid proven
 *     farther than T has a larger sqdist_exact;
 *   lower_dist: <= sqrt(R), R >= (e - tiny) / (1 + g) >= e glo - tiny;
 * each operation rounded outwards (NaN in gives NaN out: every test on it
 * fails). And the exact argmin's fold: the lowest sqdist_exact, then the
 * lowest index, bi < 0 meaning none yet; and the row loop of the passes
 * that label a row per warp.
 */
#ifndef PGKM_CUDA_DEVICE_BOUNDED_ROW_CUH
#define PGKM_CUDA_DEVICE_BOUNDED_ROW_CUH

#include "device/reduce.cuh"

#include <cstdint>

namespace pgkm_cuda
{

__device__ __forceinline__ double
upper_dist(double e, double gup, double tiny)
{
	return __dsqrt_ru(__dadd_ru(__dmul_ru(e, gup), tiny));
}

__device__ __forceinline__ double
lower_dist(double e, double glo, double tiny)
{
	return __dsqrt_rd(fmax(__dsub_rd(__dmul_rd(e, glo), tiny), 0.0));
}

/* (e, j) into (best, bi): the lowest value, then the lowest index; NaN never wins. */
__device__ __forceinline__ void
fold_exact(double &best, int &bi, double e, int j)
{
	if (e < best || (e == best && j >= 0 && (bi < 0 || j < bi)))
	{
		best = e;
		bi = j;
	}
}

/* Warp-collective fold_exact over the lanes; every lane gets the result. */
__device__ __forceinline__ void
warp_fold_exact(double &best, int &bi)
{
	for (int off = 16; off > 0; off >>= 1)
	{
		const double ob = __shfl_xor_sync(FULL, best, off);
		const int	oi = __shfl_xor_sync(FULL, bi, off);
		fold_exact(best, bi, ob, oi);
	}
}

/*
 * A warp per row of [a.list0, a.list1) (WARPS warps per block): label =
 * body(i, computed), every lane the same (< 0: none, taken as 0), written
 * with its move; the moves and the distances body counted added to a.moved
 * and a.computed once per thread.
 */
template <int WARPS, class Args, class Body>
__device__ __forceinline__ void
label_rows(const Args &a, Body body)
{
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	unsigned	moved = 0;
	unsigned long long computed = 0;
	for (int64_t i = a.list0 + (int64_t) blockIdx.x * WARPS + warp; i < a.list1; i += (int64_t) gridDim.x * WARPS)
	{
		const int	bi = body(i, computed);
		if (lane == 0)
		{
			const int	lbl = bi >= 0 ? bi : 0;
			moved += a.labels[i] != lbl;
			a.labels[i] = lbl;
		}
	}
	if (moved)
		atomicAdd(a.moved, (unsigned long long) moved);
	if (computed)
		atomicAdd(a.computed, computed);
}

}							/* namespace pgkm_cuda */

#endif
