/*
 * pgkm_cuda_tiled.cu: the TILED path (32 <= d <= 1024, k <= 256 by default).
 *
 * Why: for large d and small k the cuBLAS path writes a distance tile, reads
 * it back and reads x twice, in hundreds of launches per iteration, and its
 * tall-skinny SGEMMs (n x 8 or n x 64) run far from the card's rate. Here a
 * pass is two kernels:
 *  1. tiled_assign_kernel: for a tile of 128 rows, x'.c' against every
 *     centroid with a shared-memory tiled product (each thread a 4 x KN/8
 *     register micro-tile, fp32 FMA, no TF32), the argmin in the epilogue
 *     (lowest index on ties); only the labels leave the chip.
 *  2. sorted_update_kernel: per tile of 1024 rows, a counting sort by label
 *     in shared memory, then each warp walks its share of the sorted rows with
 *     lanes over columns, adding each row into per-lane register accumulators
 *     that are flushed (one atomic per column) only when the label changes,
 *     and computing the exact fp64 distance to the chosen centroid.
 * DRAM bytes per pass: x twice (4nd each) plus labels (12n); the floor counts
 * x once, so memory-bound shapes (small k) can reach 2x of it at best.
 * k > KN (up to 256 by default) is done in chunks of 64 centroids, each
 * re-reading the row tile (from L2 when it is still there).
 * Sums are the same fixed-point integers as the other paths (exact, so the
 * sort's unstable order cannot change them); inertia is summed per row in
 * tile order, so deterministic mode stays bit-identical run to run.
 * The assign kernel centres x in registers as it loads it (x' = x - mu, the
 * GEMM form's guard against cancellation; cf holds c' = c - mu); the update
 * kernel reads x as given, so its sums and fp64 distances are of the raw rows,
 * exactly as on the fused paths.
 */
#include "pgkm_cuda_internal.cuh"
#include "pgkm_cuda_device.cuh"

#include <algorithm>
#include <type_traits>

