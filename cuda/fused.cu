/*
 * fused.cu: the DIRECT and DOT paths (d <= 64): one kernel per chunk labels
 * every row with its nearest centroid, recomputes the exact fp64 distance to
 * it, and adds the row into its cluster's sum and count, so the distances and
 * labels never make a second trip through memory.
 *
 * Centroids sit in shared memory (48 KB tiles over k), each thread keeps PPT
 * rows of DP features in registers. Sums go to per-block private copies in
 * shared memory when they fit (priv_fits: 2 blocks per SM), after the 32 rows
 * of a warp are pre-summed by label (device/warp_groups.cuh), so a shared
 * atomic is paid per (warp, distinct label, column), not per (row, column).
 *
 * Labels are exact (label_bound.h): each row keeps its float runner-up too,
 * and a row whose runner-up is not provably worse is decided in fp64 before
 * the epilogue by its whole warp (lanes over centroids, one such row after
 * another): a slow branch taken by few rows on real data (counted in
 * a.decided), costing about what a fast pass over them would.
 */
#include "device/distance.cuh"
#include "device/exact_label.cuh"
#include "device/sums.cuh"
#include "device/warp_groups.cuh"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int BLOCK = PASS_THREADS;
static constexpr int CT_BYTES = 48 * 1024;	/* smem for one centroid tile */

/*
 * Warp-collective: the fp64 label of row src (as stored) whose float argmin
 * is bi, float values recomputed in the fast loop's form from the global
 * centroids (the shared tile may hold only the last of them), then
 * exact_label.cuh.
 */
template <bool DIRECT>
__device__ __forceinline__ int
decide_row(const PassArgs &a, const float *src, int bi, double lim)
{
	const int	d = a.d;
	auto		val = [&](int c) {
		const float *cr = a.cf + (size_t) c * d;
		float		s = DIRECT ? 0.0f : a.bias[c];
		for (int j = 0; j < d; j++)
		{
			if (DIRECT)
			{
				const float t = __fsub_rn(src[j], cr[j]);
				s = __fadd_rn(s, __fmul_rn(t, t));
			}
			else
				s = fmaf(src[j] - a.mu[j], cr[j], s);
		}
		return s;
	};
	return warp_exact_label(value_candidates(val, a.k, lim, bi), a.k, bi, src, nullptr, nullptr, a.c64, d);
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
 *         bias = ||c'||^2), the CPU engine's GEMM form, ||c'||^2 starting the
 *         first of two FMA chains.
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
	/* the columns' fixed-point scales: a global load per value cost 3-6 % at d = 32, k = 1024 */
	__shared__ double qscale_s[DP];

	start_pass_block(a, &moved_sh, pacc, nacc);
	if (a.det)
		for (int j = threadIdx.x; j < d; j += BLOCK)	/* ordered before use by the tile's __syncthreads */
			qscale_s[j] = a.qscale[j];

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
	unsigned int my_moved = 0, my_decided = 0;
	const int64_t group = (int64_t) BLOCK * PPT;
	for (int64_t base = (int64_t) blockIdx.x * group; base < a.rows; base += (int64_t) gridDim.x * group)
	{
		/*
		 * DIRECT rows of d <= 8 stay in registers to the epilogue; their kernels
		 * also load the old labels here, so that load's latency hides behind the
		 * distances (profiled at 10M x 2 x 8: warps waiting on it in the
		 * epilogue were a third of the stall samples; 0.85 -> 0.25 ms).
		 */
		constexpr bool ROW_REGS = DIRECT && DP <= 8;
		float		xr[PPT][DP];
		float		best[PPT], second[PPT];
		float		x2[DIRECT ? 1 : PPT];	/* DOT: fl(||x'||^2), the label test's */
		int			bi[PPT];
		int			old_lbl[ROW_REGS ? PPT : 1];
#pragma unroll
		for (int p = 0; p < PPT; p++)
		{
			int64_t		row = base + (int64_t) p * BLOCK + threadIdx.x;
			const float *src = a.x + row * d;
			bool		ok = row < a.rows;
#pragma unroll
			for (int j = 0; j < DP; j++)
				xr[p][j] = (ok && j < d) ? src[j] - (DIRECT ? 0.0f : __ldg(a.mu + j)) : 0.0f;	/* mu: L1, not 32 live registers */
			if (!DIRECT)
			{
				float		q = 0.0f;
#pragma unroll
				for (int j = 0; j < DP; j++)
					q = fmaf(xr[p][j], xr[p][j], q);
				x2[DIRECT ? 0 : p] = q;
			}
			if (ROW_REGS)
				old_lbl[ROW_REGS ? p : 0] = ok ? a.labels[a.row0 + row] : -1;
			best[p] = second[p] = __int_as_float(0x7f800000);	/* +inf */
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
#pragma unroll 2			/* the runner-up's two extra operations per pair schedule better in pairs */
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
						/* the first square is not added to 0 (the same value: squares are >= +0) */
						float		t = __fsub_rn(xr[p][0], cv[0]);
						s = __fmul_rn(t, t);
#pragma unroll
						for (int j = 1; j < DP; j++)
						{
							t = __fsub_rn(xr[p][j], cv[j]);
							s = __fadd_rn(s, __fmul_rn(t, t));
						}
					}
					else
					{
						/* two chains for ILP, ||c'||^2 starting the first */
						float		s0 = bias, s1 = 0.0f;
#pragma unroll
						for (int j = 0; j < DP; j += 2)
						{
							s0 = fmaf(xr[p][j], cv[j], s0);
							if (j + 1 < DP)
								s1 = fmaf(xr[p][j + 1], cv[j + 1], s1);
						}
						s = s0 + s1;
					}
					/* best (lowest index on ties) and runner-up */
					const bool	lt = s < best[p];
					second[p] = fminf(second[p], lt ? best[p] : s);
					best[p] = lt ? s : best[p];
					bi[p] = lt ? c0 + c : bi[p];
				}
			}
		}
		/* rows the label bound leaves open: decided by the warp, one after another */
