/*
 * pass.cu: one Lloyd pass over every row, resident or streamed: centroid
 * upload in the path's layout, the per-chunk dispatch to the path's kernels,
 * and the host's reading of the pass (new centroids, sizes, inertia).
 */
#include "chunks.cuh"
#include "device/tf32.cuh"
#include "launch.cuh"
#include "run.cuh"

#include <cmath>
#include <cstring>

namespace pgkm_cuda
{

void
check_interrupt(Run &r)
{
	if (r.interrupt && r.interrupt(r.interrupt_ctx))
	{
		cudaStreamSynchronize(r.buf.s_comp);
		cudaStreamSynchronize(r.buf.s_copy);
		throw Failure {PGKM_INTERRUPTED, "canceled"};
	}
}

/* Makes k x d fp64 centroids current; uploaded lazily at the next pass. */
void
make_current(Run &r, const double *centroids)
{
	r.cent.assign(centroids, centroids + (size_t) r.k * r.d);
	r.cent_dirty = true;
}

/*
 * Dynamic plus static shared memory above the 48 KB default needs an opt-in
 * per kernel, and the opt-in may not exceed the device limit less the
 * kernel's static arrays (asking for the full limit is an invalid argument).
 */
void
allow_smem(const void *kernel, const Run &r, size_t smem)
{
	cudaFuncAttributes fa;

	CK(cudaFuncGetAttributes(&fa, kernel));
	if (smem + fa.sharedSizeBytes > (size_t) r.limits.smem_optin)
		CK(cudaErrorInvalidConfiguration);	/* a sizing bug: say so, never launch */
	if (smem + fa.sharedSizeBytes > 48 * 1024)
		CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
}

/*
 * Uploads the current centroids in the layouts the path needs, from pinned
 * staging and without a synchronize: the pass queued behind it on the same
 * stream orders it, and it saves a host round trip per iteration. Also sets
 * the label test of these centroids (label_bound.h).
 */
void
upload_centroids(Run &r)
{
	Buffers    &B = r.buf;
	const int	d = r.d, k = r.k;
	const Path	path = r.plan.path;
	size_t		kd = (size_t) k * d;
	CK(cudaEventSynchronize(B.ev_upload));	/* the last upload no longer reads the staging */
	float	   *cf = B.h_cstage;
	float	   *bias = B.h_cstage + kd;
	for (int c = 0; c < k; c++)
	{
		const double *cc = r.cent.data() + (size_t) c * d;
		double		nrm = 0;
		for (int j = 0; j < d; j++)
		{
			if (path == PATH_DIRECT)
				cf[(size_t) c * d + j] = (float) cc[j];
			else
			{
				float		v = (float) (cc[j] - r.mu[j]);	/* GEMM: mu is the rows' exact shift */
				nrm += (double) v * v;
				cf[(size_t) c * d + j] = v;
			}
		}
		bias[c] = (float) nrm;
	}
	r.test = label_test(path, r.plan.product, r.cent.data(), r.muf.data(), cf, bias, k, d);
	if (path == PATH_DOT)		/* -2c': x' centred in the kernel; GEMM, TILED: c' (the -2 comes later) */
		for (size_t i = 0; i < kd; i++)
			cf[i] *= -2.0f;
	memcpy(B.h_c64, r.cent.data(), kd * sizeof(double));
	double	   *c64 = B.h_c64;
	if (r.plan.product == PRODUCT_3XTF32)
	{
		float	   *cf_lo = B.h_cstage + kd + k;
		for (size_t i = 0; i < kd; i++)
		{
			float		h = tf32_hi(cf[i]);
			cf_lo[i] = cf[i] - h;
			cf[i] = h;
		}
		CK(cudaMemcpyAsync(B.d_cf_lo, cf_lo, kd * sizeof(float), cudaMemcpyHostToDevice, B.s_comp));
	}
	CK(cudaMemcpyAsync(B.d_cf, cf, kd * sizeof(float), cudaMemcpyHostToDevice, B.s_comp));
	CK(cudaMemcpyAsync(B.d_bias, bias, k * sizeof(float), cudaMemcpyHostToDevice, B.s_comp));
	CK(cudaMemcpyAsync(B.d_c64, c64, kd * sizeof(double), cudaMemcpyHostToDevice, B.s_comp));
	/* the staging buffers are refilled by the next upload, which waits for this
	 * event (normally long done: every pass ends with a stream synchronize) */
	CK(cudaEventRecord(B.ev_upload, B.s_comp));
	r.launches += 3;
	r.cent_dirty = false;
}

/* One chunk's work on the path's kernels. */
static void
launch_pass_chunk(Run &r, const PassArgs &a0, int64_t slot_base, cudaStream_t s)
{
	PassArgs	a = a0;
	a.agg = r.settings.global_sums ? 0 : 1;
	switch (r.plan.path)
	{
		case PATH_DIRECT:
		case PATH_DOT:
			launch_fused(r, a, slot_base, s);
			return;
		case PATH_TILED:
			launch_tiled_pass(r, a, slot_base, s);
			return;
		case PATH_GEMM:
			launch_gemm_pass(r, a, slot_base, s);
			return;
	}
}

/* A pass's start (2 launches): buffers back, centroids uploaded, sums, counts and partials zeroed. */
void
begin_pass(Run &r)
{
	Buffers    &B = r.buf;
	const size_t nacc = (size_t) r.k * r.d + r.k;
	r.launches = 0;
	ensure_pass_buffers(r);	/* k-means++ may have borrowed their memory */
	if (r.cent_dirty)
		upload_centroids(r);
	/* acc, moved, inertia, decided are contiguous: one memset, one copy back */
	CK(cudaMemsetAsync(B.d_acc, 0, (nacc + 3) * sizeof(unsigned long long), B.s_comp));
	CK(cudaMemsetAsync(B.d_partials, 0, r.plan.nslots * sizeof(double), B.s_comp));
	r.launches += 2;
}

/* A chunk's arguments that every pass sets alike (the sorted update reads no others). */
PassArgs
chunk_pass_args(const Run &r, int64_t r0, int64_t rows)
{
	const Buffers &B = r.buf;
	PassArgs	a {};
	a.rows = rows;
	a.row0 = r0;
	a.d = r.d;
	a.k = r.k;
	a.c64 = B.d_c64;
	a.labels = B.d_labels;
	a.acc = B.d_acc;
	a.qscale = B.d_qscale;
	a.partials = B.d_partials;
	a.moved = B.d_acc + (size_t) r.k * r.d + r.k;
	a.det = r.settings.deterministic ? 1 : 0;
	a.test = r.test;
	return a;
}

/*
 * One pass over all rows: assignment + sums. With labels/dist2 (assign()) the
 * per-row outputs are copied to the host chunk by chunk.
 */
void
run_pass(Run &r, int32_t *labels_out, double *dist2_out)
{
	Buffers    &B = r.buf;
	const int	d = r.d, k = r.k;
	const size_t nacc = (size_t) k * d + k;
	begin_pass(r);
	if (B.d_list_count)
	{
		CK(cudaMemsetAsync(B.d_list_count, 0, r.plan.nchunks * sizeof(unsigned int), B.s_comp));
		r.launches++;
	}
	const int64_t slots_per_chunk = r.plan.nslots / r.plan.nchunks;
	const bool	split = r.plan.product == PRODUCT_3XTF32;
	const bool	gemm = r.plan.path == PATH_GEMM;
	for_each_chunk(r, [&](int64_t c, int64_t r0, int64_t rows, int b, const float *xp) {
		if (!r.plan.resident)
		{
			if (gemm)			/* kept as x' = x - s (exact), its norms taken before the split */
			{
				launch_shift(B.d_chunk[b], rows, d, B.d_mu, B.s_comp);
				launch_row_norms(B.d_chunk[b], rows, d, B.d_norms, B.s_comp);
				r.launches += 2;
			}
			if (split)
			{
				launch_split_tf32(B.d_chunk[b], B.d_chunk_lo[b], rows * d, B.s_comp);
				r.launches++;
			}
		}
		PassArgs	a = chunk_pass_args(r, r0, rows);
		a.x = xp;
		a.cf = B.d_cf;
		a.bias = B.d_bias;
		a.mu = B.d_mu;
		a.dist2 = dist2_out ? B.d_dist2 : nullptr;
		if (split)
			a.xlo = r.plan.resident ? B.d_xlo + r0 * d : B.d_chunk_lo[b];
		a.decided = B.d_acc + nacc + 2;
		if (gemm)
		{
			a.shift = B.d_mu;
			a.norms = r.plan.resident ? B.d_norms + r0 : B.d_norms;
		}
		if (B.d_list_count)
		{
			a.list = B.d_list;
			a.list_count = B.d_list_count + c;
			a.list_mask = B.d_list_mask;
		}
		launch_pass_chunk(r, a, c * slots_per_chunk, B.s_comp);
		if (dist2_out)
		{
			CK(cudaMemcpyAsync(dist2_out + r0, B.d_dist2, rows * sizeof(double), cudaMemcpyDeviceToHost, B.s_comp));
			r.launches++;
		}
	});
	launch_reduce_partials(B.d_partials, r.plan.nslots, reinterpret_cast<double *>(B.d_acc + nacc + 1), B.s_comp);
	CK(cudaMemcpyAsync(B.h_acc, B.d_acc, (nacc + 3) * sizeof(unsigned long long), cudaMemcpyDeviceToHost, B.s_comp));
	if (labels_out)
	{
		CK(cudaMemcpyAsync(labels_out, B.d_labels, r.n * sizeof(int32_t), cudaMemcpyDeviceToHost, B.s_comp));
		r.launches++;
	}
	r.launches += 2;
	CK(cudaStreamSynchronize(B.s_comp));
	CK(cudaGetLastError());
	r.decided = (int64_t) B.h_acc[nacc + 2];
}

/* Host view of the pass's sums (fixed point or fp64) and counts. */
static inline double
acc_value(const Run &r, size_t i)
{
	if (r.settings.deterministic)
		return (double) (long long) r.buf.h_acc[i] / r.qscale[i % r.d];
	double		v;
	memcpy(&v, &r.buf.h_acc[i], sizeof(v));
	return v;
}

static inline int64_t
acc_count(const Run &r, size_t i)
{
	if (r.settings.deterministic)
		return (int64_t) r.buf.h_acc[i];
	double		v;
	memcpy(&v, &r.buf.h_acc[i], sizeof(v));
	return (int64_t) llround(v);
}

static double
pass_inertia(const Run &r)
{
	double		inertia;
	memcpy(&inertia, &r.buf.h_acc[(size_t) r.k * r.d + r.k + 1], sizeof(double));
	return inertia;
}

/* After an iteration's pass: new centroids (mean of each non-empty cluster) become current. */
void
read_update(Run &r, pgkm_cuda_iter *out, double *centroids, int64_t *sizes)
{
	const int	d = r.d, k = r.k;
	const size_t kd = (size_t) k * d;
	out->inertia = pass_inertia(r);
	out->moved = (int64_t) r.buf.h_acc[kd + k];
	for (int c = 0; c < k; c++)
	{
		int64_t		cnt = acc_count(r, kd + c);
		sizes[c] = cnt;
		double	   *dst = centroids + (size_t) c * d;
		const double *old = r.cent.data() + (size_t) c * d;
		if (cnt == 0)
		{
			memcpy(dst, old, d * sizeof(double));
			continue;
		}
		for (int j = 0; j < d; j++)
			dst[j] = acc_value(r, (size_t) c * d + j) / (double) cnt;
	}
	make_current(r, centroids);
}

/* After an assignment's pass: cluster sizes and inertia. */
void
read_sizes(const Run &r, int64_t *sizes, double *inertia)
{
	const size_t kd = (size_t) r.k * r.d;
	for (int c = 0; c < r.k; c++)
		sizes[c] = acc_count(r, kd + c);
	*inertia = pass_inertia(r);
}

}							/* namespace pgkm_cuda */
