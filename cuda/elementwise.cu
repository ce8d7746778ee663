/*
 * elementwise.cu: the small data-parallel kernels around the passes: max |x|
 * (the fixed-point scale), the GEMM path's column ranges, exact shift and row
 * norms (its label test), the 3xTF32 split, label fill, and the fixed-order
 * sum of a pass's inertia partials.
 */
#include "device/reduce.cuh"
#include "device/tf32.cuh"
#include "launch.cuh"

#include <algorithm>
#include <numeric>

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

/*
 * Each column's max |x| (out[j], float bits: non-negative floats order like
 * their bit patterns; NaN is passed over). Thread t takes column t mod d
 * of every (T / d)-th row, T (the threads launched) a multiple of d, so the
 * loads stay coalesced and a thread keeps one maximum; where d divides 32,
 * the lanes of a column combine theirs before the one atomic.
 */
__global__ void
col_maxabs_kernel(const float *x, int64_t rows, int d, unsigned int *out)
{
	const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int64_t step = (int64_t) gridDim.x * blockDim.x / d;
	const int	j = (int) (t % d);
	float		m = 0.0f;
	for (int64_t r = t / d; r < rows; r += step)
		m = fmaxf(m, fabsf(x[r * d + j]));
	if (32 % d == 0)
	{
		for (int o = 16; o >= d; o >>= 1)	/* lane l and l ^ o share a column */
			m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
		if ((threadIdx.x & 31) >= d)
			return;
	}
	if (m > 0)
		atomicMax(out + j, __float_as_uint(m));
}

__global__ void
fill_int_kernel(int32_t *p, int64_t n, int32_t v)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		p[i] = v;
}

/*
 * Per row, a warp each: ||x||^2 of the row as kept (GEMM: x' = x - s) in
 * fp64 (relative error <= gamma^w_{d+1}), scaled past that error and rounded
 * up to float: the GEMM path's label test (label_bound.cpp, FORM_SHIFTED).
 */
__global__ void
row_norms_kernel(const float *x, int64_t rows, int d, float *out)
{
	const int	lane = threadIdx.x & 31;
	const double up = 1 + 4.0 * (d + 2) * 0x1p-53;
	for (int64_t r = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows;
		 r += ((int64_t) gridDim.x * blockDim.x) >> 5)
	{
		const float *xr = x + r * d;
		double		p = 0;
		for (int j = lane; j < d; j += 32)
			p += (double) xr[j] * xr[j];
		for (int o = 16; o > 0; o >>= 1)
			p += __shfl_xor_sync(FULL, p, o);
		if (lane == 0)
			out[r] = __double2float_ru(p * up);
	}
}

/* Float order as unsigned order: the column ranges' atomics. */
__device__ __forceinline__ unsigned int
ordered(float v)
{
	const unsigned int b = __float_as_uint(v);
	return b & 0x80000000u ? ~b : b | 0x80000000u;
}

/*
 * Per column, the smallest and largest value (range[j], range[d + j], in
 * ordered() form; range starts as {0xffffffff..., 0...}). Threads over
 * columns, blocks over row ranges: one atomic per block and column.
 */
__global__ void
col_range_kernel(const float *x, int64_t rows, int d, unsigned int *range)
{
	const int64_t per = (rows + gridDim.x - 1) / gridDim.x;
	const int64_t r0 = (int64_t) blockIdx.x * per, r1 = min(rows, r0 + per);
	for (int j = threadIdx.x; j < d; j += blockDim.x)
	{
		unsigned int lo = 0xffffffffu, hi = 0;
		for (int64_t r = r0; r < r1; r++)
		{
			const unsigned int v = ordered(x[r * d + j]);
			lo = min(lo, v);
			hi = max(hi, v);
		}
		if (r0 < r1)
		{
			atomicMin(range + j, lo);
			atomicMax(range + d + j, hi);
		}
	}
}

/* x[i][j] -= s[j] in place; exact for the shifts of exact_shift (Sterbenz). */
__global__ void
shift_kernel(float *x, int64_t count, int d, const float *s)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
		x[i] = x[i] - s[i % d];
}

void
launch_reduce_partials(const double *partials, int64_t nslots, double *out, cudaStream_t s)
{
	reduce_partials_kernel<<<1, 1024, 0, s>>>(partials, nslots, out);
	CKLAUNCH("reduce_partials_kernel");
}

void
launch_col_maxabs(const float *x, int64_t rows, int d, unsigned int *out, cudaStream_t s)
{
	const int	threads = 256;
	const int64_t unit = d / std::gcd(d, threads);	/* blocks whose threads are a multiple of d */
	const int64_t g = unit * std::max<int64_t>(1, 1024 / unit);
	col_maxabs_kernel<<<(int) g, threads, 0, s>>>(x, rows, d, out);
	CKLAUNCH("col_maxabs_kernel");
}

void
launch_row_norms(const float *x, int64_t rows, int d, float *out, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(8LL * 1024, (rows + 7) / 8);
	row_norms_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, rows, d, out);
	CKLAUNCH("row_norms_kernel");
}

void
launch_col_range(const float *x, int64_t rows, int d, unsigned int *range, cudaStream_t s)
{
	const int	threads = std::min(256, (d + 31) / 32 * 32);
	const int64_t g = std::min<int64_t>(1024, rows);
	col_range_kernel<<<(int) std::max<int64_t>(g, 1), threads, 0, s>>>(x, rows, d, range);
	CKLAUNCH("col_range_kernel");
}

void
launch_shift(float *x, int64_t rows, int d, const float *shift, cudaStream_t s)
{
	int64_t		count = rows * d;
	int64_t		g = std::min<int64_t>(8LL * 1024, (count + 255) / 256);
	shift_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, count, d, shift);
	CKLAUNCH("shift_kernel");
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
