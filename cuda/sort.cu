/*
 * sort.cu: iterate() with Wu & Hong's ranked centroids (compare/sort-means;
 * plan.sort: resident rows, d <= 1024, k^2 <= SORT_MAX_PAIRS), exact: every
 * label is the fp64 argmin of sqdist_exact (lowest index on exact ties), as
 * run_pass's, so the run is Lloyd's. No bounds are carried. Per pass:
 *   1. D(a, j) <= ||c_a - c_j|| for every pair (centroid_geometry.cu, float
 *      rounded down), each row a of D sorted ascending with its centroid
 *      numbers (CUB's segmented sort, the double-buffered form);
 *   2. a warp per row: its sqdist_exact e to its label's centroid a (every
 *      lane, the same value; a = 0 on a pass after which the labels were not
 *      this method's), T_a = upper_dist(e); then a's ranked list 32 entries
 *      at a time: each entry whose D is not above lim = T_a + T_b (T_b =
 *      upper_dist of the best sqdist_exact so far, rounded up) is computed
 *      by its lane in sqdist_exact's order, the best folded over the warp
 *      (lowest E, then lowest index) and lim tightened; the walk stops at the
 *      first batch with an entry above lim;
 *   3. the sorted update (bounded_pass.cu).
 * Why the label is exact: an entry c not computed has D(a, c) >= the first
 * entry above lim (the list ascends) > T_a + T_b, so ||x - c|| >= D(a, c) -
 * ||x - c_a|| > T_b, and its E_c is above the best E of that time (hamerly.cu's
 * header with T_b), which is at least the final best: the argmin is among
 * the computed, whose E are sqdist_exact's.
 * Distances counted as the CPU's sort counts them: per row its own and each
 * entry computed.
 */
#include "device/bounded_row.cuh"
#include "device/exact_label.cuh"
#include "hamerly_args.h"
#include "launch.cuh"

#include <cub/device/device_segmented_sort.cuh>

#include <vector>

namespace pgkm_cuda
{

static constexpr int SK_THREADS = 256;
static constexpr int SK_WARPS = SK_THREADS / 32;

/* Rows [list0, list1), a warp per row. */
__global__ void __launch_bounds__(SK_THREADS)
sort_kernel(HamArgs a)
{
	const int	lane = threadIdx.x & 31;
	const int	d = a.d, k = a.k;
	label_rows<SK_WARPS>(a, [&](int64_t i, unsigned long long &computed) {
		const size_t o = (size_t) i * d;
		const float *x = a.x + o, *xlo = a.xlo ? a.xlo + o : nullptr;
		const int	la = a.first ? 0 : a.labels[i];
		const double e = exact_dist2_stored(x, xlo, a.shift, a.c64 + (size_t) la * d, d);
		const double ta = upper_dist(e, a.gup, a.tiny);
		double		best = dinf();
		int			bi = -1;
		fold_exact(best, bi, e, la);
		computed += lane == 0;
		double		lim = __dadd_ru(ta, ta);
		const float *key = a.rank_key + (size_t) la * k;
		const int32_t *idx = a.rank_idx + (size_t) la * k;
		for (int r0 = 0; r0 < k; r0 += 32)
		{
			const int	r = r0 + lane;
			const bool	in = r < k && !((double) key[r] > lim);
			const int	j = r < k ? idx[r] : -1;
			if (in && j != la)
			{
				const double ej = exact_dist2_stored(x, xlo, a.shift, a.c64 + (size_t) j * d, d);
				computed++;
				fold_exact(best, bi, ej, j);
			}
			const unsigned all = __ballot_sync(FULL, in);
			warp_fold_exact(best, bi);
			lim = __dadd_ru(ta, upper_dist(best, a.gup, a.tiny));
			if (all != FULL)
				break;
		}
		return bi;
	});
}

void
allocate_sort_buffers(Run &r)
{
	Buffers    &B = r.buf;
	const size_t kk = (size_t) r.k * r.k;
	B.d_open_count = static_cast<unsigned int *>(B.alloc(16));
	B.d_pairs = static_cast<float *>(B.alloc(kk * 4));
	B.d_keys2 = static_cast<float *>(B.alloc(kk * 4));
	B.d_pair_idx = static_cast<int32_t *>(B.alloc(kk * 4));
	B.d_idx2 = static_cast<int32_t *>(B.alloc(kk * 4));
	B.d_offsets = static_cast<int32_t *>(B.alloc(((size_t) r.k + 1) * 4));
	std::vector<int32_t> off((size_t) r.k + 1);
	for (int a = 0; a <= r.k; a++)
		off[a] = (int32_t) ((int64_t) a * r.k);
	CK(cudaMemcpy(B.d_offsets, off.data(), off.size() * 4, cudaMemcpyHostToDevice));
	cub::DoubleBuffer<float> keys(B.d_pairs, B.d_keys2);
	cub::DoubleBuffer<int32_t> vals(B.d_pair_idx, B.d_idx2);
	size_t		bytes = 0;
	CK(cub::DeviceSegmentedSort::SortPairs(nullptr, bytes, keys, vals, (int64_t) kk, r.k, B.d_offsets,
										   B.d_offsets + 1, B.s_comp));
	if ((int64_t) bytes > sort_scratch_bytes(r.k))
		fail(PGKM_ERR_INTERNAL, "segmented sort scratch of %zu bytes above the plan's %lld", bytes,
			 (long long) sort_scratch_bytes(r.k));
	B.sort_temp_bytes = bytes;
	B.d_sort_temp = B.alloc(bytes);
}

/* One iteration's pass with the ranked centroids; the results land where run_pass puts them. */
void
run_sort_pass(Run &r)
{
	Buffers    &B = r.buf;
	cudaStream_t s = B.s_comp;
	begin_pass(r);
	CK(cudaMemsetAsync(B.d_open_count, 0, 16, s));
	r.launches++;
	HamArgs		h = bounded_args(r);
	h.pairs = B.d_pairs;
	h.pair_idx = B.d_pair_idx;
	h.computed = reinterpret_cast<unsigned long long *>(B.d_open_count);
	launch_centroid_geometry(r, h, false, s);
	cub::DoubleBuffer<float> keys(B.d_pairs, B.d_keys2);
	cub::DoubleBuffer<int32_t> vals(B.d_pair_idx, B.d_idx2);
	size_t		bytes = B.sort_temp_bytes;
	CK(cub::DeviceSegmentedSort::SortPairs(B.d_sort_temp, bytes, keys, vals, (int64_t) r.k * r.k, r.k,
										   B.d_offsets, B.d_offsets + 1, s));
	r.launches++;
	h.rank_key = keys.Current();
	h.rank_idx = vals.Current();
	run_row_slices(r, h, bounded_row_slice(r), [&](bool) {
		sort_kernel<<<16 * r.limits.sms, SK_THREADS, 0, s>>>(h);
		CKLAUNCH("sort_kernel");
		r.launches++;
	});
	finish_counted_pass(r, PGKM_CUDA_METHOD_SORT);
}

}							/* namespace pgkm_cuda */
