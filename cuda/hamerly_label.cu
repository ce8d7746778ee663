/*
 * hamerly_label.cu: the rows a Hamerly or Yinyang pass listed (hamerly.cu),
 * labelled exactly, against every centroid (Yinyang: every group the block's
 * rows cannot skip, label_tiles.cuh), with their new lower bound l (Yinyang:
 * a bound per computed group):
 *   1. the float level, a block per 128 rows: E_c = sum_j (x_j - f_cj)^2
 *      (f = float(c)) in feature order, fmaf after one subtraction, so each
 *      term passes through at most d + 3 roundings; with E_1 the smallest
 *      (centroid b) and E_2 the next, device/bracket.cuh's lo(E_2) >
 *      band hi(E_1) proves b the unique fp64 argmin (every other centroid
 *      has ||x - c|| >= lo(E_2), so a larger sqdist_exact), and l = lo(E_2);
 *      Where the path ranks in the centred form (DOT, TILED: r.test is
 *      FORM_CENTRED) and d <= 64, the float level is instead the path's own
 *      arithmetic: V_c = fl(bias_c - 2 x'.c'), x' = fl(x - mu), one FMA per
 *      feature (half the direct form's work), the row's x' kept in shared
 *      memory for every centroid; label_limit proves the argmin as the
 *      TILED path does, and the runner-up gives l (centred_lower);
 *   2. the rows the float level cannot settle (near-ties at its resolution,
 *      non-finite values) in fp64, sqdist_exact's own order: a block per row
 *      while they are few, tiles of 64 rows otherwise.
 * Labels, moves and bounds are per row; no order matters.
 */
#include "device/bounded_row.cuh"
#include "device/bracket.cuh"
#include "device/label_tiles.cuh"
#include "hamerly_args.h"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int OF_THREADS = 256;
static constexpr int OF_ROWS = 128;		/* rows per block: 16 groups of 8 */
static constexpr int OF_CENTS = 64;		/* centroids per step: 16 lanes x 4 adjacent */
static constexpr int OF_F = 16;			/* features per step */
static constexpr int OF_PAD = 4;		/* keeps float4 rows aligned, spreads the fills' banks */
static constexpr int OC_DMAX = 64;		/* the centred level's rows stay in shared memory */
static constexpr int64_t OC_SHORT_LIST = 32768;	/* lists the centred level takes 64 rows per block */
static constexpr int OR_THREADS = 256;
static constexpr int OR_ROWS = 64;		/* rows per block: 16 groups of 4 */
static constexpr int OR_CENTS = 64;		/* centroids per step: 16 lanes x 4 */
static constexpr int OR_F = 16;			/* features per step */
static constexpr int OW_THREADS = 256;	/* the short list's fp64 level: a block per row */
static constexpr int OW_DMAX = 1024;	/* its row in shared memory (plan.hamerly: d <= 1024) */
static constexpr int OW_MAX_ROWS = 1024;	/* lists up to this long; the tiled kernel takes longer ones */
static_assert(OF_CENTS == YY_GROUP && OR_CENTS == YY_GROUP, "a step is a Yinyang group");

/*
 * Level 1: list positions [list0, min(list1, count)). Thread t: rows
 * 8 (t / 16) .. + 7 of the block's, positions 4 (t % 16) .. + 3 of each
 * step of 64 (YY: the steps are the groups, Yinyang's bounds written).
 */
