/*
 * data.cu: a run's view of the caller's rows, set up once at create: the
 * centring point, the rows on the device (resident: copied, scanned, shifted
 * exactly, the GEMM path's row norms, split for 3xTF32; streamed: scanned
 * chunk by chunk), the fixed-point scale of the sums, and the state before
 * the first pass. Whatever the device keeps, the stored rows can be read
 * back exactly from it: the fp64 label decisions need them.
 */
#include "centroid_sums.h"	/* fixed_point_scale: the CPU engine's scales */
#include "chunks.cuh"
#include "launch.cuh"
#include "run.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace pgkm_cuda
{

/* Mean of up to 65536 evenly spaced rows (fp64 on the host), kept as fp32 values. */
static void
centring_point(Run &r)
{
	const int64_t n = r.n;
	const int	d = r.d;
	r.mu.assign(d, 0.0);
	int64_t		ns = std::min<int64_t>(n, 65536);
	for (int64_t i = 0; i < ns; i++)
	{
		const float *row = r.x + (i * n / ns) * d;
		for (int j = 0; j < d; j++)
			r.mu[j] += row[j];
	}
	r.muf.assign(d, 0.0f);
	for (int j = 0; j < d; j++)
	{
		r.mu[j] /= (double) ns;
		r.muf[j] = (float) r.mu[j];
		r.mu[j] = r.muf[j];		/* the kernels centre by the fp32 value */
	}
	/* on the compute stream, which orders it before the kernels that read it (staged: muf may change after) */
	CK(cudaMemcpyAsync(r.buf.d_mu, r.muf.data(), (size_t) d * 4, cudaMemcpyHostToDevice, r.buf.s_comp));
}

/*
 * Fixed point: value x of column j counts as llrint(x * scale_j), the CPU
 * engine's scale (fixed_point_scale, centroid_sums.h) from n and the
 * column's max|x|: every sum of at most n of them (a cluster's sum, a block's
 * private partial, a warp group's partial) stays below 2^61, and the sums are
 * the CPU device's bits. Fast mode (fp64 atomics) has no such step but
 * order-dependent last bits. An infinite value fails the run here (its
 * column's maximum; one pass over the rows finds both).
 */
static void
fixed_point_scales(Run &r)
{
	std::vector<unsigned int> top(r.d);
	CK(cudaMemcpy(top.data(), r.buf.d_colmax, (size_t) r.d * 4, cudaMemcpyDeviceToHost));
	r.qscale.resize(r.d);
	for (int j = 0; j < r.d; j++)
	{
		float		m;
		memcpy(&m, &top[j], 4);
		if (!std::isfinite(m))	/* fmaxf passes NaN over; the engine rejects NaN before create */
			fail(PGKM_ERR_INVALID, "data contains NaN or infinity");
		r.qscale[j] = pgkm::fixed_point_scale(r.n, m);
	}
	CK(cudaMemcpyAsync(r.buf.d_qscale, r.qscale.data(), (size_t) r.d * 8, cudaMemcpyHostToDevice,
					   r.buf.s_comp));
}

/*
 * GEMM path: the centring point becomes the exact shift of each column
 * (exact_shift, label_bound.h) from its range over every row and the sample
 * mean, so that the device may keep x - s and read x back exactly.
 */
static void
exact_shift_point(Run &r)
{
	const int	d = r.d;
	std::vector<unsigned int> range(2 * (size_t) d);
	CK(cudaMemcpy(range.data(), r.buf.d_colrange, (size_t) d * 8, cudaMemcpyDeviceToHost));
	auto		value = [](unsigned int o) {	/* elementwise.cu's ordered(), inverted */
		const unsigned int b = o & 0x80000000u ? o & 0x7fffffffu : ~o;
		float		v;
		memcpy(&v, &b, 4);
		return v;
	};
	for (int j = 0; j < d; j++)
	{
		r.muf[j] = exact_shift(value(range[j]), value(range[d + j]), r.mu[j]);
		r.mu[j] = r.muf[j];
	}
	CK(cudaMemcpyAsync(r.buf.d_mu, r.muf.data(), (size_t) d * 4, cudaMemcpyHostToDevice, r.buf.s_comp));
	CK(cudaStreamSynchronize(r.buf.s_comp));
}

void
prepare_data(Run &r)
{
	Buffers    &B = r.buf;
	const int64_t n = r.n;
	const int	d = r.d, k = r.k;
	const bool	gemm = r.plan.path == PATH_GEMM;
	centring_point(r);
	CK(cudaMemsetAsync(B.d_colmax, 0, (size_t) d * 4, B.s_comp));
	if (gemm)					/* min slots at the top, max slots at the bottom */
	{
		CK(cudaMemsetAsync(B.d_colrange, 0xff, (size_t) d * 4, B.s_comp));
		CK(cudaMemsetAsync(B.d_colrange + d, 0, (size_t) d * 4, B.s_comp));
	}
	if (r.plan.resident)
	{
		const int64_t count = n * (int64_t) d;
		CK(cudaMemcpyAsync(B.d_x, r.x, (size_t) count * sizeof(float), cudaMemcpyHostToDevice, B.s_comp));
		launch_col_maxabs(B.d_x, n, d, B.d_colmax, B.s_comp);
		if (gemm)
			launch_col_range(B.d_x, n, d, B.d_colrange, B.s_comp);
	}
	else
		for_each_chunk(r, [&](int64_t, int64_t, int64_t rows, int, const float *xp) {
			launch_col_maxabs(xp, rows, d, B.d_colmax, B.s_comp);
			if (gemm)
				launch_col_range(xp, rows, d, B.d_colrange, B.s_comp);
		});
	CK(cudaStreamSynchronize(B.s_comp));
	fixed_point_scales(r);
	if (gemm)
		exact_shift_point(r);
	if (r.plan.resident)
	{
		const int64_t count = n * (int64_t) d;
		if (gemm)				/* kept as x' = x - s, its norms taken before the split */
		{
			launch_shift(B.d_x, n, d, B.d_mu, B.s_comp);
			launch_row_norms(B.d_x, n, d, B.d_norms, B.s_comp);
		}
		if (r.plan.product == PRODUCT_3XTF32)
			launch_split_tf32(B.d_x, B.d_xlo, count, B.s_comp);
		CK(cudaStreamSynchronize(B.s_comp));
		if (B.registered)		/* never read again by a copy */
		{
			cudaHostUnregister(const_cast<float *>(B.registered));
			B.registered = nullptr;
		}
	}

	launch_fill_int(B.d_labels, n, -1, B.s_comp);
	r.cent.assign((size_t) k * d, 0.0);
	for (int c = 0; c < k; c++)		/* until set: the first k rows */
		for (int j = 0; j < d; j++)
			r.cent[(size_t) c * d + j] = r.x[(size_t) c * d + j];
	CK(cudaStreamSynchronize(B.s_comp));
}

}							/* namespace pgkm_cuda */
