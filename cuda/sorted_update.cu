/*
 * sorted_update.cu: the update of a chunk whose labels are already written
 * (TILED path, and GEMM path for d <= 1024): per window of rows, a counting
 * sort by label in shared memory; each warp walks its share of the sorted
 * rows with lanes over columns, adding each row into per-lane register
 * accumulators that are flushed (one atomic per column) only when the label
 * changes, and computing the exact fp64 distance to the chosen centroid.
 * Sums are the same fixed-point integers as on the other paths (exact, so
 * the sort's unstable order cannot change them); inertia is summed per row in
 * window order, so deterministic mode stays bit-identical run to run.
 */
#include "device/distance.cuh"
#include "device/sums.cuh"
#include "launch.cuh"

#include <algorithm>
#include <type_traits>

namespace pgkm_cuda
{

static constexpr int SU_THREADS = 256;
static constexpr int SU_WARPS = SU_THREADS / 32;
/* Shared bytes per row of a sort window: label, position, exact distance. */
static constexpr size_t SU_ROW_BYTES = 4 + 2 + 8;

/*
 * Update after the labels of a chunk are written (shape: x rows x d as the
 * path keeps it, read back as stored by XM: 0 as kept, 1 shifted (GEMM),
 * 2 split and shifted (GEMM 3xTF32); d <= 32 CPL): per window of W rows, a
 * counting sort by label in shared memory; warp w takes sorted positions
 * [w W/8, (w+1) W/8) with lanes over columns, accumulating each lane's columns
 * in registers (fixed point when DET, fp64 otherwise) and flushing them with
 * one atomic per column to the block's private sums (when they fit) or the
 * global ones whenever the label changes: at most min(k, W) + 8 flushes per
 * window instead of one per row. The same walk computes each row's exact fp64
 * distance (inertia, dist2). Dynamic shared memory: [private sums if a.priv]
 * [k counters][W labels][W positions][W distances][d scales if DET]
 * [d shift if XM == 1].
 */
template <int CPL, bool DET, int W, int XM>
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
	double	   *qscale_s = e_s + W;	/* DET: the columns' fixed-point scales, d */
	float	   *shift_s = reinterpret_cast<float *>(qscale_s + (DET ? d : 0));	/* XM == 1: the rows' shift, d */
	unsigned long long *dst = a.priv ? pacc : a.acc;
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	start_pass_block(a, &moved_sh, pacc, nacc);
	if (XM == 1)
		for (int j = threadIdx.x; j < d; j += SU_THREADS)
			shift_s[j] = a.shift[j];
	if (DET)					/* in shared memory: per value from global it cost 1.5-6 % */
		for (int j = threadIdx.x; j < d; j += SU_THREADS)
			qscale_s[j] = a.qscale[j];

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
			const float *lo = XM == 2 ? a.xlo + (tile0 + order_s[p]) * d : nullptr;
#pragma unroll
			for (int m = 0; m < CPL; m++)
			{
				int			col = lane + 32 * m;
				/* the stored value; XM == 1 adds its shift back below (fewer live registers) */
				v[m] = col < d ? stored_value(src, lo, XM == 2 ? a.shift : nullptr, col) : 0.0f;
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
					if (XM == 1)	/* the stored value, exactly (stored_value) */
						cv[m] = __fadd_rn(cv[m], shift_s[col]);
					double		u = (double) cv[m] - c[col];
					e += u * u;
					if (DET)
						acc[m] += (Acc) fixed_point(cv[m], qscale_s[col]);
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

template <int CPL, bool DET, int W>
static void
launch_update_t(Run &r, const PassArgs &a, int64_t slot_base, size_t smem, cudaStream_t s)
{
	int			grid = (int) std::max<int64_t>(1, std::min<int64_t>(r.plan.grid, (a.rows + W - 1) / W));
	/* the GEMM path's shifted (and split) rows: their own instances, so TILED's registers stay as they were */
	auto		kernel = a.xlo ? sorted_update_kernel<CPL, DET, W, 2>
		: a.shift ? sorted_update_kernel<CPL, DET, W, 1> : sorted_update_kernel<CPL, DET, W, 0>;
	allow_smem((const void *) kernel, r, smem);
	kernel<<<grid, SU_THREADS, smem, s>>>(a, slot_base);
	CKLAUNCH("sorted_update_kernel");
}

/*
 * The label-sorted update of one chunk (TILED and GEMM paths, d <= 1024).
 * Private sums when k x (d+1) fits next to a 1024-row window; otherwise
 * global flushes over 4096-row windows (2048 when the chunk has fewer than
 * 4096 rows per SM), so a large k still gets several rows per flush. Inertia slots: slot_base + block, at most plan.grid blocks.
 */
void
launch_sorted_update(Run &r, const PassArgs &a0, int64_t slot_base, cudaStream_t s)
{
	PassArgs	a = a0;
	size_t		cnt_bytes = ((size_t) r.k * 4 + 15) / 16 * 16;
	const size_t shift_bytes = a.shift && !a.xlo ? (size_t) r.d * 4 : 0;	/* XM == 1's copy */
	const size_t scale_bytes = a.det ? (size_t) r.d * 8 : 0;	/* DET: the columns' scales */
	a.priv = priv_fits(r.settings, r.limits, r.d, r.k, cnt_bytes + 1024 * SU_ROW_BYTES + scale_bytes + shift_bytes) ? 1 : 0;
	/* global flushes: 2048-row windows where 4096-row ones would leave SMs idle (n = 245,760: 60 of 132 blocks) */
	const int	w = a.priv ? 1024 : a.rows >= 4096LL * r.limits.sms ? 4096 : 2048;
	size_t		smem = (a.priv ? priv_bytes(r.d, r.k) : 0) + cnt_bytes + (size_t) w * SU_ROW_BYTES + scale_bytes +
		shift_bytes;
	int			cpl = (r.d + 31) / 32;
	r.launches++;
#define UPDATE(CPL) if (cpl <= CPL) { \
		if (a.det && a.priv) launch_update_t<CPL, true, 1024>(r, a, slot_base, smem, s); \
		else if (a.det && w == 2048) launch_update_t<CPL, true, 2048>(r, a, slot_base, smem, s); \
		else if (a.det) launch_update_t<CPL, true, 4096>(r, a, slot_base, smem, s); \
		else if (a.priv) launch_update_t<CPL, false, 1024>(r, a, slot_base, smem, s); \
		else if (w == 2048) launch_update_t<CPL, false, 2048>(r, a, slot_base, smem, s); \
		else launch_update_t<CPL, false, 4096>(r, a, slot_base, smem, s); \
		return; }
	UPDATE(2) UPDATE(4) UPDATE(8) UPDATE(16) UPDATE(24) UPDATE(32)
#undef UPDATE
	fail(PGKM_ERR_INTERNAL, "no update kernel for d = %d", r.d);
}

}							/* namespace pgkm_cuda */