template <bool YY>
__global__ void __launch_bounds__(OF_THREADS)
label_float_kernel(HamArgs a, Bracket br)
{
	__shared__ __align__(16) float xs[OF_F][OF_ROWS + OF_PAD];
	__shared__ __align__(16) float cs[OF_F][OF_CENTS + OF_PAD];
	__shared__ int32_t rows_s[OF_ROWS];
	const int	t = threadIdx.x, rg = t >> 4, cl = t & 15;
	const int	d = a.d, k = a.k;
	unsigned	moved = 0;
	unsigned long long work = 0;
	const float inf = __int_as_float(0x7f800000);
	const int64_t end = min(a.list1, (int64_t) *a.open_count);
	for (int64_t g0 = a.list0 + (int64_t) blockIdx.x * OF_ROWS; g0 < end; g0 += (int64_t) gridDim.x * OF_ROWS)
	{
		load_listed_rows(rows_s, a, g0, end);
		float		e1[8], e2[8], sw[8];
		int			i1[8];
		reset_best(e1, e2, i1, inf);
		for (float &v : sw)
			v = inf;
		for (int c0 = 0; c0 < k; c0 += OF_CENTS)
		{
			if (!step_open<YY>(a, rows_s, c0, end - g0, work))
				continue;
			float		acc[8][4];
			zero_tile(acc);
			for (int f0 = 0; f0 < d; f0 += OF_F)
			{
				fill_step<OF_THREADS, OF_ROWS, OF_CENTS>(xs, cs, rows_s, a, a.cf, c0, f0);
				__syncthreads();
#pragma unroll
				for (int ff = 0; ff < OF_F; ff++)
				{
					const float4 xa = *reinterpret_cast<const float4 *>(&xs[ff][rg * 8]);
					const float4 xb = *reinterpret_cast<const float4 *>(&xs[ff][rg * 8 + 4]);
					const float4 cv = *reinterpret_cast<const float4 *>(&cs[ff][cl * 4]);
					const float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
					const float cw[4] = {cv.x, cv.y, cv.z, cv.w};
#pragma unroll
					for (int p = 0; p < 8; p++)
#pragma unroll
						for (int q = 0; q < 4; q++)
						{
							const float u = __fsub_rn(xv[p], cw[q]);
							acc[p][q] = __fmaf_rn(u, u, acc[p][q]);
						}
				}
				__syncthreads();
			}
			fold_step<YY>(a, acc, e1, e2, i1, sw, c0, [&](int q) { return c0 + cl * 4 + q; },
						  [&](int p) { return rows_s[rg * 8 + p]; }, [&](float v, int) { return bracket_lo(br, v); }, inf);
		}
#pragma unroll
		for (int p = 0; p < 8; p++)
		{
			float		b = e1[p], s = e2[p];
			int			bi = i1[p];
			finish_best<YY>(b, s, bi);
			const int	row = rows_s[rg * 8 + p];
			if (cl == 0 && row >= 0)
			{
				double		low = dinf();	/* k = 1: no other centroid */
				bool		proven = bi >= 0;
				if (k > 1)
				{
					low = bracket_lo(br, s);
					proven = proven && low > bracket_hi(br, b) * br.band;
					if (YY)
						low = bracket_lo(br, sw[p]);	/* the label's group */
				}
				settle_row(a, row, proven, bi, low, moved);
			}
		}
	}
	count_moves(a, moved, work);
}

/*
 * The centred level, d <= OC_DMAX: list positions [list0, min(list1,
 * count)), 128 rows per block. The block's x' = fl(x - mu) (all features,
 * 0 past d) and fl(||x'||^2) stay in shared memory; per step of 64 centroids
 * x 16 features of cfc, thread t adds rows 8 (t / 16) .. + 7 against
 * centroids 4 (t % 16) .. + 3 with one fmaf each (in feature order), then
 * V = fmaf(mscale, acc, bias): the TILED kernel's form (DOT's with -2c'
 * stored), so its test applies: a runner-up V_2 above label_limit(V_1, x2)
 * proves the float argmin the unique fp64 one (finite V_2 required here).
 */
