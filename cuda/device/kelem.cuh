/*
 * device/kelem.cuh: the element types of a stored K (float, bfloat16,
 * float16): rounding a float into one, reading one back, and a 16-byte load
 * of 16 / sizeof(T) consecutive elements as floats.
 */
#ifndef PGKM_CUDA_DEVICE_KELEM_CUH
#define PGKM_CUDA_DEVICE_KELEM_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace pgkm_cuda
{

template <typename T>
__device__ __forceinline__ T to_elem(float v);
template <>
__device__ __forceinline__ float
to_elem<float>(float v)
{
	return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16
to_elem<__nv_bfloat16>(float v)
{
	return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half
to_elem<__half>(float v)
{
	return __float2half_rn(v);
}

__device__ __forceinline__ float
elem_to_float(float v)
{
	return v;
}
__device__ __forceinline__ float
elem_to_float(__nv_bfloat16 v)
{
	return __bfloat162float(v);
}
__device__ __forceinline__ float
elem_to_float(__half v)
{
	return __half2float(v);
}

/* Elements of T in one 16-byte load. */
template <typename T>
struct KVec
{
	static constexpr int N = 16 / (int) sizeof(T);
};

/* out[0..N) = the N elements at p (16-byte aligned). */
__device__ __forceinline__ void
load16(const float *p, float *out)
{
	const float4 v = __ldg(reinterpret_cast<const float4 *>(p));
	out[0] = v.x;
	out[1] = v.y;
	out[2] = v.z;
	out[3] = v.w;
}

__device__ __forceinline__ void
load16(const __nv_bfloat16 *p, float *out)
{
	const uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
	const unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int e = 0; e < 4; e++)
	{
		__nv_bfloat162 h = *reinterpret_cast<const __nv_bfloat162 *>(&w[e]);
		const float2 f = __bfloat1622float2(h);
		out[2 * e] = f.x;
		out[2 * e + 1] = f.y;
	}
}

__device__ __forceinline__ void
load16(const __half *p, float *out)
{
	const uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
	const unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int e = 0; e < 4; e++)
	{
		__half2	h = *reinterpret_cast<const __half2 *>(&w[e]);
		const float2 f = __half22float2(h);
		out[2 * e] = f.x;
		out[2 * e + 1] = f.y;
	}
}

}							/* namespace pgkm_cuda */

#endif
