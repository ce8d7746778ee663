/*
 * device/distance.cuh: the exact fp64 squared distance sum((x - c)^2) that
 * labels, inertia and the returned distances use: sqdist_exact's operations
 * (src/engine/exact_distance.h) in its order, without contraction, so the
 * value is the CPU engine's bit for bit.
 */
#ifndef PGKM_CUDA_DEVICE_DISTANCE_CUH
#define PGKM_CUDA_DEVICE_DISTANCE_CUH

namespace pgkm_cuda
{

__device__ __forceinline__ double
exact_dist2(const float *xr, const double *c, int d)
{
	double		e = 0;
	for (int j = 0; j < d; j++)
	{
		double		t = (double) xr[j] - c[j];
		e = __dadd_rn(e, __dmul_rn(t, t));
	}
	return e;
}

/*
 * Feature j of a row as stored, from what the device keeps: x (3xTF32: its
 * TF32 part, lo the rest, or lo null), shifted by s (the GEMM path's exact
 * shift, or shift null). Every add is exact (gemm.cu, label_bound.h).
 */
__device__ __forceinline__ float
stored_value(const float *x, const float *lo, const float *shift, int j)
{
	const float v = lo ? __fadd_rn(x[j], lo[j]) : x[j];
	return shift ? __fadd_rn(v, shift[j]) : v;
}

/* exact_dist2 of a row kept shifted and/or split (stored_value). */
__device__ __forceinline__ double
exact_dist2_stored(const float *x, const float *lo, const float *shift, const double *c, int d)
{
	double		e = 0;
	for (int j = 0; j < d; j++)
	{
		double		t = (double) stored_value(x, lo, shift, j) - c[j];
		e = __dadd_rn(e, __dmul_rn(t, t));
	}
	return e;
}

/* Same, from a row held in registers (DIRECT path: x is not centred). */
template <int DP>
__device__ __forceinline__ double
exact_dist2_regs(const float (&xr)[DP], const double *c, int d)
{
	double		e = 0;
#pragma unroll
	for (int j = 0; j < DP; j++)
		if (j < d)
		{
			double		t = (double) xr[j] - c[j];
			e = __dadd_rn(e, __dmul_rn(t, t));
		}
	return e;
}

}							/* namespace pgkm_cuda */

#endif
