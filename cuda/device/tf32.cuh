/*
 * device/tf32.cuh: the TF32 part of an fp32 value, for the 3xTF32 product
 * (x = tf32_hi(x) + lo, both parts fed to the tensor cores). Host and device.
 */
#ifndef PGKM_CUDA_DEVICE_TF32_CUH
#define PGKM_CUDA_DEVICE_TF32_CUH

#include <cstdint>
#include <cstring>

namespace pgkm_cuda
{

/*
 * The nearest value with 10 explicit mantissa bits (ties away from zero),
 * exactly representable in TF32, so the tensor cores take it unchanged
 * whatever their own rounding; v - tf32_hi(v) is exact in fp32.
 */
__host__ __device__ inline float
tf32_hi(float v)
{
	uint32_t	u;
	memcpy(&u, &v, 4);
	uint32_t	r = (u + 0x1000u) & 0xffffe000u;
	float		h;
	memcpy(&h, &r, 4);
	if ((r & 0x7f800000u) == 0x7f800000u)	/* rounded up into infinity: truncate instead */
	{
		r = u & 0xffffe000u;
		memcpy(&h, &r, 4);
	}
	return h;
}

}							/* namespace pgkm_cuda */

#endif
