/*
 * data.cu: a run's view of the caller's rows, set up once at create: the
 * centring point, the rows on the device (resident: copied, scanned, centred
 * and split as the path needs; streamed: scanned chunk by chunk), the
 * fixed-point scale of the sums, and the state before the first pass.
 */
#include "chunks.cuh"
#include "launch.cuh"
#include "run.cuh"

#include <algorithm>
#include <cmath>
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
	std::vector<float> muf(d);
	for (int j = 0; j < d; j++)
	{
		r.mu[j] /= (double) ns;
		muf[j] = (float) r.mu[j];
		r.mu[j] = muf[j];		/* the kernels centre by the fp32 value */
	}
	CK(cudaMemcpy(r.buf.d_mu, muf.data(), (size_t) d * 4, cudaMemcpyHostToDevice));
}

/*
 * Fixed point: q = llrint(x * 2^e), e = 61 - ex_n - ex_m, where n + 1 < 2^ex_n
 * and max|x| < 2^ex_m (frexp). Then |q| <= 2^(61-ex_n) and any sum of at
 * most n of them (a cluster's sum, a block's private partial, a warp group's
 * partial) stays below n * 2^(61-ex_n) < 2^61, far from int64's 2^63: |x| * n
 * cannot leave the range, because e is derived from both. What a large n or
 * max|x| costs is resolution: the step 2^-e is max|x| * 2^-(61-ex_n), e.g.
 * 2^-37 max|x| at n = 10M; one huge outlier coarsens every column's sums
 * (each mean is off by at most half a step). Fast mode (fp64 atomics) has no
 * such step but order-dependent last bits.
 */
static double
fixed_point_scale(int64_t n, float maxabs)
{
	int			ex_n = 0, ex_m = 0;
	frexp((double) n + 1.0, &ex_n);
	frexp(maxabs > 0 ? (double) maxabs : 1.0, &ex_m);
	return ldexp(1.0, 61 - ex_n - ex_m);
}

void
prepare_data(Run &r)
{
	Buffers    &B = r.buf;
	const int64_t n = r.n;
	const int	d = r.d, k = r.k;
	centring_point(r);
	CK(cudaMemsetAsync(B.d_maxabs, 0, 16, B.s_comp));
	if (r.plan.resident)
	{
		const int64_t count = n * (int64_t) d;
		CK(cudaMemcpyAsync(B.d_x, r.x, (size_t) count * sizeof(float), cudaMemcpyHostToDevice, B.s_comp));
		launch_maxabs(B.d_x, count, B.d_maxabs, B.s_comp);
		if (centred_copy(r))
			launch_center(B.d_x, n, d, B.d_mu, B.s_comp);
		if (r.plan.product == PRODUCT_3XTF32)
			launch_split_tf32(B.d_x, B.d_xlo, count, B.s_comp);
		CK(cudaStreamSynchronize(B.s_comp));
		if (B.registered)		/* never read again by a copy */
		{
			cudaHostUnregister(const_cast<float *>(B.registered));
			B.registered = nullptr;
		}
	}
	else
	{
		for_each_chunk(r, [&](int64_t, int64_t, int64_t rows, int, const float *xp) {
			launch_maxabs(xp, rows * d, B.d_maxabs, B.s_comp);
		});
		CK(cudaStreamSynchronize(B.s_comp));
	}
	float		maxabs = 0;
	CK(cudaMemcpy(&maxabs, B.d_maxabs, sizeof(float), cudaMemcpyDeviceToHost));
	if (!std::isfinite(maxabs))
		fail(PGKM_ERR_INVALID, "data contains NaN or infinity");
	r.qscale = fixed_point_scale(n, maxabs);

	launch_fill_int(B.d_labels, n, -1, B.s_comp);
	r.cent.assign((size_t) k * d, 0.0);
	for (int c = 0; c < k; c++)		/* until set: the first k rows */
		for (int j = 0; j < d; j++)
			r.cent[(size_t) c * d + j] = r.x[(size_t) c * d + j];
	CK(cudaStreamSynchronize(B.s_comp));
}

}							/* namespace pgkm_cuda */
