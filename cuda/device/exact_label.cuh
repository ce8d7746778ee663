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
 * Warp-collective: sum over j of ((double) x_j - c_j)^2 with lanes over
 * features, in any order (FMA too): within gamma^w_{d/32 + 8} of the exact
 * value relatively (nonnegative terms, depth <= d/32 + 5, two roundings in
 * each term). Every lane gets it.
 */
__device__ __forceinline__ double
warp_dist2_any(const float *x, const float *xlo, const float *shift, const double *c, int d)
{
	double		e = 0;
	for (int j = threadIdx.x & 31; j < d; j += 32)
	{
		const double t = (double) stored_value(x, xlo, shift, j) - c[j];
		e = fma(t, t, e);
	}
	for (int o = 16; o > 0; o >>= 1)
		e += __shfl_xor_sync(FULL, e, o);
	return e;
}

/*
 * Warp-collective: the label of one row that the float test left open.
 * cand(i) says whether this lane's centroid of batch i (c = 32 i + lane < k)
 * is a candidate: its float value in the path's form (any summation order;
 * the bound holds for each) is not above the test's limit, or c is bi, the
 * float argmin. The stored row is read back from x, xlo and shift
 * (stored_value). Two levels:
 *   - each candidate's fp64 distance e_c by the whole warp (warp_dist2_any),
 *     and their minimum e_min;
 *   - e_c and sqdist_exact's R_c are both within g = gamma^w_{d+8} of D_c,
 *     so a candidate with e_c > e_min ((1 + g) / (1 - g))^2 (1 + 2^-40) has
 *     R_c > R of e_min's centroid, strictly: the others (usually one) are
 *     the band, summed with sqdist_exact's arithmetic if more than one.
 * The lowest R wins, the lowest index on exact ties. Every lane returns it.
 */
template <class Cand>
__device__ int
warp_exact_label(Cand cand, int k, int bi, const float *x, const float *xlo, const float *shift,
				 const double *c64, int d)
{
	const int	lane = threadIdx.x & 31;
	double		emin = dinf(), my_e = dinf();	/* lane i: the i-th candidate (the first 32) */
	int			ncand = 0, my_c = -1;
	for (int c0 = 0; c0 < k; c0 += 32)
	{
		for (unsigned m = __ballot_sync(FULL, cand(c0 >> 5)); m; m &= m - 1)
		{
			const int	cc = c0 + __ffs(m) - 1;
			const double e = warp_dist2_any(x, xlo, shift, c64 + (size_t) cc * d, d);
			if (lane == ncand)
			{
				my_e = e;
				my_c = cc;
			}
			ncand++;
			emin = fmin(emin, e);
		}
	}
	const double g = (d + 8) * 0x1p-53 / (1 - (d + 8) * 0x1p-53);
	const double band = emin * ((1 + g) / (1 - g)) * ((1 + g) / (1 - g)) * (1 + 0x1p-40);
	if (ncand <= 32)
	{
		const bool	in = my_c >= 0 && my_e <= band;
		const unsigned bm = __ballot_sync(FULL, in);
		if (__popc(bm) == 1)
			return __shfl_sync(FULL, my_c, __ffs(bm) - 1);
		double		r = in ? exact_dist2_stored(x, xlo, shift, c64 + (size_t) my_c * d, d) : dinf();
		int			rc = in ? my_c : 0x7fffffff;
		for (int o = 16; o > 0; o >>= 1)
		{
			const double orr = __shfl_xor_sync(FULL, r, o);
			const int	oc = __shfl_xor_sync(FULL, rc, o);
			if (orr < r || (orr == r && oc < rc))
			{
				r = orr;
				rc = oc;
			}
		}
		return rc;
	}
	/* more than 32 candidates (huge values, duplicated centroids): again, in index order */
	double		be = dinf();
	int			bc = bi;
	for (int c0 = 0; c0 < k; c0 += 32)
	{
		for (unsigned m = __ballot_sync(FULL, cand(c0 >> 5)); m; m &= m - 1)
		{
			const int	cc = c0 + __ffs(m) - 1;
			const double *cr = c64 + (size_t) cc * d;
			if (warp_dist2_any(x, xlo, shift, cr, d) > band)
				continue;
			const double r = exact_dist2_stored(x, xlo, shift, cr, d);	/* every lane, the same value */
			if (r < be)
			{
				be = r;
				bc = cc;
			}
		}
	}
	return bc;
}

/*
 * The candidate test of warp_exact_label from a float value function val(c):
 * batch i's centroid of this lane is a candidate when it exists and its
 * value is not above lim (NaN included), or it is bi.
 */
template <class Val>
__device__ __forceinline__ auto
value_candidates(Val val, int k, double lim, int bi)
{
	return [=](int i) {
		const int	c = 32 * i + (int) (threadIdx.x & 31);
		return c < k && (c == bi || !((double) val(c) > lim));
	};
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