namespace pgkm_cuda
{

static constexpr int TA_THREADS = 256;
static constexpr int TA_BM = 128;	/* rows per tile */
static constexpr int TA_BK = 32;	/* features per shared-memory chunk */
static constexpr int TA_TM = 4;		/* rows per thread */
static constexpr int TA_XS = TA_BM + 4;	/* x chunk row stride: keeps float4 reads aligned */

static constexpr int SU_THREADS = 256;
static constexpr int SU_WARPS = SU_THREADS / 32;
/* Shared bytes per row of a sort window: label, position, exact distance. */
static constexpr size_t SU_ROW_BYTES = 4 + 2 + 8;

/*
 * Centroid (within the KN-wide chunk) of a thread's n-th accumulator: the
 * 8 threads sharing rows read 16 contiguous bytes each (conflict-free), and
 * the index increases with n, so a strict < keeps the lowest on ties.
 */
template <int KN>
__device__ __forceinline__ int
micro_centroid(int tx, int n)
{
	constexpr int TN = KN / 8;
	if (TN >= 4)
		return (n / 4) * 32 + tx * 4 + (n % 4);
	return tx * TN + n;
}

/* Global -> registers: one 32-feature chunk of the tile's rows and of the centroids. */
template <int KN>
struct ChunkRegs
{
	static constexpr int CR = KN >= 32 ? KN / 32 : 1;
	float4		xv[4];
	float4		cv[CR];
};

__device__ __forceinline__ float4
load4(const float *p, int col, int d, bool vec)
{
	if (vec)					/* d % 4 == 0: col < d implies col + 3 < d, 16-byte aligned */
		return col < d ? *reinterpret_cast<const float4 *>(p) : make_float4(0.f, 0.f, 0.f, 0.f);
	return make_float4(col < d ? p[0] : 0.f, col + 1 < d ? p[1] : 0.f,
					   col + 2 < d ? p[2] : 0.f, col + 3 < d ? p[3] : 0.f);
}

template <int KN>
__device__ __forceinline__ void
load_chunk(ChunkRegs<KN> &g, const float *x, int64_t rows, int64_t tile0, const float *mu, const float *cf,
		   int k, int c0, int d, int kc, bool vec)
{
	const int	lr = threadIdx.x >> 3, lc = (threadIdx.x & 7) * 4;
	const int	col = kc * TA_BK + lc;
	const float4 m4 = load4(mu + col, col, d, vec);	/* 0 past d, like x */
#pragma unroll
	for (int m = 0; m < 4; m++)
	{
		int64_t		row = tile0 + lr + 32 * m;
		float4		v = row < rows ? load4(x + row * d + col, col, d, vec) : m4;	/* past the end: x' = 0 */
		g.xv[m] = make_float4(v.x - m4.x, v.y - m4.y, v.z - m4.z, v.w - m4.w);
	}
#pragma unroll
	for (int m = 0; m < ChunkRegs<KN>::CR; m++)
	{
		int			c = lr + 32 * m;
		g.cv[m] = (c < KN && c0 + c < k) ? load4(cf + (size_t) (c0 + c) * d + col, col, d, vec)
			: make_float4(0.f, 0.f, 0.f, 0.f);
	}
}

/* Registers -> shared memory, transposed (feature-major) for the micro-tile reads. */
template <int KN>
__device__ __forceinline__ void
store_chunk(const ChunkRegs<KN> &g, float (*xs)[TA_XS], float (*cs)[KN])
{
	const int	lr = threadIdx.x >> 3, lc = (threadIdx.x & 7) * 4;
#pragma unroll
	for (int m = 0; m < 4; m++)
	{
		xs[lc][lr + 32 * m] = g.xv[m].x;
		xs[lc + 1][lr + 32 * m] = g.xv[m].y;
		xs[lc + 2][lr + 32 * m] = g.xv[m].z;
		xs[lc + 3][lr + 32 * m] = g.xv[m].w;
	}
#pragma unroll
	for (int m = 0; m < ChunkRegs<KN>::CR; m++)
	{
		int			c = lr + 32 * m;
		if (c < KN)
		{
			cs[lc][c] = g.cv[m].x;
			cs[lc + 1][c] = g.cv[m].y;
			cs[lc + 2][c] = g.cv[m].z;
			cs[lc + 3][c] = g.cv[m].w;
		}
	}
}

/*
 * Labels for rows [0, rows) of a chunk (shape: x rows x d row-major, centred
 * by mu (d) as loaded; cf = c' k x d, bias = ||c'||^2; KN in {8, 16, 32, 64} >= k, or 64 with k > 64
 * done in chunks of 64 centroids, each re-reading the tile). Value per
 * (row, centroid) = ||c'||^2 - 2 x'.c' (fp32, the GEMM form of the other
 * paths); padded centroids get +inf. Grid-stride over 128-row tiles.
 */
template <int KN>
__global__ void __launch_bounds__(TA_THREADS, KN <= 16 ? 3 : 2)	/* small k: memory-bound, more tiles in flight */
tiled_assign_kernel(const float *__restrict__ x, int64_t rows, int64_t row0, int d, int k,
					const float *__restrict__ mu, const float *__restrict__ cf, const float *__restrict__ bias,
					int32_t *__restrict__ labels, unsigned long long *moved)
{
	constexpr int TN = KN / 8;
	__shared__ __align__(16) float xs[TA_BK][TA_XS];
	__shared__ __align__(16) float cs[TA_BK][KN];
	__shared__ float bs[KN];
	__shared__ unsigned int moved_sh;
	const int	tx = threadIdx.x & 7, ty = threadIdx.x >> 3;
	const bool	vec = (d & 3) == 0;
	const int	nkc = (d + TA_BK - 1) / TA_BK;
	unsigned int my_moved = 0;
	if (threadIdx.x == 0)
		moved_sh = 0;

	for (int64_t tile0 = (int64_t) blockIdx.x * TA_BM; tile0 < rows; tile0 += (int64_t) gridDim.x * TA_BM)
	{
		float		best[TA_TM];
		int			bi[TA_TM];
#pragma unroll
		for (int m = 0; m < TA_TM; m++)
		{
			best[m] = __int_as_float(0x7f800000);
			bi[m] = 0;
		}
		for (int c0 = 0; c0 < k; c0 += KN)
		{
			float		acc[TA_TM][TN];
#pragma unroll
			for (int m = 0; m < TA_TM; m++)
#pragma unroll
				for (int n = 0; n < TN; n++)
					acc[m][n] = 0.0f;
			ChunkRegs<KN> g;
			load_chunk<KN>(g, x, rows, tile0, mu, cf, k, c0, d, 0, vec);
			__syncthreads();	/* the previous tile's epilogue is done with bs, xs, cs */
			if (threadIdx.x < KN)
				bs[threadIdx.x] = c0 + (int) threadIdx.x < k ? bias[c0 + threadIdx.x] : __int_as_float(0x7f800000);
			store_chunk<KN>(g, xs, cs);
			__syncthreads();
			for (int kc = 0; kc < nkc; kc++)
			{
				if (kc + 1 < nkc)	/* next chunk's loads in flight during this chunk's FMAs */
					load_chunk<KN>(g, x, rows, tile0, mu, cf, k, c0, d, kc + 1, vec);
#pragma unroll
				for (int kk = 0; kk < TA_BK; kk++)
				{
					float4		a4 = *reinterpret_cast<const float4 *>(&xs[kk][ty * TA_TM]);
					float		a[TA_TM] = {a4.x, a4.y, a4.z, a4.w};
					float		b[TN];
					if (TN >= 4)
					{
#pragma unroll
						for (int h = 0; h < TN / 4; h++)
						{
							float4		b4 = *reinterpret_cast<const float4 *>(&cs[kk][h * 32 + tx * 4]);
							b[h * 4] = b4.x;
							b[h * 4 + 1] = b4.y;
							b[h * 4 + 2] = b4.z;
							b[h * 4 + 3] = b4.w;
						}
					}
					else
					{
#pragma unroll
						for (int n = 0; n < TN; n++)
							b[n] = cs[kk][tx * TN + n];
					}
#pragma unroll
					for (int m = 0; m < TA_TM; m++)
#pragma unroll
						for (int n = 0; n < TN; n++)
							acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
				}
				__syncthreads();
				if (kc + 1 < nkc)
				{
					store_chunk<KN>(g, xs, cs);
					__syncthreads();
				}
			}
			/* epilogue: best of my TN centroids, then of the 8 threads on these rows */
#pragma unroll
			for (int m = 0; m < TA_TM; m++)
			{
				float		v = __int_as_float(0x7f800000);
				int			c = 0x7fffffff;
#pragma unroll
				for (int n = 0; n < TN; n++)
				{
					int			cn = micro_centroid<KN>(tx, n);
					float		vn = fmaf(-2.0f, acc[m][n], bs[cn]);
					if (vn < v || c == 0x7fffffff)
					{
						v = vn;
						c = cn;
					}
				}
#pragma unroll
				for (int o = 1; o < 8; o <<= 1)
				{
					float		ov = __shfl_xor_sync(FULL, v, o);
					int			oc = __shfl_xor_sync(FULL, c, o);
					if (ov < v || (ov == v && oc < c))
					{
						v = ov;
						c = oc;
					}
				}
				/* earlier chunks hold lower indices: strict < keeps them on ties */
				if (c0 == 0 || v < best[m])
				{
					best[m] = v;
					bi[m] = c0 + c;
				}
			}
		}
#pragma unroll
		for (int m = 0; m < TA_TM; m++)
			if (tx == m)
			{
				int64_t		row = tile0 + ty * TA_TM + m;
				if (row < rows)
				{
					int			lbl = bi[m] < k ? bi[m] : 0;	/* NaN-only row: cannot happen on finite data */
					int64_t		gr = row0 + row;
					if (labels[gr] != lbl)
						my_moved++;
					labels[gr] = lbl;
				}
			}
	}
	if (my_moved)
		atomicAdd(&moved_sh, my_moved);
	__syncthreads();
	if (threadIdx.x == 0 && moved_sh)
		atomicAdd(moved, (unsigned long long) moved_sh);
}

/*
 * Update after the labels of a chunk are written (shape: x rows x d as the
 * path keeps it, c64 in the same frame, d <= 32 CPL): per window of W rows, a
 * counting sort by label in shared memory; warp w takes sorted positions
 * [w W/8, (w+1) W/8) with lanes over columns, accumulating each lane's columns
 * in registers (fixed point when DET, fp64 otherwise) and flushing them with
 * one atomic per column to the block's private sums (when they fit) or the
 * global ones whenever the label changes: at most min(k, W) + 8 flushes per
 * window instead of one per row. The same walk computes each row's exact fp64
 * distance (inertia, dist2). Dynamic shared memory: [private sums if a.priv]
 * [k counters][W labels][W positions][W distances].
 */
template <int CPL, bool DET, int W, bool SPLIT>
__global__ void __launch_bounds__(SU_THREADS, 2)
sorted_update_kernel(PassArgs a, int64_t slot_base)
{
	using Acc = typename std::conditional<DET, unsigned long long, double>::type;
	constexpr bool PREFETCH = CPL <= 8;	/* registers for the next row's values */
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ double red[SU_WARPS];
	__shared__ unsigned int moved_sh;
	const int	d = a.d, k = a.k;
	const int64_t nacc = (int64_t) k * d + k;
	unsigned long long *pacc = reinterpret_cast<unsigned long long *>(smem);
	int32_t    *cnt = reinterpret_cast<int32_t *>(smem + (a.priv ? (size_t) ((nacc * 8 + 15) / 16 * 16) : 0));
	int32_t    *lbl_s = cnt + (k + 3) / 4 * 4;
	int16_t    *order_s = reinterpret_cast<int16_t *>(lbl_s + W);
	double	   *e_s = reinterpret_cast<double *>(order_s + W);
	unsigned long long *dst = a.priv ? pacc : a.acc;
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	start_pass_block(a, &moved_sh, pacc, nacc);

	double		my_inertia = 0;
	static_assert(W <= 32768, "positions are int16");
	for (int64_t tile0 = (int64_t) blockIdx.x * W; tile0 < a.rows; tile0 += (int64_t) gridDim.x * W)
	{
		const int	nvalid = (int) (a.rows - tile0 < W ? a.rows - tile0 : W);
		for (int c = threadIdx.x; c < k; c += SU_THREADS)
			cnt[c] = 0;
		__syncthreads();
		constexpr int PER = W / SU_THREADS;
		int			pos[PER];
#pragma unroll
		for (int q = 0; q < PER; q++)
		{
			int			i = threadIdx.x + q * SU_THREADS;
			int			l = i < nvalid ? a.labels[a.row0 + tile0 + i] : -1;
			lbl_s[i] = l;
			pos[q] = l >= 0 ? atomicAdd(&cnt[l], 1) : 0;
		}
		__syncthreads();
		if (warp == 0)			/* exclusive scan of the counts: bucket starts */
		{
			int			carry = 0;
			for (int base = 0; base < k; base += 32)
			{
				int			v = base + lane < k ? cnt[base + lane] : 0;
				int			incl = v;
#pragma unroll
				for (int o = 1; o < 32; o <<= 1)
				{
					int			t = __shfl_up_sync(FULL, incl, o);
					if (lane >= o)
						incl += t;
				}
				if (base + lane < k)
					cnt[base + lane] = carry + incl - v;
				carry += __shfl_sync(FULL, incl, 31);
			}
		}
		__syncthreads();
#pragma unroll
		for (int q = 0; q < PER; q++)
		{
			int			i = threadIdx.x + q * SU_THREADS;
			if (lbl_s[i] >= 0)
				order_s[cnt[lbl_s[i]] + pos[q]] = (int16_t) i;
		}
		__syncthreads();

		const int	p0 = warp * (W / SU_WARPS), p1 = min(nvalid, p0 + W / SU_WARPS);
		Acc			acc[CPL];
		float		xv[CPL];
		int			cur = -1;
		unsigned	run = 0;
		auto		flush = [&]() {
			if (cur < 0)
				return;
#pragma unroll
			for (int m = 0; m < CPL; m++)
			{
				int			col = lane + 32 * m;
				if (col < d && acc[m] != (Acc) 0)
					atomicAdd(reinterpret_cast<Acc *>(dst) + (int64_t) cur * d + col, acc[m]);
			}
			if (lane == 0)
				atomicAdd(reinterpret_cast<Acc *>(dst) + (int64_t) k * d + cur, (Acc) run);
		};
		auto		load_row = [&](int p, float (&v)[CPL]) {
			const float *src = a.x + (tile0 + order_s[p]) * d;
			const float *lo = SPLIT ? a.xlo + (tile0 + order_s[p]) * d : nullptr;	/* GEMM 3xTF32: x' = x + lo */
#pragma unroll
			for (int m = 0; m < CPL; m++)
			{
				int			col = lane + 32 * m;
				v[m] = col < d ? (SPLIT ? src[col] + lo[col] : src[col]) : 0.0f;
			}
		};
		if (PREFETCH && p0 < p1)
			load_row(p0, xv);
		for (int p = p0; p < p1; p++)
		{
			const int	i = order_s[p];
			const int	l = lbl_s[i];
			if (l != cur)
			{
				flush();
				cur = l;
				run = 0;
#pragma unroll
				for (int m = 0; m < CPL; m++)
					acc[m] = (Acc) 0;
			}
			float		cv[CPL];
			if (PREFETCH)
			{
#pragma unroll
				for (int m = 0; m < CPL; m++)
					cv[m] = xv[m];
				if (p + 1 < p1)
					load_row(p + 1, xv);
			}
			else
				load_row(p, cv);
			const double *c = a.c64 + (size_t) l * d;
			double		e = 0;
#pragma unroll
			for (int m = 0; m < CPL; m++)
			{
				int			col = lane + 32 * m;
				if (col < d)
				{
					double		u = (double) cv[m] - c[col];
					e += u * u;
					if (DET)
						acc[m] += (Acc) __double2ll_rn((double) cv[m] * a.qscale);
					else
						acc[m] += (Acc) cv[m];
				}
			}
#pragma unroll
			for (int o = 16; o > 0; o >>= 1)
				e += __shfl_xor_sync(FULL, e, o);
			if (lane == 0)
			{
				e_s[i] = e;
				if (a.dist2)
					a.dist2[tile0 + i] = e;
			}
			run++;
		}
		flush();
		__syncthreads();
		/* inertia in tile order (the sort order may vary between runs) */
#pragma unroll
		for (int q = 0; q < PER; q++)
		{
			int			i = threadIdx.x * PER + q;
			if (i < nvalid)
				my_inertia += e_s[i];
		}
		__syncthreads();		/* lbl_s, order_s, e_s, cnt are reused by the next tile */
	}
	finish_pass_block(a, slot_base, my_inertia, 0, red, &moved_sh, pacc, nacc);
}

template <int KN>
static void
launch_assign_t(const PassArgs &a, int grid, cudaStream_t s)
{
	tiled_assign_kernel<KN><<<grid, TA_THREADS, 0, s>>>(a.x, a.rows, a.row0, a.d, a.k, a.mu, a.cf, a.bias,
														a.labels, a.moved);
	CKLAUNCH("tiled_assign_kernel");
}

template <int CPL, bool DET, int W>
static void
launch_update_t(Run &r, const PassArgs &a, int64_t slot_base, size_t smem, cudaStream_t s)
{
	int			grid = (int) std::max<int64_t>(1, std::min<int64_t>(r.grid, (a.rows + W - 1) / W));
	/* x' in two parts (GEMM 3xTF32): its own instances, so TILED's registers stay as they were */
	auto		kernel = a.xlo ? sorted_update_kernel<CPL, DET, W, true> : sorted_update_kernel<CPL, DET, W, false>;
	allow_smem((const void *) kernel, r, smem);
	kernel<<<grid, SU_THREADS, smem, s>>>(a, slot_base);
	CKLAUNCH("sorted_update_kernel");
}

/*
 * The label-sorted update of one chunk (TILED and GEMM paths, d <= 1024).
 * Private sums when k x (d+1) fits next to a 1024-row window; otherwise
 * global flushes over 4096-row windows, so a large k still gets several
 * rows per flush. Inertia slots: slot_base + block, at most r.grid blocks.
 */
void
launch_sorted_update(Run &r, const PassArgs &a0, int64_t slot_base, cudaStream_t s)
{
	PassArgs	a = a0;
	size_t		cnt_bytes = ((size_t) r.k * 4 + 15) / 16 * 16;
	a.priv = priv_fits(r, cnt_bytes + 1024 * SU_ROW_BYTES) ? 1 : 0;
	const int	w = a.priv ? 1024 : 4096;
	size_t		smem = (a.priv ? priv_bytes(r) : 0) + cnt_bytes + (size_t) w * SU_ROW_BYTES;
	int			cpl = (r.d + 31) / 32;
	r.launches++;
#define UPDATE(CPL) if (cpl <= CPL) { \
		if (a.det && a.priv) launch_update_t<CPL, true, 1024>(r, a, slot_base, smem, s); \
		else if (a.det) launch_update_t<CPL, true, 4096>(r, a, slot_base, smem, s); \
		else if (a.priv) launch_update_t<CPL, false, 1024>(r, a, slot_base, smem, s); \
		else launch_update_t<CPL, false, 4096>(r, a, slot_base, smem, s); \
		return; }
	UPDATE(2) UPDATE(4) UPDATE(8) UPDATE(16) UPDATE(24) UPDATE(32)
#undef UPDATE
	throw Failure {PGKM_ERR_INTERNAL, "no update kernel for this d"};
}

void
launch_tiled_pass(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s)
{
	int64_t		tiles = (a.rows + TA_BM - 1) / TA_BM;
	int			grid_a = (int) std::max<int64_t>(1, std::min<int64_t>(tiles, 2LL * r.sms));
	if (r.k <= 8)
		launch_assign_t<8>(a, grid_a, s);
	else if (r.k <= 16)
		launch_assign_t<16>(a, grid_a, s);
	else if (r.k <= 32)
		launch_assign_t<32>(a, grid_a, s);
	else
		launch_assign_t<64>(a, grid_a, s);
	r.launches++;
	launch_sorted_update(r, a, slot_base, s);
}

}							/* namespace pgkm_cuda */
