/*
 * gemm.cu: the GEMM path (d > 64 outside the TILED range, and large k). The
 * device rows are shifted in place by the exact shift s (x' = x - s, exact,
 * so x = x' + s is read back for the fp64 decisions, sums and distances;
 * 3xTF32 keeps x' as hi + lo, also exact). Per tile of rows cuBLAS writes
 * -2 x'.c' (fp32 SGEMM, or 3xTF32 where d, k >= 512; plan.cpp) into a tile
 * kept near 16 MB so it stays in L2, and a warp-per-row kernel takes the
 * argmin of ||c'||^2 - 2 x'.c'. The n x k matrix is never written in full.
 * For d <= 1024 the kernel writes labels only and the chunk's sorted update
 * follows (sorted_update.cu); wider rows add themselves to the sums in the
 * kernel. Labels are exact (label_bound.h): a row whose float runner-up is
 * not provably worse is decided by its warp in fp64 at once, the candidates
 * read from the tile (warp-uniform, so no lane waits on another).
 */
#include "device/exact_label.cuh"
#include "device/sums.cuh"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int BLOCK = PASS_THREADS;

/*
 * GEMM path, after cuBLAS wrote tile[r*k + c] = -2 x_r.c'_c for the tile's
 * rows: one warp per row scans its k values (coalesced), argmin with lowest
 * index on ties. UPDATE: the warp then recomputes the exact distance and adds
 * the row (lanes over columns) to the sums (d > 1024); otherwise only labels
 * and moves are written and the chunk's sorted update follows
 * (launch_sorted_update). Grid-stride over the tile's rows.
 */
template <bool UPDATE>
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
	start_pass_block(a, &moved_sh, pacc, nacc);
	__syncthreads();

	double		my_inertia = 0;
	unsigned int my_moved = 0, my_decided = 0;	/* my_decided: every lane of the warp counts */
	const int64_t wpg = (int64_t) gridDim.x * (BLOCK / 32);
	for (int64_t row = (int64_t) blockIdx.x * (BLOCK / 32) + warp; row < a.rows; row += wpg)
	{
		const float *t = a.tile + row * k;
		float		best = __int_as_float(0x7f800000), second = best;
		int			bi = 0x7fffffff;
		for (int c = lane; c < k; c += 32)
		{
			float		v = a.bias[c] + t[c];
			const bool	lt = v < best;
			second = fminf(second, lt ? best : v);
			best = lt ? v : best;
			bi = lt ? c : bi;
		}
		for (int o = 16; o > 0; o >>= 1)
		{
			float		ov = __shfl_xor_sync(0xffffffffu, best, o);
			int			oi = __shfl_xor_sync(0xffffffffu, bi, o);
			float		ov2 = __shfl_xor_sync(0xffffffffu, second, o);
			merge_best2(best, bi, second, ov, oi, ov2);
		}
		if (bi >= k)
			bi = 0;				/* all values NaN: cannot happen on finite data */
		const float *src = a.x + row * d;
		const float *lo = a.xlo ? a.xlo + row * d : nullptr;
		const double lim = label_limit(a.test, best, a.norms[row]);
		if (!(second > lim))	/* warp-uniform */
		{
			auto		val = [&](int c) { return a.bias[c] + t[c]; };	/* the row's values, read again (L1) */
			bi = warp_exact_label(value_candidates(val, k, lim, bi), k, bi, src, lo, a.shift, a.c64, d);
			my_decided++;
		}
		if (!UPDATE)
		{
			if (lane == 0)
			{
				int64_t		g = a.row0 + row;
				if (a.labels[g] != bi)
					my_moved++;
				a.labels[g] = bi;
			}
			continue;
		}
		const double *c = a.c64 + (size_t) bi * d;
		double		e = 0;
		for (int j = lane; j < d; j += 32)
		{
			double		u = (double) stored_value(src, lo, a.shift, j) - c[j];
			e += u * u;
		}
		for (int o = 16; o > 0; o >>= 1)
			e += __shfl_xor_sync(0xffffffffu, e, o);
		unsigned long long *dst = a.priv ? pacc : a.acc;
		for (int j = lane; j < d; j += 32)
			acc_add(dst, (int64_t) bi * d + j, stored_value(src, lo, a.shift, j), a.det, a.qscale[j]);
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
	if (lane == 0 && my_decided)
		atomicAdd(a.decided, (unsigned long long) my_decided);
	if (!UPDATE)
	{
		if (my_moved)
			atomicAdd(&moved_sh, my_moved);
		__syncthreads();
		if (threadIdx.x == 0 && moved_sh)
			atomicAdd(a.moved, (unsigned long long) moved_sh);
		return;
	}
	finish_pass_block(a, slot_base, my_inertia, my_moved, red, &moved_sh, pacc, nacc);
}

