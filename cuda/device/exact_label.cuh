/*
 * device/exact_label.cuh: the fp64 decision of a row that label_bound.h's
 * test leaves open: among the centroids whose
 * float value is not above the limit (and the float argmin), the lowest
 * sqdist_exact, the lowest index on exact ties, computed with
 * sqdist_exact's arithmetic (device/distance.cuh), so the label is the CPU
 * engine's bit for bit.
 */
#ifndef PGKM_CUDA_DEVICE_EXACT_LABEL_CUH
#define PGKM_CUDA_DEVICE_EXACT_LABEL_CUH

#include "device/distance.cuh"
#include "device/reduce.cuh"
#include "label_bound.h"

#include <cstdint>

namespace pgkm_cuda
{

__device__ __forceinline__ double
dinf()
{
	return __longlong_as_double(0x7ff0000000000000LL);
}

/*
 * Warp-collective: the decision for one row, lanes over centroids (lane l
 * takes c = l, l + 32, ...): val(c) is the float value of centroid c in the
 * path's form (any summation order; the bound holds for each), bi the float
 * argmin; each candidate lane sums its centroid's distance in order, and the
 * lowest distance wins, the lowest index on exact ties. The stored row is read back from x, xlo and shift
 * (stored_value). Every lane returns the label.
 */
template <class Val>
__device__ int
warp_exact_label(Val val, int k, double lim, int bi, const float *x, const float *xlo, const float *shift,
				 const double *c64, int d)
{
	const int	lane = threadIdx.x & 31;
	double		be = dinf();
	int			bc = bi;
	for (int c0 = 0; c0 < k; c0 += 32)
	{
		const int	c = c0 + lane;
		const bool	cand = c < k && (c == bi || !((double) val(c) > lim));
		if (!__any_sync(FULL, cand))
			continue;
		double		e = dinf();
		int			ec = 0x7fffffff;
		if (cand)
		{
			e = exact_dist2_stored(x, xlo, shift, c64 + (size_t) c * d, d);
			ec = c;
		}
		for (int o = 16; o > 0; o >>= 1)
		{
			const double oe = __shfl_xor_sync(FULL, e, o);
			const int	oc = __shfl_xor_sync(FULL, ec, o);
			if (oe < e || (oe == e && oc < ec))
			{
				e = oe;
				ec = oc;
			}
		}
		if (e < be)				/* earlier batches hold lower indices */
		{
			be = e;
			bc = ec;
		}
	}
	return bc;
}

/* Merges another (best, index, runner-up) into mine: lowest value, then lowest index. */
__device__ __forceinline__ void
merge_best2(float &v, int &c, float &v2, float ov, int oc, float ov2)
{
	if (ov < v || (ov == v && oc < c))
	{
		v2 = fminf(ov2, v);
		v = ov;
		c = oc;
	}
	else
		v2 = fminf(v2, ov);
}

}							/* namespace pgkm_cuda */

#endif
