/*
 * elkan.cu: iterate() with Elkan's bounds (plan.elkan: resident rows,
 * d <= 1024), exact: every label is the fp64 argmin of sqdist_exact (lowest
 * index on exact ties), as run_pass's, so the run is Lloyd's. Per row and
 * centroid j a lower bound l_j <= ||x - c_j|| (n x k floats, rounded down),
 * kept against the centroids of the last pass (cprev). Per pass:
 *   1. per centroid (centroid_geometry.cu): its drift delta_j since cprev,
 *      and D(a, j) <= ||c_a - c_j|| for every pair (float, rounded down);
 *   2. a warp per row, lanes over centroids: the row's sqdist_exact e to its
 *      label's centroid a (by every lane, the same value) and T = upper_dist(e);
 *      per j != a, l_j -= delta_j (rounded down), and j is a candidate unless
 *      max(l_j, D(a, j) - T) > T; each candidate's sqdist_exact E_j (one lane,
 *      sqdist_exact's own order, so the CPU's bits) and l_j = lower_dist(E_j);
 *      l_a = lower_dist(e); the label: the lowest E over a and the candidates,
 *      the lowest index on ties. The first pass (no bounds) computes every j;
 *   3. the sorted update (bounded_pass.cu).
 * Why the label is exact: a centroid c that is not a candidate has
 * ||x - c|| >= max(l_c, D(a, c) - ||x - c_a||) > T (l_c is a lower bound:
 * set from E_c, lowered by every drift since; D(a, c) - T by the triangle
 * inequality through c_a), so E_c > E_a (hamerly.cu's header, the same T):
 * the argmin is among a and the candidates, whose E are sqdist_exact's.
 * Distances counted as the CPU's Elkan counts them: per row its own and
 * each candidate (k on the first pass).
 */
#include "device/bounded_row.cuh"
#include "device/exact_label.cuh"
#include "hamerly_args.h"
#include "launch.cuh"

namespace pgkm_cuda
{

static constexpr int EK_THREADS = 256;
static constexpr int EK_WARPS = EK_THREADS / 32;

/* Rows [list0, list1), a warp per row. */
__global__ void __launch_bounds__(EK_THREADS)
elkan_kernel(HamArgs a)
{
	const int	lane = threadIdx.x & 31;
	const int	d = a.d, k = a.k;
	label_rows<EK_WARPS>(a, [&](int64_t i, unsigned long long &computed) {
		const size_t o = (size_t) i * d;
		const float *x = a.x + o, *xlo = a.xlo ? a.xlo + o : nullptr;
		float	   *lb = a.lbound + (size_t) i * k;
		double		best = dinf(), e = 0, t = 0;
		int			bi = -1, la = -1;
		if (!a.first)
		{
			la = a.labels[i];
			e = exact_dist2_stored(x, xlo, a.shift, a.c64 + (size_t) la * d, d);
			t = upper_dist(e, a.gup, a.tiny);
			fold_exact(best, bi, e, la);
			computed += lane == 0;
		}
		const float *pa = a.pairs + (size_t) (la < 0 ? 0 : la) * k;
		for (int j = lane; j < k; j += 32)
		{
			double		lo = 0;
			bool		cand = a.first;
			if (j == la)
				lo = lower_dist(e, a.glo, a.tiny);
			else if (!a.first)
			{
				lo = __dsub_rd((double) lb[j], a.geom[j]);
				cand = !(fmax(lo, __dsub_rd((double) pa[j], t)) > t);
			}
			if (cand)
			{
				const double ej = exact_dist2_stored(x, xlo, a.shift, a.c64 + (size_t) j * d, d);
				computed++;
				lo = lower_dist(ej, a.glo, a.tiny);
				fold_exact(best, bi, ej, j);
			}
			lb[j] = __double2float_rd(lo);
		}
		warp_fold_exact(best, bi);
		return bi;
	});
}

/* One iteration's pass with Elkan's bounds; the results land where run_pass puts them. */
void
run_elkan_pass(Run &r)
{
	Buffers    &B = r.buf;
	cudaStream_t s = B.s_comp;
	begin_pass(r);
	CK(cudaMemsetAsync(B.d_open_count, 0, 16, s));
	r.launches++;
	HamArgs		h = bounded_args(r);
	h.lbound = B.d_lbound;
	h.pairs = h.first ? nullptr : B.d_pairs;	/* the first pass needs no geometry */
	h.computed = reinterpret_cast<unsigned long long *>(B.d_open_count);
	launch_centroid_geometry(r, h, !h.first, s);
	h.pairs = B.d_pairs;
	run_row_slices(r, h, bounded_row_slice(r), [&](bool) {
		elkan_kernel<<<16 * r.limits.sms, EK_THREADS, 0, s>>>(h);
		CKLAUNCH("elkan_kernel");
		r.launches++;
	});
	finish_counted_pass(r, PGKM_CUDA_METHOD_ELKAN);
}

}							/* namespace pgkm_cuda */