template <bool YY, int RPT>
__global__ void __launch_bounds__(OF_THREADS)
label_centred_kernel(HamArgs a, CentredBound cb)
{
	static_assert(RPT % 4 == 0, "rows are read four at a time");
	constexpr int R = 16 * RPT;	/* rows per block */
	__shared__ __align__(16) float xs[OC_DMAX][R + OF_PAD];
	__shared__ __align__(16) float cs[OF_F][OF_CENTS + OF_PAD];
	__shared__ float bs[OF_CENTS];
	__shared__ float x2s[R];
	__shared__ int32_t rows_s[R];
	const int	t = threadIdx.x, rg = t >> 4, cl = t & 15;
	const int	d = a.d, k = a.k, dp = (d + OF_F - 1) / OF_F * OF_F;
	unsigned	moved = 0;
	unsigned long long work = 0;
	const float inf = __int_as_float(0x7f800000);
	const int64_t count = *a.open_count;
	if ((count <= OC_SHORT_LIST) != (RPT < 8))
		return;					/* the other variant's list */
	const int64_t end = min(a.list1, count);
	for (int64_t g0 = a.list0 + (int64_t) blockIdx.x * R; g0 < end; g0 += (int64_t) gridDim.x * R)
	{
		load_listed_rows(rows_s, a, g0, end);	/* and xs, x2s are rewritten */
		for (int q = t; q < R * dp; q += OF_THREADS)
		{
			const int	rr = q / dp, j = q % dp, row = rows_s[rr];
			float		v = 0;
			if (row >= 0 && j < d)
			{
				const size_t o = (size_t) row * d;
				v = __fsub_rn(stored_value(a.x + o, a.xlo ? a.xlo + o : nullptr, a.shift, j), a.mu[j]);
			}
			xs[j][rr] = v;
		}
		__syncthreads();
		if (t < R)
		{
			float		x2 = 0;
			for (int j = 0; j < d; j++)
				x2 = fmaf(xs[j][t], xs[j][t], x2);
			x2s[t] = x2;
		}
		float		e1[RPT], e2[RPT], sw[RPT];
		int			i1[RPT];
		reset_best(e1, e2, i1, inf);
		for (float &v : sw)
			v = inf;
		for (int c0 = 0; c0 < k; c0 += OF_CENTS)
		{
			if (!step_open<YY>(a, rows_s, c0, end - g0, work))
				continue;
			float		acc[RPT][4];
			zero_tile(acc);
			for (int f0 = 0; f0 < dp; f0 += OF_F)
			{
				__syncthreads();	/* the last step is done with cs, bs */
				for (int q = t; q < OF_CENTS * OF_F; q += OF_THREADS)
				{
					const int	cc = q / OF_F, ff = q % OF_F, j = f0 + ff, cn = c0 + cc;
					cs[ff][cc] = cn < k && j < d ? a.cfc[(size_t) centroid_at(a, cn) * d + j] : 0.0f;
				}
				if (f0 == 0 && t < OF_CENTS)
					bs[t] = c0 + t < k ? a.bias[centroid_at(a, c0 + t)] : inf;
				__syncthreads();
#pragma unroll
				for (int ff = 0; ff < OF_F; ff++)
				{
					float		xv[RPT];
#pragma unroll
					for (int h = 0; h < RPT; h += 4)
					{
						const float4 xa = *reinterpret_cast<const float4 *>(&xs[f0 + ff][rg * RPT + h]);
						xv[h] = xa.x;
						xv[h + 1] = xa.y;
						xv[h + 2] = xa.z;
						xv[h + 3] = xa.w;
					}
					const float4 cv = *reinterpret_cast<const float4 *>(&cs[ff][cl * 4]);
					const float cw[4] = {cv.x, cv.y, cv.z, cv.w};
#pragma unroll
					for (int p = 0; p < RPT; p++)
#pragma unroll
						for (int q = 0; q < 4; q++)
							acc[p][q] = __fmaf_rn(xv[p], cw[q], acc[p][q]);
				}
			}
#pragma unroll
			for (int p = 0; p < RPT; p++)
#pragma unroll
				for (int q = 0; q < 4; q++)
					acc[p][q] = __fmaf_rn(cb.mscale, acc[p][q], bs[cl * 4 + q]);
			fold_step<YY>(a, acc, e1, e2, i1, sw, c0, [&](int q) { return c0 + cl * 4 + q; },
						  [&](int p) { return rows_s[rg * RPT + p]; },
						  [&](float v, int p) { return centred_lower(cb, v, x2s[rg * RPT + p]); }, inf);
		}
#pragma unroll
		for (int p = 0; p < RPT; p++)
		{
			float		b = e1[p], s = e2[p];
			int			bi = i1[p];
			finish_best<YY>(b, s, bi);
			const int	row = rows_s[rg * RPT + p];
			if (cl == 0 && row >= 0)
			{
				double		low = dinf();	/* k = 1: no other centroid */
				bool		proven = bi >= 0;
				if (k > 1)
				{
					const float x2 = x2s[rg * RPT + p];
					proven = proven && s <= FLT_MAX && (double) s > label_limit(cb.test, b, x2);
					low = centred_lower(cb, YY ? sw[p] : s, x2);	/* Yinyang: the label's group */
				}
				settle_row(a, row, proven, bi, low, moved);
			}
		}
	}
	count_moves(a, moved, work);
}

