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
 * is its lane's row's label. The warp sums FILTER_ROWS rows at a time, lanes
 * over features, so that their loads are in flight together.
 */
constexpr int FILTER_ROWS = 8;

__device__ __forceinline__ double
warp_label_bound(const HamArgs &a, int64_t base, int my_l)
{
	double		my_e = 0;
	const int	lane = (int) (threadIdx.x & 31);
	const int	nr = (int) (a.n - base < 32 ? a.n - base : 32);
	for (int r0 = 0; r0 < nr; r0 += FILTER_ROWS)
	{
		double		e[FILTER_ROWS];
#pragma unroll
		for (int u = 0; u < FILTER_ROWS; u++)
		{
			e[u] = 0;
			const int	r = r0 + u;
			const int	l = __shfl_sync(FULL, my_l, r & 31);
			if (r < nr)			/* the same in every lane */
			{
				const size_t o = (size_t) (base + r) * a.d;
				const float *x = a.x + o, *xlo = a.xlo ? a.xlo + o : nullptr;
				const double *c = a.c64 + (size_t) l * a.d;
				for (int j = lane; j < a.d; j += 32)
				{
					const double t = (double) stored_value(x, xlo, a.shift, j) - c[j];
					e[u] = fma(t, t, e[u]);
				}
			}
		}
		for (int o = 16; o > 0; o >>= 1)
#pragma unroll
			for (int u = 0; u < FILTER_ROWS; u++)
				e[u] += __shfl_xor_sync(FULL, e[u], o);
#pragma unroll
		for (int u = 0; u < FILTER_ROWS; u++)
			if (lane == r0 + u)
				my_e = e[u];
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
