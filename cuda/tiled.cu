/*
 * tiled.cu: the TILED path (32 <= d <= 1024, k <= 256 by default; plan.cpp).
 *
 * Why: for large d and small k the cuBLAS path writes a distance tile, reads
 * it back and reads x twice, in hundreds of launches per iteration, and its
 * tall-skinny SGEMMs (n x 8 or n x 64) run far from the card's rate. Here
 * tiled_assign_kernel takes a tile of 128 rows and computes x'.c' against
 * every centroid with a shared-memory tiled product (each thread a 4 x KN/8
 * register micro-tile, fp32 FMA, no TF32), the argmin in the epilogue (lowest
 * index on ties); only the labels leave the chip. The chunk's sums, counts and
 * exact distances follow in the sorted update (sorted_update.cu).
 * DRAM bytes per pass: x twice (4nd each) plus labels (12n); the floor counts
 * x once, so memory-bound shapes (small k) can reach 2x of it at best.
 * k > KN (up to 256 by default) is done in chunks of 64 centroids, each
 * re-reading the row tile (from L2 when it is still there).
 * The kernel centres x in registers as it loads it (x' = x - mu, the GEMM
 * form's guard against cancellation; cf holds c' = c - mu); the update reads
 * x as given, so its sums and fp64 distances are of the raw rows, exactly as
 * on the fused paths.
 * Labels are exact (label_bound.h): the epilogue keeps each row's float
 * runner-up and ||x'||^2 (summed as the tile is loaded); a row whose
 * runner-up is not provably worse is listed, not labelled (k <= 64: with the
 * mask of its centroids under the limit), and launch_decide_listed
 * (exact_labels.cu) decides it in fp64 before the update.
 */
#include "device/exact_label.cuh"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int TA_THREADS = 256;
static constexpr int TA_BM = 128;	/* rows per tile */
static constexpr int TA_BK = 32;	/* features per shared-memory chunk */
static constexpr int TA_TM = 4;		/* rows per thread */
static constexpr int TA_XS = TA_BM + 4;	/* x chunk row stride: keeps float4 reads aligned */

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

