/*
 * hamerly_label.cu: the rows a Hamerly pass listed (hamerly.cu), labelled
 * exactly, against every centroid, with their new lower bound l:
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
 *      non-finite values) in fp64, sqdist_exact's own order.
 * Labels, moves and bounds are per row; no order matters.
 */
#include "device/bounded_row.cuh"
#include "device/bracket.cuh"
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
static constexpr int OR_THREADS = 256;
static constexpr int OR_ROWS = 64;		/* rows per block: 16 groups of 4 */
static constexpr int OR_CENTS = 64;		/* centroids per step: 16 lanes x 4 */
static constexpr int OR_F = 16;			/* features per step */

/* Of two (smallest, its index, next smallest) triples, the union's (lowest index on ties); b infinite where bi < 0. */
template <typename T>
__device__ __forceinline__ void
merge_best(T &b, T &s, int &bi, T ob, T os, int oi)
{
	if (oi >= 0 && (bi < 0 || ob < b || (ob == b && oi < bi)))
	{
		s = os < b ? os : b;	/* b is infinite while bi < 0 */
		b = ob;
		bi = oi;
	}
	else if (oi >= 0)
		s = ob < s ? ob : s;
}

/* The same over the 16 lanes of a half warp (every lane gets it). */
template <typename T>
__device__ __forceinline__ void
reduce_best16(T &b, T &s, int &bi)
{
	for (int off = 8; off > 0; off >>= 1)
	{
		const T		ob = __shfl_xor_sync(FULL, b, off), os = __shfl_xor_sync(FULL, s, off);
		const int	oi = __shfl_xor_sync(FULL, bi, off);
		merge_best(b, s, bi, ob, os, oi);
	}
}

/*
 * A thread's P rows x Q centroids of one step into its rows' (smallest, its
 * index, next smallest); centroid(q) increases with q, and steps come in
 * increasing index, so strict < keeps the lowest index on ties.
 */
template <typename T, int P, int Q, typename Centroid>
__device__ __forceinline__ void
fold_best(const T (&acc)[P][Q], T (&b)[P], T (&s)[P], int (&bi)[P], int k, Centroid centroid)
{
#pragma unroll
	for (int q = 0; q < Q; q++)
	{
		const int	c = centroid(q);
		if (c < k)
#pragma unroll
			for (int p = 0; p < P; p++)
			{
				const T		v = acc[p][q];
				if (bi[p] < 0 || v < b[p])
				{
					s[p] = b[p];
					b[p] = v;
					bi[p] = c;
				}
				else
					s[p] = v < s[p] ? v : s[p];
			}
	}
}

/* The block's list positions g0 .. + ROWS - 1 into rows_s (-1 past end); every thread of the block calls it. */
template <int ROWS>
__device__ __forceinline__ void
load_listed_rows(int32_t (&rows_s)[ROWS], const HamArgs &a, int64_t g0, int64_t end)
{
	const int	t = threadIdx.x;
	__syncthreads();			/* rows_s is rewritten */
	if (t < ROWS)
		rows_s[t] = g0 + t < end ? a.open[g0 + t] : -1;
	__syncthreads();
}

/* A thread's P rows' (smallest, its index, next smallest) before any centroid. */
template <typename T, int P>
__device__ __forceinline__ void
reset_best(T (&b)[P], T (&s)[P], int (&bi)[P], T inf)
{
#pragma unroll
	for (int p = 0; p < P; p++)
	{
		b[p] = s[p] = inf;
		bi[p] = -1;
	}
}

template <typename T, int P, int Q>
__device__ __forceinline__ void
zero_tile(T (&acc)[P][Q])
{
#pragma unroll
	for (int p = 0; p < P; p++)
#pragma unroll
		for (int q = 0; q < Q; q++)
			acc[p][q] = 0;
}

/* A float level's verdict on a row: its label and l where proven, else the row listed for the fp64 level. */
__device__ __forceinline__ void
settle_row(const HamArgs &a, int row, bool proven, int bi, double low, unsigned &moved)
{
	if (proven)
	{
		moved += a.labels[row] != bi;
		a.labels[row] = bi;
		a.lower[row] = low;
	}
	else
		a.ties[atomicAdd(a.open_count + 1, 1u)] = row;
}

/*
 * One step's operands into shared memory: features f0 .. + F - 1 of the
 * block's rows (rows_s, -1: none) as stored, and of centroids c0 .. + C - 1
 * from c (k x d, float(c) or c); 0 past d, k or the list, which adds exact
 * zeros to the sums.
 */
