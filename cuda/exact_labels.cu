/*
 * exact_labels.cu: the fp64 decision of the rows the TILED kernel listed
 * (their float runner-up was not provably worse than their best). A warp per
 * row recomputes the row's float values in the TILED form (lanes over
 * centroids, into shared memory), takes the limit from their best, and
 * decides among the centroids under it with sqdist_exact's arithmetic
 * (device/exact_label.cuh); it writes the label and counts the move, which
 * the TILED kernel left to it. Order-free (labels per row, integer counts),
 * so deterministic runs stay bit-identical whatever the list's order.
 */
#include "device/exact_label.cuh"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int DL_THREADS = 256;
static constexpr int DL_WARPS = DL_THREADS / 32;

/* Dynamic shared memory: k float values per warp. Grid-stride over the list. */
__global__ void __launch_bounds__(DL_THREADS)
decide_listed_kernel(PassArgs a)
{
	extern __shared__ float vals[];
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int	d = a.d, k = a.k;
	float	   *v = vals + (size_t) warp * k;
	const unsigned int count = *a.list_count;
	unsigned int moved = 0;
	for (unsigned int i = blockIdx.x * DL_WARPS + warp; i < count; i += gridDim.x * DL_WARPS)
	{
		const int64_t row = a.list[i];
		const float *x = a.x + row * d;
		float		q = 0.0f;	/* fl(||x'||^2), any order */
		for (int j = lane; j < d; j += 32)
		{
			const float t = x[j] - a.mu[j];
			q = fmaf(t, t, q);
		}
		for (int o = 16; o > 0; o >>= 1)
			q += __shfl_xor_sync(FULL, q, o);
		float		best = __int_as_float(0x7f800000);
		int			bi = 0x7fffffff;
		for (int c = lane; c < k; c += 32)
		{
			const float *cr = a.cf + (size_t) c * d;
			float		acc = 0.0f;
			for (int j = 0; j < d; j++)
				acc = fmaf(x[j] - a.mu[j], cr[j], acc);
			const float val = fmaf(-2.0f, acc, a.bias[c]);
			v[c] = val;
			if (val < best)
			{
				best = val;
				bi = c;
			}
		}
		for (int o = 16; o > 0; o >>= 1)
		{
			const float ob = __shfl_xor_sync(FULL, best, o);
			const int	oi = __shfl_xor_sync(FULL, bi, o);
			if (ob < best || (ob == best && oi < bi))
			{
				best = ob;
				bi = oi;
			}
		}
		__syncwarp();
		if (bi >= k)
			bi = 0;				/* all values NaN: cannot happen on finite data */
		const double lim = label_limit(a.test, best, q);
		const int	lbl = warp_exact_label(value_candidates([&](int c) { return v[c]; }, k, lim, bi), k, bi, x, nullptr,
										   nullptr, a.c64, d);
		if (lane == 0)
		{
			const int64_t g = a.row0 + row;
			moved += a.labels[g] != lbl;
			a.labels[g] = lbl;
		}
		__syncwarp();			/* v is rewritten by the next row */
	}
	if (lane == 0)
	{
		if (moved)
			atomicAdd(a.moved, (unsigned long long) moved);
		if (blockIdx.x == 0 && warp == 0)
			atomicAdd(a.decided, (unsigned long long) count);
	}
}

/*
 * After the TILED kernel of a chunk: decides the listed rows (the count is
 * read on the device, so no host round trip). A fixed grid of 4 blocks per
 * SM (a warp per row, latency-bound), idle when the list is empty.
 */
void
launch_decide_listed(Run &r, const PassArgs &a, cudaStream_t s)
{
	const size_t smem = (size_t) DL_WARPS * r.k * sizeof(float);
	allow_smem((const void *) decide_listed_kernel, r, smem);
	decide_listed_kernel<<<4 * r.limits.sms, DL_THREADS, smem, s>>>(a);
	CKLAUNCH("decide_listed_kernel");
	r.launches++;
}

}							/* namespace pgkm_cuda */