/*
 * The fp64 level: list positions [list0, min(list1, count)), 64 rows per
 * block and round. Thread t: rows 4 (t / 16) .. + 3 of the block's,
 * centroids t % 16 + 16 q of each step of 64; each (row, centroid) summed
 * over features in order with sqdist_exact's operations (padding adds exact
 * zeros), so the argmin is the CPU engine's bit for bit; l from the
 * runner-up: R_c >= (E_c - tiny) / (1 + g) >= E_c (1 - 2g) - tiny (YY:
 * every group's smallest, and the label group's next smallest).
 */
template <bool YY>
__global__ void __launch_bounds__(OR_THREADS)
label_fp64_kernel(HamArgs a, bool wide)
{
	__shared__ double xs[OR_F][OR_ROWS];
	__shared__ double cs[OR_F][OR_CENTS];
	__shared__ int32_t rows_s[OR_ROWS];
	const int	t = threadIdx.x, rg = t >> 4, cl = t & 15;
	const int	d = a.d, k = a.k;
	unsigned	moved = 0;
	const int64_t end = min(a.list1, (int64_t) *a.open_count);
	auto		lower = [&](double v, int) { return lower_dist(v, a.glo, a.tiny); };
	if (wide && end <= OW_MAX_ROWS)
		return;					/* label_fp64_wide_kernel's */
	for (int64_t g0 = a.list0 + (int64_t) blockIdx.x * OR_ROWS; g0 < end; g0 += (int64_t) gridDim.x * OR_ROWS)
	{
		load_listed_rows(rows_s, a, g0, end);
		double		bv[4], sv[4], sw[4];
		int			bi[4];
		reset_best(bv, sv, bi, dinf());
		for (double &v : sw)
			v = dinf();
		for (int c0 = 0; c0 < k; c0 += OR_CENTS)
		{
			double		acc[4][4];
			zero_tile(acc);
			for (int f0 = 0; f0 < d; f0 += OR_F)
			{
				fill_step<OR_THREADS, OR_ROWS, OR_CENTS>(xs, cs, rows_s, a, a.c64, c0, f0);
				__syncthreads();
#pragma unroll
				for (int ff = 0; ff < OR_F; ff++)
				{
					double		xv[4], cv[4];
#pragma unroll
					for (int q = 0; q < 4; q++)
					{
						xv[q] = xs[ff][rg * 4 + q];
						cv[q] = cs[ff][cl + 16 * q];
					}
#pragma unroll
					for (int p = 0; p < 4; p++)
#pragma unroll
						for (int q = 0; q < 4; q++)
						{
							const double u = __dsub_rn(xv[p], cv[q]);
							acc[p][q] = __dadd_rn(acc[p][q], __dmul_rn(u, u));
						}
				}
				__syncthreads();
			}
			fold_step<YY>(a, acc, bv, sv, bi, sw, c0, [&](int q) { return c0 + cl + 16 * q; },
						  [&](int p) { return rows_s[rg * 4 + p]; }, lower, dinf());
		}
		/* best (lowest index on ties) and runner-up over the 16 threads of each row */
#pragma unroll
		for (int p = 0; p < 4; p++)
		{
			double		b = bv[p], s = sv[p];
			int			bidx = bi[p];
			finish_best<YY>(b, s, bidx);
			const int	row = rows_s[rg * 4 + p];
			if (cl == 0 && row >= 0)
				write_label(a, row, bidx >= 0 ? bidx : 0, lower(YY ? sw[p] : s, p), moved);
		}
	}
	count_moves(a, moved, 0);
}

