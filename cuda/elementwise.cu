/*
 * elementwise.cu: the small data-parallel kernels around the passes: max |x|
 * (the fixed-point scale), centring, the 3xTF32 split, label fill, and the
 * fixed-order sum of a pass's inertia partials.
 */
#include "device/reduce.cuh"
#include "device/tf32.cuh"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

/* x -> (tf32_hi(x), x - tf32_hi(x)) in place and into lo: the 3xTF32 operands. */
__global__ void
split_tf32_kernel(float *x, float *lo, int64_t count)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (int64_t) gridDim.x * blockDim.x)
	{
		float		v = x[i], h = tf32_hi(v);
		x[i] = h;
		lo[i] = v - h;
	}
}

/* Fixed-order sum of the pass's inertia partials (one block). */
__global__ void
reduce_partials_kernel(const double *p, int64_t n, double *out)
{
	__shared__ double sh[1024];
	double		s = 0;
	for (int64_t i = threadIdx.x; i < n; i += 1024)
		s += p[i];
	s = block_tree_sum(s, sh);
	if (threadIdx.x == 0)
		*out = s;
}

/* max |x| over count floats: non-negative floats order like their bit patterns. */
__global__ void
maxabs_kernel(const float *x, int64_t count, float *out)
{
	float		m = 0.0f;
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
		m = fmaxf(m, fabsf(x[i]));
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	if ((threadIdx.x & 31) == 0)
		atomicMax(reinterpret_cast<unsigned int *>(out), __float_as_uint(m));
}

__global__ void
fill_int_kernel(int32_t *p, int64_t n, int32_t v)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		p[i] = v;
}

/* x[i][j] -= mu[j] in place (GEMM path: the device copy is centred once). */
__global__ void
center_kernel(float *x, int64_t count, int d, const float *mu)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
		x[i] = x[i] - mu[i % d];
}

void
launch_reduce_partials(const double *partials, int64_t nslots, double *out, cudaStream_t s)
{
	reduce_partials_kernel<<<1, 1024, 0, s>>>(partials, nslots, out);
	CKLAUNCH("reduce_partials_kernel");
}

void
launch_maxabs(const float *x, int64_t count, float *out, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(1024, (count + 255) / 256);
	maxabs_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, count, out);
	CKLAUNCH("maxabs_kernel");
}

void
launch_center(float *x, int64_t rows, int d, const float *mu, cudaStream_t s)
{
	int64_t		count = rows * d;
	int64_t		g = std::min<int64_t>(8LL * 1024, (count + 255) / 256);
	center_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, count, d, mu);
	CKLAUNCH("center_kernel");
}

void
launch_split_tf32(float *x, float *lo, int64_t count, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(8LL * 1024, (count + 255) / 256);
	split_tf32_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, lo, count);
	CKLAUNCH("split_tf32_kernel");
}

void
launch_fill_int(int32_t *p, int64_t n, int32_t v, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(4096, (n + 255) / 256);
	fill_int_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(p, n, v);
	CKLAUNCH("fill_int_kernel");
}

}							/* namespace pgkm_cuda */
