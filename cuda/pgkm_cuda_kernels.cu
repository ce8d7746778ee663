/*
 * pgkm_cuda_kernels.cu: the assignment + accumulation kernels of a Lloyd pass.
 *
 * One pass over a chunk of rows labels every row with its nearest centroid,
 * recomputes the exact fp64 distance sum((x - c)^2) to that centroid, and adds
 * the row into its cluster's sum and count, so the n x k distance matrix and
 * the labels never make a second trip through memory.
 *
 * Sums: deterministic mode adds each value as a 64-bit fixed-point integer
 * (x * 2^e, e chosen from max|x| and n so no cluster sum can overflow);
 * integer addition is associative, so any atomic order gives bit-identical
 * sums, and the quantisation step 2^-e is ~2^-38 max|x| (finer than fp32's own
 * spacing). Fast mode adds fp64 with atomics (order-dependent last bits).
 * Inertia: per-block fp64 partials reduced in a fixed order.
 */
#include "pgkm_cuda_internal.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int BLOCK = 256;
static constexpr int CT_BYTES = 48 * 1024;	/* smem for one centroid tile */
static constexpr int PRIV_BYTES = 24 * 1024;	/* smem for private sums */

/* Adds value v (fp32 data) of cluster c, column j to the accumulators. */
__device__ __forceinline__ void
acc_add(unsigned long long *acc, int64_t idx, float v, int det, double qscale)
{
	if (det)
	{
		long long	q = __double2ll_rn((double) v * qscale);
		atomicAdd(acc + idx, (unsigned long long) q);
	}
	else
		atomicAdd(reinterpret_cast<double *>(acc) + idx, (double) v);
}

__device__ __forceinline__ void
acc_count(unsigned long long *acc, int64_t idx, int det)
{
	if (det)
		atomicAdd(acc + idx, 1ULL);
	else
		atomicAdd(reinterpret_cast<double *>(acc) + idx, 1.0);
}

/* Sum over the block in a fixed tree order; result valid in thread 0. */
__device__ double
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