/*
 * Tiles of tile_rows rows, labels only, then one label-sorted update of the
 * chunk (d <= 1024: flushes per run of equal labels). Wider rows add
 * themselves in the argmin kernel; private sums are then flushed once per
 * tile launch (grid x k x (d+1) global atomics instead of tile_rows x (d+1)):
 * worth it only when a block sees many rows per cluster. The argmin kernel
 * runs gemm_blocks_per_sm blocks per SM (4: 32 warps, each on one row at a
 * time, latency-bound at small k; 1.1-1.4x over 2, bench/RESULTS.md section 2).
 */
void
launch_gemm_pass(Run &r, const PassArgs &a0, int64_t slot_base, cudaStream_t s)
{
	PassArgs	a = a0;
	const Plan &p = r.plan;
	const bool	sorted = r.d <= TILED_MAX_D;
	a.priv = !sorted && priv_fits(r.settings, r.limits, r.d, r.k, 0) && 2 * (int64_t) p.grid * r.k <= p.tile_rows ? 1 : 0;
	const void *argmin = sorted ? (const void *) tile_argmin_kernel<false> : (const void *) tile_argmin_kernel<true>;
	allow_smem(argmin, r, a.priv ? priv_bytes(r.d, r.k) : 0);
	CK(cudaGetLastError());
	const float alpha = -2.0f, zero = 0.0f, one = 1.0f;
	int64_t		ntile = (a.rows + p.tile_rows - 1) / p.tile_rows;
	for (int64_t t = 0; t < ntile; t++)
	{
		int64_t		t0 = t * p.tile_rows;
		int64_t		tr = std::min(p.tile_rows, a.rows - t0);
		/* tile = -2 x'.c' (3xTF32: the two small cross terms first, then hi.hi) */
		auto		gemm = [&](const float *c, const float *x, const float *beta) {
			cublasStatus_t bs = cublasSgemm(r.buf.blas, CUBLAS_OP_T, CUBLAS_OP_N, r.k, (int) tr, r.d,
											&alpha, c, r.d, x + t0 * r.d, r.d, beta, r.buf.d_tile, r.k);
			if (bs != CUBLAS_STATUS_SUCCESS)
				fail_blas(bs, "cublasSgemm");
			r.launches++;
		};
		if (p.product == PRODUCT_3XTF32)
		{
			gemm(r.buf.d_cf_lo, a.x, &zero);
			gemm(r.buf.d_cf, a.xlo, &one);
			gemm(r.buf.d_cf, a.x, &one);
		}
		else
			gemm(r.buf.d_cf, a.x, &zero);
		PassArgs	b = a;
		b.x = a.x + t0 * r.d;
		b.xlo = a.xlo ? a.xlo + t0 * r.d : nullptr;
		b.rows = tr;
		b.row0 = a.row0 + t0;
		b.dist2 = a.dist2 ? a.dist2 + t0 : nullptr;
		b.norms = a.norms + t0;
		b.tile = r.buf.d_tile;
		int			grid = (int) std::max<int64_t>(1, std::min<int64_t>(p.grid, (tr + 7) / 8));
		size_t		smem = b.priv ? priv_bytes(r.d, r.k) : 0;
		if (sorted)
			tile_argmin_kernel<false><<<grid, BLOCK, smem, s>>>(b, slot_base + t * p.grid);
		else
			tile_argmin_kernel<true><<<grid, BLOCK, smem, s>>>(b, slot_base + t * p.grid);
		CKLAUNCH("tile_argmin_kernel");
		r.launches++;
	}
	if (sorted)
		launch_sorted_update(r, a, slot_base, s);
}

}							/* namespace pgkm_cuda */