#pragma unroll
		for (int p = 0; p < PPT; p++)
		{
			const int64_t row = base + (int64_t) p * BLOCK + threadIdx.x;
			const double lim = row < a.rows ? label_limit(a.test, best[p], DIRECT ? 0.0f : x2[DIRECT ? 0 : p])
				: INFINITY;
			unsigned	open = __ballot_sync(FULL, row < a.rows && !(second[p] > lim));
			while (open)
			{
				const int	l = __ffs(open) - 1;
				open &= open - 1;
				const int64_t r = __shfl_sync(FULL, row, l);
				const int	lbl = decide_row<DIRECT>(a, a.x + r * d, __shfl_sync(FULL, bi[p], l),
													 __shfl_sync(FULL, lim, l));
				if ((int) (threadIdx.x & 31) == l)
				{
					bi[p] = lbl;
					my_decided++;
				}
			}
		}
		/*
		 * epilogue: label, moved, exact distance, sums. DIRECT rows of d <= 8
		 * are still in registers (mu = 0, so xr == x exactly); wider DIRECT
		 * rows (register pressure) and DOT rows (centred) are re-read: the
		 * same thread just read them, so from L1/L2, not DRAM.
		 * Every lane of the warp runs the sums (warp-collective), rows past
		 * the end with label -1.
		 */