template <int THREADS, int ROWS, int CENTS, typename T, int F, int R, int C, typename CT>
__device__ __forceinline__ void
fill_step(T (&xs)[F][R], T (&cs)[F][C], const int32_t *rows_s, const HamArgs &a, const CT *c, int c0, int f0)
{
	static_assert(ROWS <= R && CENTS <= C, "the shared arrays hold a step");
	const int	d = a.d;
	for (int q = threadIdx.x; q < ROWS * F; q += THREADS)
	{
		const int	rr = q / F, ff = q % F, j = f0 + ff;
		const int	row = rows_s[rr];
		T			v = 0;
		if (row >= 0 && j < d)
		{
			const size_t o = (size_t) row * d;
			v = (T) stored_value(a.x + o, a.xlo ? a.xlo + o : nullptr, a.shift, j);
		}
		xs[ff][rr] = v;
	}
	for (int q = threadIdx.x; q < CENTS * F; q += THREADS)
	{
		const int	cc = q / F, ff = q % F, j = f0 + ff, cn = c0 + cc;
		cs[ff][cc] = cn < a.k && j < d ? (T) c[(size_t) cn * d + j] : (T) 0;
	}
}

/*
 * Level 1: list positions [list0, min(list1, count)). Thread t: rows
 * 8 (t / 16) .. + 7 of the block's, centroids 4 (t % 16) .. + 3 of each
 * step of 64 (increasing index: strict < keeps the lowest on ties).
 */
__global__ void __launch_bounds__(OF_THREADS)
label_float_kernel(HamArgs a, Bracket br)
{
	__shared__ __align__(16) float xs[OF_F][OF_ROWS + OF_PAD];
	__shared__ __align__(16) float cs[OF_F][OF_CENTS + OF_PAD];
	__shared__ int32_t rows_s[OF_ROWS];
	const int	t = threadIdx.x, rg = t >> 4, cl = t & 15;
	const int	d = a.d, k = a.k;
	unsigned	moved = 0;
	const int64_t end = min(a.list1, (int64_t) *a.open_count);
	for (int64_t g0 = a.list0 + (int64_t) blockIdx.x * OF_ROWS; g0 < end; g0 += (int64_t) gridDim.x * OF_ROWS)
	{
		load_listed_rows(rows_s, a, g0, end);
		float		e1[8], e2[8];
		int			i1[8];
		reset_best(e1, e2, i1, __int_as_float(0x7f800000));
		for (int c0 = 0; c0 < k; c0 += OF_CENTS)
		{
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
			fold_best(acc, e1, e2, i1, k, [&](int q) { return c0 + cl * 4 + q; });
		}
#pragma unroll
		for (int p = 0; p < 8; p++)
		{
			float		b = e1[p], s = e2[p];
			int			bi = i1[p];
			reduce_best16(b, s, bi);
			const int	row = rows_s[rg * 8 + p];
			if (cl == 0 && row >= 0)
			{
				double		low = dinf();	/* k = 1: no other centroid */
				bool		proven = bi >= 0;
				if (k > 1)
				{
					low = bracket_lo(br, s);
					proven = proven && low > bracket_hi(br, b) * br.band;
				}
				settle_row(a, row, proven, bi, low, moved);
			}
		}
	}
	if (moved)
		atomicAdd(a.moved, (unsigned long long) moved);
}

/*
 * A lower bound on ||x - c|| for every centroid c whose centred value V_c is
 * at least v2 (exact_bounds.h point 6): ||x' - c'||^2 = X^2 + ||c'||^2 -
 * 2 x'.c' >= X2lo + v2 - Eg (|V_c - (||c'||^2 - 2 x'.c')| <= gamma_{d+1}
 * (||c'||^2 + 2 X ||c'||) + a_u <= Eg, label_bound.cpp), X2lo <= X^2 from the
 * float sum x2 (d roundings: gamma_d X^2 + d 2^-149), then the triangle
 * inequality from (x', c') to (x - mu, c - mu): ||x' - (x - mu)|| <= u / (1 - u) X
 * (one float rounding per feature), ||c' - (c - mu)|| < 2^-23 C (fp64 then float
 * rounding; ec). Every operation rounds outwards; NaN gives -inf.
 */
