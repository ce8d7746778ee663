/*
 * hamerly.cu: iterate() with Hamerly's bounds (plan.hamerly: resident rows,
 * d <= 1024), exact: every label is the fp64 argmin of sqdist_exact (lowest
 * index on exact ties), as run_pass's, so the run is Lloyd's. Per pass:
 *   1. per centroid j (centroid_geometry.cu): float(c_j) for step 3, and
 *      (not the first pass) by directed rounding its drift
 *      delta_j >= ||c_j - c'_j|| (c' the centroids the bounds refer to) and
 *      s_j <= min_{j' != j} ||c_j - c_j'|| / 2;
 *   2. a warp per 32 rows: each row's fp64 distance e to its label's centroid
 *      (any order), its lower bound l -= the largest drift of another
 *      centroid, and the row listed unless its label is proven (below);
 *   3. the listed rows labelled exactly against every centroid, with a new l
 *      (hamerly_label.cu: a float level, fp64 where it cannot decide);
 *   4. the sorted update over every row (sums, counts, exact distances), as
 *      the TILED and GEMM paths end (bounded_pass.cu).
 * With plan.yinyang, steps 2 and 3 keep a bound per group of centroids
 * instead of l (yinyang.cu).
 *
 * Why a skipped row keeps the exact label. w = 2^-53, g = gamma^w_{d+40}
 * (sqdist_exact and any-order sums of the d nonnegative terms err by at most
 * g relatively: d + 2 roundings per term, d/32 + 8 in any order). R_c is the
 * real ||x - c||^2, E_c sqdist_exact's value. With T = sqrt(e (1 + 5g))
 * rounded up: R_a <= e / (1 - g) <= T^2, so ||x - c_a|| <= T, and
 * E_a <= R_a (1 + g) <= T^2 (1 - g). Every other centroid c has ||x - c||
 * >= max(l, 2 s_a - T) =: L (l: below; 2 s_a - T by the triangle inequality
 * through c_a). L > T gives E_c >= R_c (1 - g) > T^2 (1 - g) >= E_a for every
 * c != a: a is the unique fp64 argmin. l is a lower bound on ||x - c|| over
 * c != a: set in step 3 (hamerly_label.cu says why it is one), lowered each
 * pass by the largest drift of another centroid, rounded down. Relative bounds fail where a
 * term underflows (each by at most 2^-1075): T^2 and l^2 are moved out by
 * tiny = (d + 2) 2^-1070 for that. The drifts and s are rounded
 * outwards operation by operation (__dsub_ru / _rd, ...), so they hold for
 * the real distances between the fp64 centroids. A non-finite value fails
 * every test: the row is listed.
 */
#include "device/bracket.cuh"
#include "device/row_filter.cuh"
#include "hamerly_args.h"
#include "launch.cuh"

#include <algorithm>
#include <cmath>