/*
 * The fp64 level of a short list (at most OW_MAX_ROWS rows: usually a few
 * dozen, where the tiled kernel above keeps one block busy for the whole
 * of k), a block per row: half warp h takes the steps (Yinyang groups) h,
 * h + 16, ..., thread t % 16 the positions t % 16 + 16 q of each, as there;
 * each (row, centroid) value is summed over features in order with the same
 * operations, so every value is bit for bit the tiled kernel's, and the
 * half warps' (smallest, index, next smallest; sw: the next smallest in the
 * best's group) are merged by one thread: the same minima and lowest
 * indices in any order, so the same labels and bounds.
 */
template <bool YY>
__global__ void __launch_bounds__(OW_THREADS)
label_fp64_wide_kernel(HamArgs a)
{
	__shared__ double xs[OW_DMAX];
	__shared__ double hb[OW_THREADS / 16], hs[OW_THREADS / 16], hsw[OW_THREADS / 16];
	__shared__ int hbi[OW_THREADS / 16];
	const int	t = threadIdx.x, half = t >> 4, cl = t & 15;
	const int	d = a.d, k = a.k;
	unsigned	moved = 0;
	const int64_t end = min(a.list1, (int64_t) *a.open_count);
	auto		lower = [&](double v, int) { return lower_dist(v, a.glo, a.tiny); };
	if (end > OW_MAX_ROWS)
		return;					/* label_fp64_kernel's */
	for (int64_t q0 = a.list0 + blockIdx.x; q0 < end; q0 += gridDim.x)
	{
		const int	row = a.open[q0];
		const size_t o = (size_t) row * d;
		__syncthreads();		/* xs and the merge slots are rewritten */
		for (int j = t; j < d; j += OW_THREADS)
			xs[j] = (double) stored_value(a.x + o, a.xlo ? a.xlo + o : nullptr, a.shift, j);
		__syncthreads();
		double		bv[1], sv[1], sw[1] = {dinf()};
		int			bi[1];
		reset_best(bv, sv, bi, dinf());
		/* the same trip count in every half warp: the folds shuffle across whole warps */
		for (int base = 0; base < k; base += (OW_THREADS / 16) * OR_CENTS)
		{
			const int	c0 = base + half * OR_CENTS;
			/* the four sums side by side (each in feature order): four loads in flight, not one */
			double		acc[1][4] = {{0, 0, 0, 0}};
			if (c0 < k)
			{
				const double *c[4];
#pragma unroll
				for (int q = 0; q < 4; q++)
				{
					const int	cn = c0 + cl + 16 * q;
					c[q] = a.c64 + (size_t) (cn < k ? centroid_at(a, cn) : 0) * d;	/* past k: read, never used */
				}
#pragma unroll 4
				for (int j = 0; j < d; j++)
				{
					const double xv = xs[j];
#pragma unroll
					for (int q = 0; q < 4; q++)
					{
						const double u = __dsub_rn(xv, c[q][j]);
						acc[0][q] = __dadd_rn(acc[0][q], __dmul_rn(u, u));
					}
				}
			}
			fold_step<YY>(a, acc, bv, sv, bi, sw, c0, [&](int q) { return c0 + cl + 16 * q; },
						  [&](int) { return c0 < k ? row : -1; }, lower, dinf());	/* no bound past the groups */
		}
		finish_best<YY>(bv[0], sv[0], bi[0]);
		if (cl == 0)
		{
			hb[half] = bv[0];
			hs[half] = sv[0];
			hsw[half] = sw[0];
			hbi[half] = bi[0];
		}
		__syncthreads();
		if (t == 0)
		{
			double		b = dinf(), s = dinf(), w = dinf();
			int			bidx = -1;
			for (int h = 0; h < OW_THREADS / 16; h++)
			{
				if (hbi[h] >= 0 && (bidx < 0 || hb[h] < b || (hb[h] == b && hbi[h] < bidx)))
					w = hsw[h];
				merge_best(b, s, bidx, hb[h], hs[h], hbi[h]);
			}
			write_label(a, row, bidx >= 0 ? bidx : 0, lower(YY ? w : s, 0), moved);
		}
	}
	count_moves(a, moved, 0);
}