__device__ __forceinline__ double
centred_lower(const CentredBound &cb, float v2, float x2)
{
	const double x2hi = __dmul_ru(__dadd_ru((double) x2, cb.ud), cb.inv_hi);
	const double x2lo = fmax(__dmul_rd(__dsub_rd((double) x2, cb.ud), cb.inv_lo), 0.0);
	const double xn = __dsqrt_ru(x2hi);
	const double eg = __dadd_ru(cb.gf2, __dmul_ru(cb.gfx, xn));
	const double d2 = __dadd_rd(__dsub_rd((double) v2, eg), x2lo);
	const double e = __dadd_ru(__dmul_ru(0x1p-23, xn), cb.ec);
	const double lo = __dsub_rd(__dsqrt_rd(fmax(d2, 0.0)), e);
	return lo == lo ? lo : -dinf();
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
__global__ void __launch_bounds__(OF_THREADS)
label_centred_kernel(HamArgs a, CentredBound cb)
{
	__shared__ __align__(16) float xs[OC_DMAX][OF_ROWS + OF_PAD];
	__shared__ __align__(16) float cs[OF_F][OF_CENTS + OF_PAD];
	__shared__ float bs[OF_CENTS];
	__shared__ float x2s[OF_ROWS];
	__shared__ int32_t rows_s[OF_ROWS];
	const int	t = threadIdx.x, rg = t >> 4, cl = t & 15;
	const int	d = a.d, k = a.k, dp = (d + OF_F - 1) / OF_F * OF_F;
	unsigned	moved = 0;
	const int64_t end = min(a.list1, (int64_t) *a.open_count);
	for (int64_t g0 = a.list0 + (int64_t) blockIdx.x * OF_ROWS; g0 < end; g0 += (int64_t) gridDim.x * OF_ROWS)
	{
		load_listed_rows(rows_s, a, g0, end);	/* and xs, x2s are rewritten */
		for (int q = t; q < OF_ROWS * dp; q += OF_THREADS)
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
		if (t < OF_ROWS)
		{
			float		x2 = 0;
			for (int j = 0; j < d; j++)
				x2 = fmaf(xs[j][t], xs[j][t], x2);
			x2s[t] = x2;
		}
		float		e1[8], e2[8];
		int			i1[8];
		reset_best(e1, e2, i1, __int_as_float(0x7f800000));
		for (int c0 = 0; c0 < k; c0 += OF_CENTS)
		{
			float		acc[8][4];
			zero_tile(acc);
			for (int f0 = 0; f0 < dp; f0 += OF_F)
			{
				__syncthreads();	/* the last step is done with cs, bs */
				for (int q = t; q < OF_CENTS * OF_F; q += OF_THREADS)
				{
					const int	cc = q / OF_F, ff = q % OF_F, j = f0 + ff, cn = c0 + cc;
					cs[ff][cc] = cn < k && j < d ? a.cfc[(size_t) cn * d + j] : 0.0f;
				}
				if (f0 == 0 && t < OF_CENTS)
					bs[t] = c0 + t < k ? a.bias[c0 + t] : __int_as_float(0x7f800000);
				__syncthreads();
#pragma unroll
				for (int ff = 0; ff < OF_F; ff++)
				{
					const float4 xa = *reinterpret_cast<const float4 *>(&xs[f0 + ff][rg * 8]);
					const float4 xb = *reinterpret_cast<const float4 *>(&xs[f0 + ff][rg * 8 + 4]);
					const float4 cv = *reinterpret_cast<const float4 *>(&cs[ff][cl * 4]);
					const float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
					const float cw[4] = {cv.x, cv.y, cv.z, cv.w};
#pragma unroll
					for (int p = 0; p < 8; p++)
#pragma unroll
						for (int q = 0; q < 4; q++)
							acc[p][q] = __fmaf_rn(xv[p], cw[q], acc[p][q]);
				}
			}
#pragma unroll
			for (int p = 0; p < 8; p++)
#pragma unroll
				for (int q = 0; q < 4; q++)
					acc[p][q] = __fmaf_rn(cb.mscale, acc[p][q], bs[cl * 4 + q]);
			fold_best(acc, e1, e2, i1, k, [&](int q) { return c0 + cl * 4 + q; });
		}
#pragma unroll
		for (int p = 0; p < 8; p++)
		{
			float		b = e1[p], s = e2[p];
			int			bi = i1[p];
			reduce_best16(b, s, bi);
			const int	row = rows_s[rg * 8 + p];
			if (cl == 0 && row >= 0)
			{
				double		low = dinf();	/* k = 1: no other centroid */
				bool		proven = bi >= 0;
				if (k > 1)
				{
					const float x2 = x2s[rg * 8 + p];
					proven = proven && s <= FLT_MAX && (double) s > label_limit(cb.test, b, x2);
					low = centred_lower(cb, s, x2);
				}
				settle_row(a, row, proven, bi, low, moved);
			}
		}
	}
	if (moved)
		atomicAdd(a.moved, (unsigned long long) moved);
}

/*
 * The fp64 level: list positions [list0, min(list1, count)), 64 rows per
 * block and round. Thread t: rows 4 (t / 16) .. + 3 of the block's,
 * centroids t % 16 + 16 q of each step of 64; each (row, centroid) summed
 * over features in order with sqdist_exact's operations (padding adds exact
 * zeros), so the argmin is the CPU engine's bit for bit; l from the
 * runner-up: R_c >= (E_c - tiny) / (1 + g) >= E_c (1 - 2g) - tiny.
 */
__global__ void __launch_bounds__(OR_THREADS)
label_fp64_kernel(HamArgs a)
{
	__shared__ double xs[OR_F][OR_ROWS];
	__shared__ double cs[OR_F][OR_CENTS];
	__shared__ int32_t rows_s[OR_ROWS];
	const int	t = threadIdx.x, rg = t >> 4, cl = t & 15;
	const int	d = a.d, k = a.k;
	unsigned	moved = 0;
	const int64_t end = min(a.list1, (int64_t) *a.open_count);
	for (int64_t g0 = a.list0 + (int64_t) blockIdx.x * OR_ROWS; g0 < end; g0 += (int64_t) gridDim.x * OR_ROWS)
	{
		load_listed_rows(rows_s, a, g0, end);
		double		bv[4], sv[4];
		int			bi[4];
		reset_best(bv, sv, bi, dinf());
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
			fold_best(acc, bv, sv, bi, k, [&](int q) { return c0 + cl + 16 * q; });
		}
		/* best (lowest index on ties) and runner-up over the 16 threads of each row */
#pragma unroll
		for (int p = 0; p < 4; p++)
		{
			double		b = bv[p], s = sv[p];
			int			bidx = bi[p];
			reduce_best16(b, s, bidx);
			const int	row = rows_s[rg * 4 + p];
			if (cl == 0 && row >= 0)
			{
				const int	lbl = bidx >= 0 ? bidx : 0;
				moved += a.labels[row] != lbl;
				a.labels[row] = lbl;
				a.lower[row] = lower_dist(s, a.glo, a.tiny);
			}
		}
	}
	if (moved)
		atomicAdd(a.moved, (unsigned long long) moved);
}

