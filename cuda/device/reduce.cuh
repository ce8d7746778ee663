/*
 * device/reduce.cuh: fixed-order block reductions (same adds in the same
 * order on every run, so deterministic mode is bit-identical run to run).
 */
#ifndef PGKM_CUDA_DEVICE_REDUCE_CUH
#define PGKM_CUDA_DEVICE_REDUCE_CUH

namespace pgkm_cuda
{

static constexpr unsigned FULL = 0xffffffffu;

/* Sum over the block in a fixed tree order; result valid in thread 0. */
__device__ __forceinline__ double
block_sum(double v, double *sh)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	int			w = threadIdx.x >> 5, l = threadIdx.x & 31;
	__syncthreads();
	if (l == 0)
		sh[w] = v;
	__syncthreads();
	double		t = 0;
	if (threadIdx.x < 32)
	{
		t = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : 0.0;
		for (int o = 16; o > 0; o >>= 1)
			t += __shfl_down_sync(0xffffffffu, t, o);
	}
	return t;
}

/*
 * v summed over the block through sh[blockDim.x] in a fixed tree order
 * (blockDim.x a power of two), so the result is bit-identical run to run;
 * every thread gets it. sh may be written again only after a __syncthreads.
 */
__device__ __forceinline__ double
block_tree_sum(double v, double *sh)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w >>= 1)
	{
		if ((int) threadIdx.x < w)
			sh[threadIdx.x] += sh[threadIdx.x + w];
		__syncthreads();
	}
	return sh[0];
}

}							/* namespace pgkm_cuda */

#endif
