/*
 * bounded_pass.cu: what the bounded passes (hamerly.cu, elkan.cu, sort.cu)
 * share around their labelling: the kernels' common arguments and margins,
 * and the pass's end, the sorted update over every row as the TILED and
 * GEMM paths end, with one host round trip.
 */
#include "device/bracket.cuh"
#include "hamerly_args.h"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

/*
 * The rows as kept, the centroids and labels, and the margins of the
 * proofs (hamerly.cu's header): g = gamma^w_{d+40} bounds the relative error
 * of sqdist_exact and of any-order fp64 sums of the d nonnegative terms.
 */
HamArgs
bounded_args(Run &r)
{
	Buffers    &B = r.buf;
	HamArgs		h {};
	h.x = B.d_x;
	h.xlo = B.d_xlo;
	h.shift = r.plan.path == PATH_GEMM ? B.d_mu : nullptr;
	h.n = r.n;
	h.d = r.d;
	h.k = r.k;
	h.c64 = B.d_c64;
	h.cprev = B.d_cprev;
	h.labels = B.d_labels;
	h.geom = B.d_geom;
	const double g = gamma_of(r.d + 40, 0x1p-53);
	h.gup = 1 + 5 * g;			/* >= (1 + g) / (1 - g)^2, its own rounding covered by the slack */
	h.glo = 1 - 2 * g;			/* <= 1 / (1 + g), likewise */
	h.tiny = (r.d + 2) * 0x1p-1070;	/* > d + 2 underflows of at most 2^-1075 each */
	h.first = r.bounds_valid ? 0 : 1;
	h.moved = B.d_acc + (size_t) r.k * r.d + r.k;
	return h;
}

/*
 * After the labels: the update over every row, chunk by chunk; the inertia
 * partials' sum; the centroids copied to those the bounds refer to (where
 * kept); the sums and the method's 16 bytes of counts (d_open_count) read
 * back: returned, in pinned host memory.
 */
const void *
finish_bounded_pass(Run &r)
{
	Buffers    &B = r.buf;
	const size_t kd = (size_t) r.k * r.d, nacc = kd + r.k;
	cudaStream_t s = B.s_comp;
	const int64_t slots_per_chunk = r.plan.nslots / r.plan.nchunks;
	for (int64_t c = 0; c < r.plan.nchunks; c++)
	{
		const int64_t r0 = c * r.plan.chunk_rows;
		PassArgs	a = chunk_pass_args(r, r0, std::min(r.plan.chunk_rows, r.n - r0));
		a.x = B.d_x + r0 * r.d;
		if (r.plan.path == PATH_GEMM)
			a.shift = B.d_mu;
		if (B.d_xlo)
			a.xlo = B.d_xlo + r0 * r.d;
		launch_sorted_update(r, a, c * slots_per_chunk, s);
	}
	launch_reduce_partials(B.d_partials, r.plan.nslots, reinterpret_cast<double *>(B.d_acc + nacc + 1), s);
	if (B.d_cprev)
		CK(cudaMemcpyAsync(B.d_cprev, B.d_c64, kd * sizeof(double), cudaMemcpyDeviceToDevice, s));
	CK(cudaMemcpyAsync(B.h_acc, B.d_acc, (nacc + 3) * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
	unsigned long long *h_counts = B.h_acc + nacc + 3;
	CK(cudaMemcpyAsync(h_counts, B.d_open_count, 16, cudaMemcpyDeviceToHost, s));
	r.launches += 4;
	CK(cudaStreamSynchronize(s));
	CK(cudaGetLastError());
	r.pruned = true;
	r.bounds_valid = true;
	return h_counts;
}

int64_t
bounded_row_slice(const Run &r)
{
	return std::max<int64_t>(8192, (int64_t) (2.5e11 / (3.0 * r.d * r.k)));
}

void
run_row_slices(Run &r, HamArgs &h, int64_t slice, const std::function<void(bool last)> &launch)
{
	for (int64_t s0 = 0; s0 < r.n; s0 += slice)
	{
		h.list0 = s0;
		h.list1 = std::min(r.n, s0 + slice);
		launch(h.list1 == r.n);
		if (h.list1 < r.n)
		{
			CK(cudaStreamSynchronize(r.buf.s_comp));
			check_interrupt(r);
		}
	}
}

/* finish_bounded_pass for a method whose kernels count their distances in d_open_count's first 8 bytes. */
void
finish_counted_pass(Run &r, int32_t method)
{
	const unsigned long long *counts = static_cast<const unsigned long long *>(finish_bounded_pass(r));
	r.distances = (int64_t) counts[0];
	r.listed = 0;
	r.decided = 0;
	r.pruned_method = method;
}

}							/* namespace pgkm_cuda */