/*
 * Level 1 over list positions [list0, list1) (blocks past the device's count
 * return at once; the centred level where cb is given and d <= OC_DMAX),
 * then, after the last part, level 2 over what it left.
 */
void
launch_label_listed(Run &r, const HamArgs &h, const Bracket &br, const CentredBound *cb, bool last, cudaStream_t s)
{
	int			per_sm = 0;
	const bool	centred = cb != nullptr && h.d <= OC_DMAX;
	if (centred)
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_centred_kernel, OF_THREADS, 0));
	else
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_float_kernel, OF_THREADS, 0));
	const int64_t grid = std::max<int64_t>(1, std::min<int64_t>((int64_t) std::max(1, per_sm) * r.limits.sms,
																(h.list1 - h.list0 + OF_ROWS - 1) / OF_ROWS));
	if (centred)
	{
		label_centred_kernel<<<(int) grid, OF_THREADS, 0, s>>>(h, *cb);
		CKLAUNCH("label_centred_kernel");
	}
	else
	{
		label_float_kernel<<<(int) grid, OF_THREADS, 0, s>>>(h, br);
		CKLAUNCH("label_float_kernel");
	}
	r.launches++;
	if (!last)
		return;
	HamArgs		t = h;
	t.open = h.ties;
	t.open_count = h.open_count + 1;
	t.list0 = 0;
	t.list1 = h.n;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, label_fp64_kernel, OR_THREADS, 0));
	label_fp64_kernel<<<std::max(1, per_sm) * r.limits.sms, OR_THREADS, 0, s>>>(t);
	CKLAUNCH("label_fp64_kernel");
	r.launches++;
}

}							/* namespace pgkm_cuda */