namespace pgkm_cuda
{

static constexpr int FL_THREADS = 256;
static constexpr int FL_WARPS = FL_THREADS / 32;

/* Step 2: a warp per 32 consecutive rows; the listed rows appended per warp. */
__global__ void __launch_bounds__(FL_THREADS)
filter_kernel(HamArgs a)
{
	__shared__ double top_s[2];
	__shared__ int arg_s;
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int	k = a.k;
	if (!a.first)
	{
		if (warp == 0)			/* the largest drift, its centroid, the second largest */
		{
			double		m1 = 0, m2 = 0;
			int			i1 = -1;
			for (int c = lane; c < k; c += 32)
			{
				const double v = a.geom[c];
				if (i1 < 0 || v > m1)
				{
					m2 = fmax(m2, m1);
					m1 = v;
					i1 = c;
				}
				else
					m2 = fmax(m2, v);
			}
			for (int off = 16; off > 0; off >>= 1)
			{
				const double o1 = __shfl_xor_sync(FULL, m1, off), o2 = __shfl_xor_sync(FULL, m2, off);
				const int	oi = __shfl_xor_sync(FULL, i1, off);
				if (oi >= 0 && (i1 < 0 || o1 > m1 || (o1 == m1 && oi < i1)))
				{
					m2 = fmax(o2, i1 < 0 ? 0.0 : m1);
					m1 = o1;
					i1 = oi;
				}
				else if (oi >= 0)
					m2 = fmax(m2, o1);
			}
			if (lane == 0)
			{
				top_s[0] = m1;
				top_s[1] = m2;
				arg_s = i1;
			}
		}
		__syncthreads();
	}
	for (int64_t base = ((int64_t) blockIdx.x * FL_WARPS + warp) * 32; base < a.n;
		 base += (int64_t) gridDim.x * FL_WARPS * 32)
	{
		const int64_t i = base + lane;
		bool		open = false;
		if (a.first)
			open = i < a.n;
		else
		{
			const int	my_l = i < a.n ? a.labels[i] : 0;
			const double t = warp_label_bound(a, base, my_l);
			if (i < a.n)
			{
				const double lo = __dsub_rd(a.lower[i], my_l == arg_s ? top_s[1] : top_s[0]);
				a.lower[i] = lo;
				const double via = __dsub_rd(__dmul_rd(2.0, a.geom[k + my_l]), t);
				open = !(fmax(lo, via) > t);
			}
		}
		append_open(a, open, i);
	}
}

/*
 * The centred level's margins (hamerly_args.h) from the uploaded centroids:
 * bias_c = float(fp64 sum of c'^2) >= (1 - gamma_d) ||c'||^2 (u = 2^-24),
 * so C^2 = max bias / (1 - gamma_d) bounds every ||c'||^2; gf = gamma_{d+2}
 * >= the form's gamma_{d+1}; 2^-100 covers its a_u = 4 (d + 1) 2^-149 and
 * the centroids' underflows. Host fp64 roundings are covered by the
 * 2^-40 factors.
 */
static CentredBound
centred_bound(const Run &r, const float *bias)
{
	const int	d = r.d;
	CentredBound cb {};
	cb.test = r.test;
	cb.mscale = r.plan.path == PATH_DOT ? 1.0f : -2.0f;	/* pass.cu: DOT keeps -2c' */
	double		mb = 0;
	for (int c = 0; c < r.k; c++)
		mb = std::isnan(bias[c]) ? INFINITY : std::max(mb, (double) bias[c]);
	const double gd = gamma_of(d, 0x1p-24), gf = gamma_of(d + 2, 0x1p-24), slack = 1 + 0x1p-40;
	const double cmax = std::sqrt((mb + 0x1p-120) / (1 - gd) * slack) * slack;
	cb.gf2 = gf * cmax * cmax * slack + 0x1p-100;
	cb.gfx = 2 * gf * cmax * slack;
	cb.inv_lo = 1 / (1 + gd) / slack;
	cb.inv_hi = 1 / (1 - gd) * slack;
	cb.ud = d * 0x1p-149;
	cb.ec = 0x1p-23 * cmax * slack + 0x1p-100;
	return cb;
}

/* One iteration's pass with the bounds; the results land where run_pass puts them. */
void
run_hamerly_pass(Run &r)
{
	Buffers    &B = r.buf;
	const int	d = r.d, k = r.k;
	const size_t kd = (size_t) k * d;
	cudaStream_t s = B.s_comp;
	begin_pass(r);
	CK(cudaMemsetAsync(B.d_open_count, 0, 4 * sizeof(unsigned int), s));	/* the lists' lengths, Yinyang's work */
	HamArgs		h = bounded_args(r);
	h.cf = B.d_cfh;
	h.lower = B.d_lower;
	h.open = B.d_open;
	h.open_count = B.d_open_count;
	h.ties = B.d_ties;
	if (r.plan.yinyang)
	{
		if (!r.groups_formed)
			form_yinyang_groups(r);
		h.t = yinyang_groups(k);
		h.glower = B.d_glower;
		h.perm = B.d_perm;
		h.pos = B.d_perm + k;
	}
	h.work = reinterpret_cast<unsigned long long *>(B.d_open_count + 2);
	r.launches += 1;
	launch_centroid_geometry(r, h, !h.first, s);	/* step 1 */
	const int	fgrid = (int) std::max<int64_t>(1, std::min<int64_t>((r.n + FL_THREADS - 1) / FL_THREADS,
																	 8LL * r.limits.sms));
	if (h.t)
	{
		launch_yinyang_filter(r, h, s);
		sort_listed_rows(r, h, s);
	}
	else
	{
		filter_kernel<<<fgrid, FL_THREADS, 0, s>>>(h);
		CKLAUNCH("filter_kernel");
	}
	r.launches++;
	/*
	 * Step 3 over the list's possible positions (its length stays on the
	 * device: blocks past it return at once), in launches of about 0.5 TFLOP
	 * of float work so that interrupts are seen.
	 */
	const Bracket br = make_bracket(d + 8, d, float_centroid_radius(r.cent.data(), k, d));
	h.cfc = B.d_cf;
	h.bias = B.d_bias;
	h.mu = B.d_mu;
	CentredBound cb {};
	const bool	centred = r.test.form == FORM_CENTRED;
	if (centred)
		cb = centred_bound(r, B.h_cstage + kd);
	const int64_t slice = std::max<int64_t>(8192, (int64_t) (5e11 / (2.0 * d * k)));
	run_row_slices(r, h, slice, [&](bool last) { launch_label_listed(r, h, br, centred ? &cb : nullptr, last, s); });
	/* step 4; the counts: listed, left to fp64, Yinyang's work */
	const unsigned int *counts = static_cast<const unsigned int *>(finish_bounded_pass(r));
	r.listed = counts[0];
	r.decided = counts[1];
	r.pruned_method = h.t ? PGKM_CUDA_METHOD_YINYANG : PGKM_CUDA_METHOD_HAMERLY;
	/*
	 * As the CPU's Hamerly counts: n own distances, and k - 1 more per listed
	 * row (its own is among the k); the fp64 level's second look at a row is
	 * not counted, as Lloyd's exact labels are not
	 */
	const unsigned long long work = *reinterpret_cast<const unsigned long long *>(counts + 2);
	if (h.t)					/* Yinyang: the float level's distances, as counted per computed group */
		r.distances = h.first ? (int64_t) work : r.n + (int64_t) work;
	else
		r.distances = h.first ? r.listed * k : r.n + r.listed * (k - 1);
}

}							/* namespace pgkm_cuda */