/* Exact fp64 squared distance, same operation order as the CPU engine. */
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
 * Fused assignment for small d (shape: rows x d, d <= DP <= 64).
 * Grid-stride over groups of BLOCK*PPT rows; each thread keeps PPT rows in
 * registers (zero-padded to DP) and scans the centroids held in shared memory
 * (tiles of KT centroids, reloaded per row group only when k > KT), keeping
 * the best (value, index) per row in registers; ties keep the lowest index.
 * DIRECT: value = sum((x-c)^2) in fp32 without contraction, bit-identical to
 *         the CPU engine's loop (cf: raw fp32 centroids, k x DP).
 * !DIRECT: value = ||c'||^2 + x'.(-2c') with x' = x - mu (cf: -2c' k x DP,
 *         bias = ||c'||^2), the CPU engine's GEMM form.
 */
template <int DP, int PPT, bool DIRECT>
__global__ void __launch_bounds__(BLOCK, 2)
fused_kernel(PassArgs a, int64_t slot_base, int kt_max)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int	d = a.d, k = a.k;
	const int64_t nacc = (int64_t) k * d + k;
	unsigned long long *pacc = reinterpret_cast<unsigned long long *>(smem);
	size_t		acc_bytes = a.priv ? (size_t) ((nacc * 8 + 15) / 16 * 16) : 0;
	float	   *ct = reinterpret_cast<float *>(smem + acc_bytes);
	float	   *cb = ct + (size_t) kt_max * DP;
	__shared__ double red[BLOCK / 32];
	__shared__ unsigned int moved_sh;

	if (threadIdx.x == 0)
		moved_sh = 0;
	if (a.priv)
		for (int64_t i = threadIdx.x; i < nacc; i += BLOCK)
			pacc[i] = 0ULL;
	float		mu[DP];
#pragma unroll
	for (int j = 0; j < DP; j++)
		mu[j] = (!DIRECT && j < d) ? a.mu[j] : 0.0f;

	const bool	single = k <= kt_max;
	auto		load_tile = [&](int c0, int kt) {
		for (int i = threadIdx.x; i < kt * DP; i += BLOCK)
		{
			int			c = i / DP, j = i % DP;
			ct[i] = j < d ? a.cf[(size_t) (c0 + c) * d + j] : 0.0f;
		}
		if (!DIRECT)
			for (int i = threadIdx.x; i < kt; i += BLOCK)
				cb[i] = a.bias[c0 + i];
	};
	if (single)
		load_tile(0, k);
	__syncthreads();

	double		my_inertia = 0;
	unsigned int my_moved = 0;
	const int64_t group = (int64_t) BLOCK * PPT;
	for (int64_t base = (int64_t) blockIdx.x * group; base < a.rows; base += (int64_t) gridDim.x * group)
	{
		float		xr[PPT][DP];
		float		best[PPT];
		int			bi[PPT];
#pragma unroll
		for (int p = 0; p < PPT; p++)
		{
			int64_t		row = base + (int64_t) p * BLOCK + threadIdx.x;
			const float *src = a.x + row * d;
			bool		ok = row < a.rows;
#pragma unroll
			for (int j = 0; j < DP; j++)
				xr[p][j] = (ok && j < d) ? src[j] - mu[j] : 0.0f;
			best[p] = __int_as_float(0x7f800000);	/* +inf */
			bi[p] = 0;
		}
		for (int c0 = 0; c0 < k; c0 += kt_max)
		{
			int			kt = min(kt_max, k - c0);
			if (!single)
			{
				__syncthreads();
				load_tile(c0, kt);
				__syncthreads();
			}
			for (int c = 0; c < kt; c++)
			{
				float		cv[DP];
				if (DP % 4 == 0)
				{
#pragma unroll
					for (int j = 0; j < DP; j += 4)
					{
						float4		t = *reinterpret_cast<const float4 *>(ct + (size_t) c * DP + j);
						cv[j] = t.x;
						cv[j + 1] = t.y;
						cv[j + 2] = t.z;
						cv[j + 3] = t.w;
					}
				}
				else
				{
#pragma unroll
					for (int j = 0; j < DP; j++)
						cv[j] = ct[(size_t) c * DP + j];
				}
				float		bias = DIRECT ? 0.0f : cb[c];
#pragma unroll
				for (int p = 0; p < PPT; p++)
				{
					float		s;
					if (DIRECT)
					{
						s = 0.0f;
#pragma unroll
						for (int j = 0; j < DP; j++)
						{
							float		t = __fsub_rn(xr[p][j], cv[j]);
							s = __fadd_rn(s, __fmul_rn(t, t));
						}
					}
					else
					{
						/* two chains for ILP */
						float		s0 = 0.0f, s1 = 0.0f;
#pragma unroll
						for (int j = 0; j < DP; j += 2)
						{
							s0 = fmaf(xr[p][j], cv[j], s0);
							if (j + 1 < DP)
								s1 = fmaf(xr[p][j + 1], cv[j + 1], s1);
						}
						s = bias + (s0 + s1);
					}
					if (s < best[p])
					{
						best[p] = s;
						bi[p] = c0 + c;
					}
				}
			}
		}
		/* epilogue: label, moved, exact distance, sums */
#pragma unroll
		for (int p = 0; p < PPT; p++)
		{
			int64_t		row = base + (int64_t) p * BLOCK + threadIdx.x;
			if (row >= a.rows)
				continue;
			int			lbl = bi[p];
			int64_t		g = a.row0 + row;
			if (a.labels[g] != lbl)
				my_moved++;
			a.labels[g] = lbl;
			const float *src = a.x + row * d;
			double		e = exact_dist2(src, a.c64 + (size_t) lbl * d, d);
			my_inertia += e;
			if (a.dist2)
				a.dist2[row] = e;
			unsigned long long *dst = a.priv ? pacc : a.acc;
			for (int j = 0; j < d; j++)
				acc_add(dst, (int64_t) lbl * d + j, src[j], a.det, a.qscale);
			acc_count(dst, (int64_t) k * d + lbl, a.det);
		}
	}
	double		tot = block_sum(my_inertia, red);
	if (threadIdx.x == 0)
		a.partials[slot_base + blockIdx.x] = tot;
	if (my_moved)
		atomicAdd(&moved_sh, my_moved);
	__syncthreads();
	if (threadIdx.x == 0 && moved_sh)
		atomicAdd(a.moved, (unsigned long long) moved_sh);
	if (a.priv)
		for (int64_t i = threadIdx.x; i < nacc; i += BLOCK)
		{
			unsigned long long v = pacc[i];
			if (v)
				atomicAdd(a.acc + i, v);	/* fixed point: integer add; fast mode: see below */
		}
}

/*
 * GEMM path, after cuBLAS wrote tile[r*k + c] = -2 x_r.c'_c for the tile's
 * rows: one warp per row scans its k values (coalesced), argmin with lowest
 * index on ties, then the warp recomputes the exact distance and adds the row
 * (lanes over columns) to the sums. Grid-stride over the tile's rows.
 */
__global__ void __launch_bounds__(BLOCK)
tile_argmin_kernel(PassArgs a, int64_t slot_base)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int	d = a.d, k = a.k;
	const int64_t nacc = (int64_t) k * d + k;
	unsigned long long *pacc = reinterpret_cast<unsigned long long *>(smem);
	__shared__ double red[BLOCK / 32];
	__shared__ unsigned int moved_sh;
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	if (threadIdx.x == 0)
		moved_sh = 0;
	if (a.priv)
		for (int64_t i = threadIdx.x; i < nacc; i += BLOCK)
			pacc[i] = 0ULL;
	__syncthreads();

	double		my_inertia = 0;
	unsigned int my_moved = 0;
	const int64_t wpg = (int64_t) gridDim.x * (BLOCK / 32);
	for (int64_t row = (int64_t) blockIdx.x * (BLOCK / 32) + warp; row < a.rows; row += wpg)
	{
		const float *t = a.tile + row * k;
		float		best = __int_as_float(0x7f800000);
		int			bi = 0x7fffffff;
		for (int c = lane; c < k; c += 32)
		{
			float		v = a.bias[c] + t[c];
			if (v < best)
			{
				best = v;
				bi = c;
			}
		}
		for (int o = 16; o > 0; o >>= 1)
		{
			float		ov = __shfl_xor_sync(0xffffffffu, best, o);
			int			oi = __shfl_xor_sync(0xffffffffu, bi, o);
			if (ov < best || (ov == best && oi < bi))
			{
				best = ov;
				bi = oi;
			}
		}
		if (bi >= k)
			bi = 0;				/* all values NaN: cannot happen on finite data */
		const float *src = a.x + row * d;
		const double *c = a.c64 + (size_t) bi * d;
		double		e = 0;
		for (int j = lane; j < d; j += 32)
		{
			double		u = (double) src[j] - c[j];
			e += u * u;
		}
		for (int o = 16; o > 0; o >>= 1)
			e += __shfl_xor_sync(0xffffffffu, e, o);
		unsigned long long *dst = a.priv ? pacc : a.acc;
		for (int j = lane; j < d; j += 32)
			acc_add(dst, (int64_t) bi * d + j, src[j], a.det, a.qscale);
		if (lane == 0)
		{
			int64_t		g = a.row0 + row;
			if (a.labels[g] != bi)
				my_moved++;
			a.labels[g] = bi;
			my_inertia += e;
			if (a.dist2)
				a.dist2[row] = e;
			acc_count(dst, (int64_t) k * d + bi, a.det);
		}
	}
	double		tot = block_sum(my_inertia, red);
	if (threadIdx.x == 0)
		a.partials[slot_base + blockIdx.x] = tot;
	if (my_moved)
		atomicAdd(&moved_sh, my_moved);
	__syncthreads();
	if (threadIdx.x == 0 && moved_sh)
		atomicAdd(a.moved, (unsigned long long) moved_sh);
	if (a.priv)
		for (int64_t i = threadIdx.x; i < nacc; i += BLOCK)
		{
			unsigned long long v = pacc[i];
			if (v)
				atomicAdd(a.acc + i, v);
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
	sh[threadIdx.x] = s;
	__syncthreads();
	for (int w = 512; w > 0; w >>= 1)
	{
		if ((int) threadIdx.x < w)
			sh[threadIdx.x] += sh[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*out = sh[0];
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

/* ---- launchers ---- */

struct FusedCfg
{
	int			dp;
	int			ppt;
	bool		direct;
};

static FusedCfg
fused_cfg(const Run &r)
{
	int			d = r.d;
	if (r.path == PATH_DIRECT)
	{
		if (d <= 2) return {2, 8, true};
		if (d <= 4) return {4, 8, true};
		if (d <= 8) return {8, 4, true};
		return {16, 4, true};
	}
	if (d <= 16) return {16, 4, false};
	if (d <= 32) return {32, 2, false};
	return {64, 1, false};
}

static int
fused_kt(const Run &r, const FusedCfg &f)
{
	int			kt = CT_BYTES / ((f.dp + 1) * 4);
	return std::min(kt, r.k);
}

static size_t
priv_bytes(const Run &r)
{
	return (size_t) (((int64_t) r.k * r.d + r.k) * 8 + 15) / 16 * 16;
}

static bool
use_priv(const Run &r)
{
	return priv_bytes(r) <= PRIV_BYTES;
}

template <int DP, int PPT, bool DIRECT>
static void
launch_fused_t(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s, int grid, int kt, size_t smem)
{
	static bool attr_set = false;	/* per process; harmless if repeated */
	if (!attr_set)
	{
		CK(cudaFuncSetAttribute(fused_kernel<DP, PPT, DIRECT>,
								cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
		attr_set = true;
	}
	fused_kernel<DP, PPT, DIRECT><<<grid, BLOCK, smem, s>>>(a, slot_base, kt);
	CKLAUNCH("fused_kernel");
}

/* Blocks per fused launch: enough rows per block, at most 2 blocks per SM. */
int
fused_grid(Run &r)
{
	if (r.path == PATH_GEMM)
	{
		int64_t		g = (r.tile_rows + (BLOCK / 32) - 1) / (BLOCK / 32);
		return (int) std::max<int64_t>(1, std::min<int64_t>(g, 2LL * r.sms));
	}
	FusedCfg	f = fused_cfg(r);
	int64_t		g = (r.chunk_rows + (int64_t) BLOCK * f.ppt - 1) / ((int64_t) BLOCK * f.ppt);
	return (int) std::max<int64_t>(1, std::min<int64_t>(g, 2LL * r.sms));
}

void
launch_pass_chunk(Run &r, const PassArgs &a0, int64_t slot_base, cudaStream_t s)
{
	PassArgs	a = a0;
	a.priv = use_priv(r) ? 1 : 0;
	if (!a.det && a.priv)
		a.priv = 0;				/* fast mode: fp64 atomics straight to global */
	if (r.path != PATH_GEMM)
	{
		FusedCfg	f = fused_cfg(r);
		int			kt = fused_kt(r, f);
		size_t		smem = (a.priv ? priv_bytes(r) : 0) + (size_t) kt * (f.dp + 1) * 4;
		int			grid = (int) std::min<int64_t>(r.grid, (a.rows + (int64_t) BLOCK * f.ppt - 1) / ((int64_t) BLOCK * f.ppt));
		grid = std::max(grid, 1);
#define FUSED(DP, PPT, DIR) if (f.dp == DP && f.ppt == PPT && f.direct == DIR) { launch_fused_t<DP, PPT, DIR>(r, a, slot_base, s, grid, kt, smem); r.launches++; return; }
		FUSED(2, 8, true) FUSED(4, 8, true) FUSED(8, 4, true) FUSED(16, 4, true)
		FUSED(16, 4, false) FUSED(32, 2, false) FUSED(64, 1, false)
#undef FUSED
		throw Failure {PGKM_ERR_INTERNAL, "no fused kernel for this shape"};
	}
	/* GEMM path: tiles of tile_rows rows */
	static bool attr_set = false;
	if (!attr_set)
	{
		CK(cudaFuncSetAttribute(tile_argmin_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
		attr_set = true;
	}
	CK(cudaGetLastError());
	const float alpha = -2.0f, beta = 0.0f;
	int64_t		ntile = (a.rows + r.tile_rows - 1) / r.tile_rows;
	for (int64_t t = 0; t < ntile; t++)
	{
		int64_t		t0 = t * r.tile_rows;
		int64_t		tr = std::min(r.tile_rows, a.rows - t0);
		cublasStatus_t bs = cublasSgemm(r.blas, CUBLAS_OP_T, CUBLAS_OP_N, r.k, (int) tr, r.d,
										&alpha, r.d_cf, r.d, a.x + t0 * r.d, r.d, &beta,
										r.d_tile, r.k);
		if (bs != CUBLAS_STATUS_SUCCESS)
			fail_blas(bs, "cublasSgemm");
		PassArgs	b = a;
		b.x = a.x + t0 * r.d;
		b.rows = tr;
		b.row0 = a.row0 + t0;
		b.dist2 = a.dist2 ? a.dist2 + t0 : nullptr;
		b.tile = r.d_tile;
		int			grid = (int) std::max<int64_t>(1, std::min<int64_t>(r.grid, (tr + 7) / 8));
		size_t		smem = b.priv ? priv_bytes(r) : 0;
		tile_argmin_kernel<<<grid, BLOCK, smem, s>>>(b, slot_base + t * r.grid);
		CKLAUNCH("tile_argmin_kernel");
		r.launches += 2;
	}
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
launch_fill_int(int32_t *p, int64_t n, int32_t v, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(4096, (n + 255) / 256);
	fill_int_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(p, n, v);
	CKLAUNCH("fill_int_kernel");
}

}							/* namespace pgkm_cuda */
