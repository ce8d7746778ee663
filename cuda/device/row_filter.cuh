/*
 * device/row_filter.cuh: the pieces Hamerly's and Yinyang's filters share
 * (hamerly.cu, yinyang.cu): a warp's 32 rows' fp64 distances to their
 * labels' centroids, the bound T over them, and the rows left open appended
 * to the pass's list.
 */
#ifndef PGKM_CUDA_DEVICE_ROW_FILTER_CUH
#define PGKM_CUDA_DEVICE_ROW_FILTER_CUH

#include "device/bounded_row.cuh"
#include "device/exact_label.cuh"
#include "hamerly_args.h"

#include <cstdint>

namespace pgkm_cuda
{

/*
 * Warp-collective, rows base .. base + 31: lane r gets T >= ||x - c_label||
 * of row base + r (upper_dist of e, the fp64 distance in any order); my_l
 * is its lane's row's label.
 */
__device__ __forceinline__ double
warp_label_bound(const HamArgs &a, int64_t base, int my_l)
{
	double		my_e = 0;
	const int	nr = (int) (a.n - base < 32 ? a.n - base : 32);
	for (int r = 0; r < nr; r++)
	{
		const int64_t row = base + r;
		const int	l = __shfl_sync(FULL, my_l, r);
		const size_t o = (size_t) row * a.d;
		const double e = warp_dist2_any(a.x + o, a.xlo ? a.xlo + o : nullptr, a.shift, a.c64 + (size_t) l * a.d,
										a.d);
		if ((int) (threadIdx.x & 31) == r)
			my_e = e;
	}
	return upper_dist(my_e, a.gup, a.tiny);
}

/* Warp-collective: row i appended to the list where open. */
__device__ __forceinline__ void
append_open(const HamArgs &a, bool open, int64_t i)
{
	const int	lane = threadIdx.x & 31;
	const unsigned ball = __ballot_sync(FULL, open);
	unsigned	pos = 0;
	if (lane == 0 && ball)
		pos = atomicAdd(a.open_count, (unsigned) __popc(ball));
	pos = __shfl_sync(FULL, pos, 0);
	if (open)
		a.open[pos + __popc(ball & ((1u << lane) - 1))] = (int32_t) i;
}

}							/* namespace pgkm_cuda */

#endif