#pragma unroll
		for (int p = 0; p < PPT; p++)
		{
			int64_t		row = base + (int64_t) p * BLOCK + threadIdx.x;
			const bool	ok = row < a.rows;
			const float *src = a.x + (ok ? row : 0) * d;
			unsigned long long *dst = a.priv ? pacc : a.acc;
			const int	lbl = ok ? bi[p] : -1;
			if (ok)
			{
				int64_t		g = a.row0 + row;
				if ((ROW_REGS ? old_lbl[ROW_REGS ? p : 0] : a.labels[g]) != lbl)
					my_moved++;
				a.labels[g] = lbl;
				double		e = ROW_REGS ? exact_dist2_regs<DP>(xr[p], a.c64 + (size_t) lbl * d, d)
					: exact_dist2(src, a.c64 + (size_t) lbl * d, d);
				my_inertia += e;
				if (a.dist2)
					a.dist2[row] = e;
			}
			if (!a.agg)
			{
				/* global sums (the reference): one atomic per element and row */
				if (ok)
				{
					for (int j = 0; j < d; j++)
						acc_add(dst, (int64_t) lbl * d + j, src[j], a.det, qscale_s[j]);
					acc_count(dst, (int64_t) k * d + lbl, a.det);
				}
				continue;
			}
			const WarpGroups wg = warp_groups(lbl);
			const bool	add = wg.leader && ok;
			const int64_t cbase = (int64_t) (ok ? lbl : 0) * d;
			if (ROW_REGS)
			{
#pragma unroll
				for (int j = 0; j < DP; j++)
					if (j < d)
						group_add(dst, cbase + j, xr[p][j], wg, add, a.det, qscale_s[j]);
			}
			else
			{
#pragma unroll 1
				for (int j = 0; j < d; j++)
					group_add(dst, cbase + j, ok ? src[j] : 0.0f, wg, add, a.det, qscale_s[j]);
			}
			if (add)
			{
				unsigned	cnt = __popc(wg.peers);
				if (a.det)
					atomicAdd(dst + (int64_t) k * d + lbl, (unsigned long long) cnt);
				else
					atomicAdd(reinterpret_cast<double *>(dst) + (int64_t) k * d + lbl, (double) cnt);
			}
		}
	}
	if (my_decided)
		atomicAdd(a.decided, (unsigned long long) my_decided);
	finish_pass_block(a, slot_base, my_inertia, my_moved, red, &moved_sh, pacc, nacc);
}

template <int DP, int PPT, bool DIRECT>
static void
launch_fused_t(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s, int grid, int kt, size_t smem)
{
	allow_smem((const void *) fused_kernel<DP, PPT, DIRECT>, r, smem);
	fused_kernel<DP, PPT, DIRECT><<<grid, BLOCK, smem, s>>>(a, slot_base, kt);
	CKLAUNCH("fused_kernel");
}

void
launch_fused(Run &r, const PassArgs &a0, int64_t slot_base, cudaStream_t s)
{
	PassArgs	a = a0;
	const FusedShape f = fused_shape(r.plan.path, r.d);
	const int	kt = std::min(CT_BYTES / ((f.dp + 1) * 4), r.k);	/* centroids per tile */
	const size_t tile_smem = (size_t) kt * (f.dp + 1) * 4;
	a.priv = priv_fits(r.settings, r.limits, r.d, r.k, tile_smem) ? 1 : 0;
	const size_t smem = (a.priv ? priv_bytes(r.d, r.k) : 0) + tile_smem;
	const int64_t rows_per_block = (int64_t) BLOCK * f.ppt;
	const int	grid = (int) std::max<int64_t>(1, std::min<int64_t>(r.plan.grid, (a.rows + rows_per_block - 1) / rows_per_block));
#define FUSED(DP, PPT, DIR) if (f.dp == DP && f.ppt == PPT && f.direct == DIR) { launch_fused_t<DP, PPT, DIR>(r, a, slot_base, s, grid, kt, smem); r.launches++; return; }
	FUSED(2, 8, true) FUSED(4, 8, true) FUSED(8, 4, true) FUSED(16, 4, true)
	FUSED(16, 4, false) FUSED(32, 2, false) FUSED(64, 1, false)
#undef FUSED
	fail(PGKM_ERR_INTERNAL, "no fused kernel for d = %d", r.d);
}

}							/* namespace pgkm_cuda */
