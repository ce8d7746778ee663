/*
 * device/distance.cuh: the exact fp64 squared distance sum((x - c)^2) that
 * inertia and the returned distances use, in the CPU engine's operation order.
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