/* ||x'||^2 of my 4 loader rows (lr + 32 m), this chunk's 4 features of each. */
template <int KN>
__device__ __forceinline__ void
add_squares(const ChunkRegs<KN> &g, float (&xx)[4])
{
#pragma unroll
	for (int m = 0; m < 4; m++)
	{
		xx[m] = fmaf(g.xv[m].x, g.xv[m].x, xx[m]);
		xx[m] = fmaf(g.xv[m].y, g.xv[m].y, xx[m]);
		xx[m] = fmaf(g.xv[m].z, g.xv[m].z, xx[m]);
		xx[m] = fmaf(g.xv[m].w, g.xv[m].w, xx[m]);
	}
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
					int32_t *__restrict__ labels, unsigned long long *moved, LabelTest test,
					int32_t *__restrict__ list, unsigned int *list_count, unsigned long long *__restrict__ list_mask)
{
	constexpr int TN = KN / 8;
	__shared__ __align__(16) float xs[TA_BK][TA_XS];
	__shared__ __align__(16) float cs[TA_BK][KN];
	__shared__ float bs[KN];
	__shared__ float x2s[TA_BM];	/* fl(||x'||^2) of the tile's rows */
	__shared__ unsigned int moved_sh;
	const int	tx = threadIdx.x & 7, ty = threadIdx.x >> 3;
	const bool	vec = (d & 3) == 0;
	const int	nkc = (d + TA_BK - 1) / TA_BK;
	unsigned int my_moved = 0;
	if (threadIdx.x == 0)
		moved_sh = 0;

	for (int64_t tile0 = (int64_t) blockIdx.x * TA_BM; tile0 < rows; tile0 += (int64_t) gridDim.x * TA_BM)
	{
		float		best[TA_TM], second[TA_TM];
		int			bi[TA_TM];
		float		xx[4] = {0.0f, 0.0f, 0.0f, 0.0f};	/* loader rows' squares, first centroid chunk */
#pragma unroll
		for (int m = 0; m < TA_TM; m++)
		{
			best[m] = second[m] = __int_as_float(0x7f800000);
			bi[m] = 0;
		}
		float		acc[TA_TM][TN];	/* after the loop, the last centroid chunk's (all of them when k <= KN) */
		for (int c0 = 0; c0 < k; c0 += KN)
		{
#pragma unroll
			for (int m = 0; m < TA_TM; m++)
#pragma unroll
				for (int n = 0; n < TN; n++)
					acc[m][n] = 0.0f;
			ChunkRegs<KN> g;
			load_chunk<KN>(g, x, rows, tile0, mu, cf, k, c0, d, 0, vec);
			if (c0 == 0)
				add_squares<KN>(g, xx);
			__syncthreads();	/* the previous tile's epilogue is done with bs, xs, cs, x2s */
			if (threadIdx.x < KN)
				bs[threadIdx.x] = c0 + (int) threadIdx.x < k ? bias[c0 + threadIdx.x] : __int_as_float(0x7f800000);
			store_chunk<KN>(g, xs, cs);
			__syncthreads();
			for (int kc = 0; kc < nkc; kc++)
			{
				if (kc + 1 < nkc)	/* next chunk's loads in flight during this chunk's FMAs */
				{
					load_chunk<KN>(g, x, rows, tile0, mu, cf, k, c0, d, kc + 1, vec);
					if (c0 == 0)
						add_squares<KN>(g, xx);
				}
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
			if (c0 == 0)		/* the rows' squares: the 8 threads of a loader row, then shared */
			{
#pragma unroll
				for (int m = 0; m < 4; m++)
				{
#pragma unroll
					for (int o = 1; o < 8; o <<= 1)
						xx[m] += __shfl_xor_sync(FULL, xx[m], o);
					if ((threadIdx.x & 7) == 0)
						x2s[(threadIdx.x >> 3) + 32 * m] = xx[m];
				}
			}
			/* epilogue: best and runner-up of my TN centroids, then of the 8 threads on these rows */
#pragma unroll
			for (int m = 0; m < TA_TM; m++)
			{
				float		v = __int_as_float(0x7f800000), v2 = v;
				int			c = 0x7fffffff;
#pragma unroll
				for (int n = 0; n < TN; n++)
				{
					int			cn = micro_centroid<KN>(tx, n);
					float		vn = fmaf(-2.0f, acc[m][n], bs[cn]);
					if (vn < v || c == 0x7fffffff)
					{
						v2 = fminf(v2, v);
						v = vn;
						c = cn;
					}
					else
						v2 = fminf(v2, vn);
				}
#pragma unroll
				for (int o = 1; o < 8; o <<= 1)
				{
					float		ov = __shfl_xor_sync(FULL, v, o);
					int			oc = __shfl_xor_sync(FULL, c, o);
					float		ov2 = __shfl_xor_sync(FULL, v2, o);
					merge_best2(v, c, v2, ov, oc, ov2);
				}
				/* earlier chunks hold lower indices: strict < keeps them on ties */
				if (c0 == 0)
				{
					best[m] = v;
					bi[m] = c;
					second[m] = v2;
				}
				else if (v < best[m])
				{
					second[m] = fminf(best[m], v2);
					best[m] = v;
					bi[m] = c0 + c;
				}
				else
					second[m] = fminf(second[m], v);
			}
		}
		__syncthreads();		/* x2s written */
		/* row ty * 4 + (tx & 3): its values selected in registers, one limit per thread */
		const int	mm = tx & (TA_TM - 1);
		float		vb = best[0], v2 = second[0];
		int			ib = bi[0];
#pragma unroll
		for (int m = 1; m < TA_TM; m++)
			if (mm == m)
			{
				vb = best[m];
				v2 = second[m];
				ib = bi[m];
			}
		const double lim = label_limit(test, vb, x2s[ty * TA_TM + mm]);
		const bool	my_open = !(v2 > lim);
		const int	lane = threadIdx.x & 31;
		/*
		 * With list_mask (k <= KN: acc holds every centroid's value), an open
		 * row's candidates, the centroids under its limit, OR-ed over its 8
		 * threads (thread tx = m has row m's limit), so that the fp64 decision
		 * reads only those.
		 */
		unsigned long long my_mask = 0;
		if (list_mask && __any_sync(FULL, my_open))
#pragma unroll
			for (int m = 0; m < TA_TM; m++)
			{
				const double lm = __shfl_sync(FULL, lim, (lane & ~7) | m);
				unsigned long long msk = 0;
				if (!(second[m] > lm))
#pragma unroll
					for (int n = 0; n < TN; n++)
					{
						const int	cn = micro_centroid<KN>(tx, n);
						const float vn = fmaf(-2.0f, acc[m][n], bs[cn]);
						if (cn < k && (cn == bi[m] || !((double) vn > lm)))
							msk |= 1ull << cn;
					}
#pragma unroll
				for (int o = 1; o < 8; o <<= 1)
					msk |= __shfl_xor_sync(FULL, msk, o);
				if (mm == m)
					my_mask = msk;
			}
		/* thread tx < 4 labels row ty * 4 + tx, or lists it (one atomic per warp) */
		const int64_t row = tile0 + ty * TA_TM + mm;
		const bool	mine = tx < TA_TM && row < rows;
		const unsigned listed = __ballot_sync(FULL, mine && my_open);
		unsigned int base = 0;
		if (listed)
		{
			if (lane == __ffs(listed) - 1)
				base = atomicAdd(list_count, (unsigned) __popc(listed));
			base = __shfl_sync(FULL, base, __ffs(listed) - 1);
		}
		if (mine && my_open)	/* decided later, in fp64 */
		{
			const unsigned int i = base + __popc(listed & ((1u << lane) - 1));
			list[i] = (int32_t) row;
			if (list_mask)
				list_mask[i] = my_mask;
		}
		else if (mine)
		{
			int			lbl = ib < k ? ib : 0;	/* NaN-only row: cannot happen on finite data */
			int64_t		gr = row0 + row;
			if (labels[gr] != lbl)
				my_moved++;
			labels[gr] = lbl;
		}
	}
	if (my_moved)
		atomicAdd(&moved_sh, my_moved);
	__syncthreads();
	if (threadIdx.x == 0 && moved_sh)
		atomicAdd(moved, (unsigned long long) moved_sh);
}

template <int KN>
static void
launch_assign_t(const PassArgs &a, int grid, cudaStream_t s)
{
	tiled_assign_kernel<KN><<<grid, TA_THREADS, 0, s>>>(a.x, a.rows, a.row0, a.d, a.k, a.mu, a.cf, a.bias,
														a.labels, a.moved, a.test, a.list, a.list_count,
														a.k <= KN ? a.list_mask : nullptr);
	CKLAUNCH("tiled_assign_kernel");
}

void
launch_tiled_pass(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s)
{
	int64_t		tiles = (a.rows + TA_BM - 1) / TA_BM;
	int			grid_a = (int) std::max<int64_t>(1, std::min<int64_t>(tiles, 2LL * r.limits.sms));
	if (r.k <= 8)
		launch_assign_t<8>(a, grid_a, s);
	else if (r.k <= 16)
		launch_assign_t<16>(a, grid_a, s);
	else if (r.k <= 32)
		launch_assign_t<32>(a, grid_a, s);
	else
		launch_assign_t<64>(a, grid_a, s);
	r.launches++;
	launch_decide_listed(r, a, s);
	launch_sorted_update(r, a, slot_base, s);
}

}							/* namespace pgkm_cuda */