/*
 * Level 1 over list positions [list0, list1) (blocks past the device's count
 * return at once; the centred level where cb is given and d <= OC_DMAX),
 * then, after the last part, level 2 over what it left. YY: Yinyang's.
 */
template <bool YY>
static void
launch_levels(Run &r, const HamArgs &h, const Bracket &br, const CentredBound *cb, bool last, cudaStream_t s)
{
	int			per_sm = 0;
	const bool	centred = cb != nullptr && h.d <= OC_DMAX;
	auto		grid = [&](int rows) {
		return (int) std::max<int64_t>(1, std::min<int64_t>((int64_t) std::max(1, per_sm) * r.limits.sms,
															(h.list1 - h.list0 + rows - 1) / rows));
	};
	if (centred)
	{
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_centred_kernel<YY, 8>, OF_THREADS, 0));
		label_centred_kernel<YY, 8><<<grid(OF_ROWS), OF_THREADS, 0, s>>>(h, *cb);
		CKLAUNCH("label_centred_kernel");
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_centred_kernel<YY, 4>, OF_THREADS, 0));
		label_centred_kernel<YY, 4><<<grid(OF_ROWS / 2), OF_THREADS, 0, s>>>(h, *cb);
		CKLAUNCH("label_centred_kernel");
		r.launches += 2;
	}
	else
	{
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_float_kernel<YY>, OF_THREADS, 0));
		label_float_kernel<YY><<<grid(OF_ROWS), OF_THREADS, 0, s>>>(h, br);
		CKLAUNCH("label_float_kernel");
		r.launches++;
	}
	if (!last)
		return;
	HamArgs		t = h;
	t.open = h.ties;
	t.open_count = h.open_count + 1;
	t.list0 = 0;
	t.list1 = h.n;
	/* the list's length stays on the device: each kernel returns at once where it is the other's */
	const bool	wide = h.d <= OW_DMAX;
	if (wide)
	{
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_fp64_wide_kernel<YY>, OW_THREADS, 0));
		label_fp64_wide_kernel<YY><<<std::max(1, per_sm) * r.limits.sms, OW_THREADS, 0, s>>>(t);
		CKLAUNCH("label_fp64_wide_kernel");
		r.launches++;
	}
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_fp64_kernel<YY>, OR_THREADS, 0));
	label_fp64_kernel<YY><<<std::max(1, per_sm) * r.limits.sms, OR_THREADS, 0, s>>>(t, wide);
	CKLAUNCH("label_fp64_kernel");
	r.launches++;
}

/* The levels of Hamerly's labelling, or of Yinyang's (h.t > 0). */
void
launch_label_listed(Run &r, const HamArgs &h, const Bracket &br, const CentredBound *cb, bool last, cudaStream_t s)
{
	if (h.t)
		launch_levels<true>(r, h, br, cb, last, s);
	else
		launch_levels<false>(r, h, br, cb, last, s);
}

}							/* namespace pgkm_cuda */
