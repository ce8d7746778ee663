/*
 * pgkm_cuda_plugin.cu: the plugin's C ABI (pgkm_cuda_api.h): run setup,
 * memory plan (resident or streamed), the pass driver, and error mapping.
 *
 * CUDA is touched only inside these entry points (never at dlopen), so the
 * runtime creates the process's one context lazily on the first call.
 * Every entry point catches everything and returns a status + message.
 */
#include "pgkm_cuda_internal.cuh"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>

namespace pgkm_cuda
{

void
fail_cuda(cudaError_t e, const char *what, const char *file, int line)
{
	char		buf[512];
	const char *base = strrchr(file, '/');
	snprintf(buf, sizeof(buf), "%s: %s (%s:%d)", cudaGetErrorString(e), what, base ? base + 1 : file, line);
	cudaGetLastError();			/* clear a non-sticky error */
	throw Failure {e == cudaErrorMemoryAllocation ? PGKM_ERR_NOMEM : PGKM_ERR_GPU, buf};
}

void
fail_blas(cublasStatus_t e, const char *what)
{
	char		buf[256];
	snprintf(buf, sizeof(buf), "cuBLAS error %d in %s", (int) e, what);
	throw Failure {e == CUBLAS_STATUS_ALLOC_FAILED ? PGKM_ERR_NOMEM : PGKM_ERR_GPU, buf};
}

/* Device allocation counted against the run's budget. */
void *
dev_alloc(Run &r, size_t bytes)
{
	if (bytes == 0)
		bytes = 16;
	if (r.budget > 0 && (int64_t) (r.allocated + bytes) > r.budget)
	{
		char		buf[256];
		snprintf(buf, sizeof(buf), "GPU memory budget exceeded: need %zu more bytes, %zu of %lld in use",
				 bytes, r.allocated, (long long) r.budget);
		throw Failure {PGKM_ERR_NOMEM, buf};
	}
	void	   *p = nullptr;
	CK(cudaMalloc(&p, bytes));
	r.allocated += bytes;
	return p;
}

void
dev_free(Run &r, void *p, size_t bytes)
{
	if (!p)
		return;
	cudaFree(p);
	r.allocated -= std::min(r.allocated, bytes == 0 ? (size_t) 16 : bytes);
}

void
check_interrupt(Run &r)
{
	if (r.cfg.interrupt && r.cfg.interrupt(r.cfg.interrupt_ctx))
	{
		cudaStreamSynchronize(r.s_comp);
		cudaStreamSynchronize(r.s_copy);
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
 * Uploads the current centroids in the layouts the path needs, from pinned
 * staging and without a synchronize: the pass queued behind it on the same
 * stream orders it, and it saves a host round trip per iteration.
 */
static void
upload_centroids(Run &r)
{
	const int	d = r.d, k = r.k;
	size_t		kd = (size_t) k * d;
	CK(cudaEventSynchronize(r.ev_upload));	/* the last upload no longer reads the staging */
	float	   *cf = r.h_cstage;
	float	   *bias = r.h_cstage + kd;
	for (int c = 0; c < k; c++)
	{
		const double *cc = r.cent.data() + (size_t) c * d;
		double		nrm = 0, mdot = 0;
		for (int j = 0; j < d; j++)
		{
			if (r.path == PATH_DIRECT)
				cf[(size_t) c * d + j] = (float) cc[j];
			else
			{
				float		v = (float) (cc[j] - r.mu[j]);
				nrm += (double) v * v;
				mdot += (double) r.mu[j] * v;
				/* DOT: -2c' (x' centred in the kernel); GEMM: c' (alpha = -2) */
				cf[(size_t) c * d + j] = r.path == PATH_DOT ? -2.0f * v : v;
			}
		}
		(void) mdot;
		bias[c] = (float) nrm;	/* GEMM: the resident/streamed rows are centred in place */
	}
	double	   *c64 = r.h_c64;
	for (size_t i = 0; i < kd; i++)
		c64[i] = centred_copy(r) ? r.cent[i] - r.mu[i % d] : r.cent[i];
	if (r.tf32_terms == 3)
	{
		float	   *cf_lo = r.h_cstage + kd + k;
		for (size_t i = 0; i < kd; i++)
		{
			float		h = tf32_hi(cf[i]);
			cf_lo[i] = cf[i] - h;
			cf[i] = h;
		}
		CK(cudaMemcpyAsync(r.d_cf_lo, cf_lo, kd * sizeof(float), cudaMemcpyHostToDevice, r.s_comp));
	}
	CK(cudaMemcpyAsync(r.d_cf, cf, kd * sizeof(float), cudaMemcpyHostToDevice, r.s_comp));
	CK(cudaMemcpyAsync(r.d_bias, bias, k * sizeof(float), cudaMemcpyHostToDevice, r.s_comp));
	CK(cudaMemcpyAsync(r.d_c64, c64, kd * sizeof(double), cudaMemcpyHostToDevice, r.s_comp));
	/* the staging buffers are refilled by the next upload, which waits for this
	 * event (normally long done: every pass ends with a stream synchronize) */
	CK(cudaEventRecord(r.ev_upload, r.s_comp));
	r.launches += 3;
	r.cent_dirty = false;
}

/*
 * One pass over all rows: assignment + sums. With labels/dist2 (assign()) the
 * per-row outputs are copied to the host chunk by chunk. Streaming: chunk c
 * is copied into buffer c % 2 on s_copy while chunk c - 1 is processed on
 * s_comp; at most two chunks are in flight, and the interrupt callback is
 * polled after each chunk is enqueued.
 */
static void
run_pass(Run &r, int32_t *labels_out, double *dist2_out)
{
	const int	d = r.d, k = r.k;
	r.launches = 0;
	if (r.cent_dirty)
		upload_centroids(r);
	size_t		nacc = (size_t) k * d + k;
	/* acc, moved, inertia are contiguous: one memset, one copy back */
	CK(cudaMemsetAsync(r.d_acc, 0, (nacc + 2) * sizeof(unsigned long long), r.s_comp));
	CK(cudaMemsetAsync(r.d_partials, 0, r.nslots * sizeof(double), r.s_comp));
	r.launches += 2;
	int64_t		slots_per_chunk = r.nslots / r.nchunks;
	for (int64_t c = 0; c < r.nchunks; c++)
	{
		int64_t		r0 = c * r.chunk_rows;
		int64_t		rows = std::min(r.chunk_rows, r.n - r0);
		int			b = (int) (c & 1);
		const float *xp;
		if (r.resident)
			xp = r.d_x + r0 * d;
		else
		{
			CK(cudaStreamWaitEvent(r.s_copy, r.ev_done[b], 0));
			CK(cudaMemcpyAsync(r.d_chunk[b], r.x + r0 * d, (size_t) rows * d * sizeof(float),
							   cudaMemcpyHostToDevice, r.s_copy));
			CK(cudaEventRecord(r.ev_copy[b], r.s_copy));
			CK(cudaStreamWaitEvent(r.s_comp, r.ev_copy[b], 0));
			xp = r.d_chunk[b];
			r.launches++;
			if (centred_copy(r))
			{
				launch_center(r.d_chunk[b], rows, d, r.d_mu, r.s_comp);
				r.launches++;
			}
			if (r.tf32_terms == 3)
			{
				launch_split_tf32(r.d_chunk[b], r.d_chunk_lo[b], rows * d, r.s_comp);
				r.launches++;
			}
		}
		PassArgs	a {};
		a.x = xp;
		a.rows = rows;
		a.row0 = r0;
		a.d = d;
		a.k = k;
		a.cf = r.d_cf;
		a.bias = r.d_bias;
		a.mu = r.d_mu;
		a.c64 = r.d_c64;
		a.labels = r.d_labels;
		a.dist2 = dist2_out ? r.d_dist2 : nullptr;
		a.acc = r.d_acc;
		a.qscale = r.qscale;
		a.partials = r.d_partials;
		a.moved = r.d_acc + nacc;
		a.det = r.cfg.deterministic ? 1 : 0;
		if (r.tf32_terms == 3)
			a.xlo = r.resident ? r.d_xlo + r0 * d : r.d_chunk_lo[b];
		launch_pass_chunk(r, a, c * slots_per_chunk, r.s_comp);
		if (dist2_out)
		{
			CK(cudaMemcpyAsync(dist2_out + r0, r.d_dist2, rows * sizeof(double), cudaMemcpyDeviceToHost, r.s_comp));
			r.launches++;
		}
		CK(cudaEventRecord(r.ev_done[b], r.s_comp));
		/* bound the queue: wait for the previous chunk, then poll */
		if (c >= 1)
			CK(cudaEventSynchronize(r.ev_done[b ^ 1]));
		check_interrupt(r);
	}
	launch_reduce_partials(r.d_partials, r.nslots, reinterpret_cast<double *>(r.d_acc + nacc + 1), r.s_comp);
	CK(cudaMemcpyAsync(r.h_acc, r.d_acc, (nacc + 2) * sizeof(unsigned long long), cudaMemcpyDeviceToHost, r.s_comp));
	if (labels_out)
	{
		CK(cudaMemcpyAsync(labels_out, r.d_labels, r.n * sizeof(int32_t), cudaMemcpyDeviceToHost, r.s_comp));
		r.launches++;
	}
	r.launches += 2;
	CK(cudaStreamSynchronize(r.s_comp));
	CK(cudaGetLastError());
}

/* Host view of the pass's sums (fixed point or fp64) and counts. */
static inline double
acc_value(const Run &r, size_t i)
{
	if (r.cfg.deterministic)
		return (double) (long long) r.h_acc[i] / r.qscale;
	double		v;
	memcpy(&v, &r.h_acc[i], sizeof(v));
	return v;
}

static inline int64_t
acc_count(const Run &r, size_t i)
{
	if (r.cfg.deterministic)
		return (int64_t) r.h_acc[i];
	double		v;
	memcpy(&v, &r.h_acc[i], sizeof(v));
	return (int64_t) llround(v);
}

static void
destroy_run(Run *r)
{
	if (!r)
		return;
	if (r->s_comp)
		cudaStreamSynchronize(r->s_comp);
	if (r->s_copy)
		cudaStreamSynchronize(r->s_copy);
	void	   *ptrs[] = {r->d_x, r->d_chunk[0], r->d_chunk[1], r->d_labels, r->d_cf, r->d_bias, r->d_mu,
		r->d_c64, r->d_acc, r->d_partials, r->d_tile, r->d_dist2, r->d_maxabs, r->d_xlo, r->d_chunk_lo[0],
	r->d_chunk_lo[1], r->d_cf_lo};
	for (void *p : ptrs)
		if (p)
			cudaFree(p);
	if (r->blas)
		cublasDestroy(r->blas);
	for (int i = 0; i < 2; i++)
	{
		if (r->ev_copy[i])
			cudaEventDestroy(r->ev_copy[i]);
		if (r->ev_done[i])
			cudaEventDestroy(r->ev_done[i]);
	}
	if (r->ev_upload)
		cudaEventDestroy(r->ev_upload);
	if (r->s_comp)
		cudaStreamDestroy(r->s_comp);
	if (r->s_copy)
		cudaStreamDestroy(r->s_copy);
	if (r->h_acc)
		cudaFreeHost(r->h_acc);
	if (r->h_cstage)
		cudaFreeHost(r->h_cstage);
	if (r->h_c64)
		cudaFreeHost(r->h_c64);
	if (r->registered)
		cudaHostUnregister(const_cast<float *>(r->x));
	cudaGetLastError();
	delete r;
}

/*
 * Assignment path by shape (crossovers measured on the H100, bench/RESULTS.md
 * sections 3 and 8). PGKM_CUDA_PATH=fused|tiled|gemm forces one and
 * PGKM_CUDA_TILED_MAX_K moves the TILED/GEMM split in k, for measurements.
 */
static Path
pick_path(int d, int k)
{
	const char *force = getenv("PGKM_CUDA_PATH");
	const char *tk = getenv("PGKM_CUDA_TILED_MAX_K");
	int			tiled_max_k = tk && atoi(tk) >= 1 ? std::min(atoi(tk), 1024) : TILED_MAX_K;
	if (force && !strcmp(force, "gemm"))
		return PATH_GEMM;
	if (force && !strcmp(force, "tiled") && d <= TILED_MAX_D && k <= 1024)
		return PATH_TILED;
	if (force && !strcmp(force, "fused") && d <= 64)
		return d < 16 ? PATH_DIRECT : PATH_DOT;
	if (d < 16)
		return PATH_DIRECT;
	/* at d >= 768 cuBLAS beat TILED from k = 128 (27 vs 32 ms at 4M rows; tied at k = 64) */
	if (d >= TILED_MIN_D && d <= TILED_MAX_D && k <= tiled_max_k && !(d >= 768 && k > 64 && !tk))
		return PATH_TILED;
	if (d <= 64)				/* fused beat cuBLAS+argmin up to d = 64 at k = 64 and 1024 (bench/RESULTS.md) */
		return PATH_DOT;
	return PATH_GEMM;
}

/* Sets up a run: memory plan, centring point, fixed-point scale, buffers. */
static Run *
create_run(const float *x, int64_t n, int32_t d, int32_t k, const pgkm_cuda_config *cfg)
{
	if (!x || n < 1 || d < 1 || k < 1 || k > n)
		throw Failure {PGKM_ERR_INVALID, "invalid shape for a GPU run"};
	Run		   *r = new Run;
	try
	{
		r->x = x;
		r->n = n;
		r->d = d;
		r->k = k;
		if (cfg)
			r->cfg = *cfg;
		else
			r->cfg.deterministic = 1;
		int			dev = r->cfg.device_ordinal >= 0 ? r->cfg.device_ordinal : 0;
		CK(cudaSetDevice(dev));
		r->device = dev;
		CK(cudaDeviceGetAttribute(&r->sms, cudaDevAttrMultiProcessorCount, dev));
		CK(cudaDeviceGetAttribute(&r->smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
		CK(cudaDeviceGetAttribute(&r->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
		r->path = pick_path(d, k);
		if (r->path == PATH_GEMM)
		{
			/*
			 * 3xTF32 where the product dominates (d, k >= 512: 10M x 768 x 1024
			 * 266 vs 382 ms); it lost where the argmin and tiles dominate
			 * (4M x 128 x 1024: 54 vs 44 ms), bench/RESULTS.md section 8.
			 * PGKM_CUDA_TF32=0|1|3 forces fp32 SGEMM, one TF32 product (tests
			 * only: not fp32-accurate) or 3xTF32.
			 */
			const char *tf = getenv("PGKM_CUDA_TF32");
			if (tf && (!strcmp(tf, "0") || !strcmp(tf, "1") || !strcmp(tf, "3")))
				r->tf32_terms = atoi(tf);
			else
				r->tf32_terms = d >= 512 && k >= 512 ? 3 : 0;
		}
		const int	x_copies = r->tf32_terms == 3 ? 2 : 1;	/* 3xTF32 keeps x' - tf32(x') too */
		const char *sums = getenv("PGKM_CUDA_SUMS");	/* benchmarks: v1 global atomics vs private */
		r->sums = sums && !strcmp(sums, "global") ? SUMS_GLOBAL : SUMS_AUTO;
		const char *bps = getenv("PGKM_CUDA_GEMM_BPS");	/* benchmarks: argmin occupancy */
		if (bps && atoi(bps) >= 1 && atoi(bps) <= 8)
			r->gemm_bps = atoi(bps);
		const char *tmb = getenv("PGKM_CUDA_GEMM_TILE_MB");	/* benchmarks: GEMM tile size */
		if (tmb && atoi(tmb) >= 1 && atoi(tmb) <= 1024)
			r->gemm_tile_bytes = (int64_t) atoi(tmb) << 20;

		size_t		freeb = 0, totalb = 0;
		CK(cudaMemGetInfo(&freeb, &totalb));
		int64_t		avail = (int64_t) freeb - (256LL << 20);	/* leave room for cuBLAS, context growth */
		r->budget = r->cfg.memory_limit > 0 ? std::min<int64_t>(r->cfg.memory_limit, avail) : avail;

		/* fixed buffers */
		const size_t kd = (size_t) k * d;
		size_t		fixed = n * 4 + kd * 4 + k * 4 + (size_t) d * 4 + kd * 8 + (kd + k + 2) * 8 + 64;
		r->tile_rows = 0;
		if (r->path == PATH_GEMM)
		{
			/* tile of -2 x.c' kept near 16 MB so it stays in L2 between GEMM and argmin */
			int64_t		tr = r->gemm_tile_bytes / (4LL * k);
			tr = std::max<int64_t>(1024, std::min<int64_t>(tr, 1LL << 20));
			r->tile_rows = std::min<int64_t>(tr, n);
			fixed += (size_t) r->tile_rows * k * 4 + (r->tf32_terms == 3 ? kd * 4 : 0);
		}
		/* bound one launch's work (~1 TFLOP, tens of ms) so interrupts are seen quickly */
		double		flops_row = (double) k * (2.0 * d + 2.0);
		int64_t		batch = (int64_t) std::max(65536.0, 1.0e12 / flops_row);
		int64_t		data_bytes = n * (int64_t) d * 4;
		int64_t		per_row_out = 8;	/* dist2 buffer per chunk row */
		if ((int64_t) fixed + x_copies * data_bytes + std::min(batch, n) * per_row_out + (256LL << 10) <= r->budget)
		{
			r->resident = true;
			r->chunk_rows = std::min(batch, n);
		}
		else
		{
			r->resident = false;
			/* two chunk buffers, the chunk's dist2 and (GEMM) a tile as large as the chunk at most */
			int64_t		tile_fixed = (int64_t) r->tile_rows * k * 4;
			int64_t		left = r->budget - ((int64_t) fixed - tile_fixed) - (256LL << 10);
			int64_t		per_row = 2LL * x_copies * d * 4 + per_row_out + (r->tile_rows > 0 ? 4LL * k : 0);
			int64_t		rows = left > 0 ? left / per_row : 0;
			if (r->tile_rows > 0 && rows > 0)
			{
				r->tile_rows = std::min(r->tile_rows, rows);
				rows = (left - r->tile_rows * 4LL * k) / (2LL * x_copies * d * 4 + per_row_out);
				rows = rows / r->tile_rows * r->tile_rows;
			}
			if (rows < 1)
			{
				char		buf[256];
				snprintf(buf, sizeof(buf), "GPU memory budget of %lld bytes is too small for n=%lld, d=%d, k=%d",
						 (long long) r->budget, (long long) n, d, k);
				throw Failure {PGKM_ERR_NOMEM, buf};
			}
			r->chunk_rows = std::min({rows, batch, n});
		}
		if (r->tile_rows > 0 && r->chunk_rows > r->tile_rows)
			r->chunk_rows = r->chunk_rows / r->tile_rows * r->tile_rows;
		r->nchunks = (n + r->chunk_rows - 1) / r->chunk_rows;
		r->grid = fused_grid(*r);
		int64_t		launches_per_chunk = r->path == PATH_GEMM ? (r->chunk_rows + r->tile_rows - 1) / r->tile_rows : 1;
		r->nslots = r->nchunks * launches_per_chunk * r->grid;

		CK(cudaStreamCreateWithFlags(&r->s_comp, cudaStreamNonBlocking));
		CK(cudaStreamCreateWithFlags(&r->s_copy, cudaStreamNonBlocking));
		for (int i = 0; i < 2; i++)
		{
			CK(cudaEventCreateWithFlags(&r->ev_copy[i], cudaEventDisableTiming));
			CK(cudaEventCreateWithFlags(&r->ev_done[i], cudaEventDisableTiming));
		}
		CK(cudaEventCreateWithFlags(&r->ev_upload, cudaEventDisableTiming));
		r->d_labels = (int32_t *) dev_alloc(*r, n * 4);
		r->d_cf = (float *) dev_alloc(*r, kd * 4);
		r->d_bias = (float *) dev_alloc(*r, k * 4);
		r->d_mu = (float *) dev_alloc(*r, (size_t) d * 4);
		r->d_c64 = (double *) dev_alloc(*r, kd * 8);
		r->d_acc = (unsigned long long *) dev_alloc(*r, (kd + k + 2) * 8);
		r->d_partials = (double *) dev_alloc(*r, r->nslots * 8);
		r->d_maxabs = (float *) dev_alloc(*r, 16);
		r->d_dist2 = (double *) dev_alloc(*r, r->chunk_rows * 8);
		if (r->path == PATH_GEMM)
		{
			r->d_tile = (float *) dev_alloc(*r, (size_t) r->tile_rows * k * 4);
			cublasStatus_t bs = cublasCreate(&r->blas);
			if (bs != CUBLAS_STATUS_SUCCESS)
				fail_blas(bs, "cublasCreate");
			cublasSetStream(r->blas, r->s_comp);
			/* TF32 only as 3xTF32 (fp32-accurate) or, for tests, one product */
			cublasSetMathMode(r->blas, r->tf32_terms ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
			if (r->tf32_terms == 3)
				r->d_cf_lo = (float *) dev_alloc(*r, kd * 4);
		}
		CK(cudaMallocHost((void **) &r->h_acc, (kd + k + 2) * 8));
		CK(cudaMallocHost((void **) &r->h_cstage, (2 * kd + k) * 4));
		CK(cudaMallocHost((void **) &r->h_c64, kd * 8));

		/* pin the caller's rows for fast (and, when streaming, asynchronous) copies */
		if (cudaHostRegister(const_cast<float *>(x), (size_t) data_bytes, cudaHostRegisterDefault) == cudaSuccess)
			r->registered = true;
		else
			cudaGetLastError();

		/* centring point: mean of up to 65536 evenly spaced rows (fp64, host) */
		r->mu.assign(d, 0.0);
		int64_t		ns = std::min<int64_t>(n, 65536);
		for (int64_t i = 0; i < ns; i++)
		{
			const float *row = x + (i * n / ns) * d;
			for (int j = 0; j < d; j++)
				r->mu[j] += row[j];
		}
		std::vector<float> muf(d);
		for (int j = 0; j < d; j++)
		{
			r->mu[j] /= (double) ns;
			muf[j] = (float) r->mu[j];
			r->mu[j] = muf[j];	/* the kernels centre by the fp32 value */
		}
		CK(cudaMemcpy(r->d_mu, muf.data(), (size_t) d * 4, cudaMemcpyHostToDevice));
		CK(cudaMemsetAsync(r->d_maxabs, 0, 16, r->s_comp));
		if (r->resident)
		{
			r->d_x = (float *) dev_alloc(*r, (size_t) data_bytes);
			CK(cudaMemcpyAsync(r->d_x, x, (size_t) data_bytes, cudaMemcpyHostToDevice, r->s_comp));
			launch_maxabs(r->d_x, n * (int64_t) d, r->d_maxabs, r->s_comp);
			if (centred_copy(*r))
				launch_center(r->d_x, n, d, r->d_mu, r->s_comp);
			if (r->tf32_terms == 3)
			{
				r->d_xlo = (float *) dev_alloc(*r, (size_t) data_bytes);
				launch_split_tf32(r->d_x, r->d_xlo, n * (int64_t) d, r->s_comp);
			}
			CK(cudaStreamSynchronize(r->s_comp));
			if (r->registered)
			{
				cudaHostUnregister(const_cast<float *>(x));
				r->registered = false;
			}
		}
		else
		{
			for (int i = 0; i < 2; i++)
			{
				r->d_chunk[i] = (float *) dev_alloc(*r, (size_t) r->chunk_rows * d * 4);
				if (r->tf32_terms == 3)
					r->d_chunk_lo[i] = (float *) dev_alloc(*r, (size_t) r->chunk_rows * d * 4);
			}
			for (int64_t c = 0; c < r->nchunks; c++)
			{
				int64_t		r0 = c * r->chunk_rows, rows = std::min(r->chunk_rows, n - r0);
				int			b = (int) (c & 1);
				CK(cudaStreamWaitEvent(r->s_copy, r->ev_done[b], 0));
				CK(cudaMemcpyAsync(r->d_chunk[b], x + r0 * d, (size_t) rows * d * 4, cudaMemcpyHostToDevice, r->s_copy));
				CK(cudaEventRecord(r->ev_copy[b], r->s_copy));
				CK(cudaStreamWaitEvent(r->s_comp, r->ev_copy[b], 0));
				launch_maxabs(r->d_chunk[b], rows * d, r->d_maxabs, r->s_comp);
				CK(cudaEventRecord(r->ev_done[b], r->s_comp));
				if (c >= 1)
					CK(cudaEventSynchronize(r->ev_done[b ^ 1]));
				check_interrupt(*r);
			}
			CK(cudaStreamSynchronize(r->s_comp));
		}
		float		maxabs = 0;
		CK(cudaMemcpy(&maxabs, r->d_maxabs, sizeof(float), cudaMemcpyDeviceToHost));
		if (!std::isfinite(maxabs))
			throw Failure {PGKM_ERR_INVALID, "data contains NaN or infinity"};
		/*
		 * Fixed point: q = llrint(x * 2^e), e = 61 - ex_n - ex_m, where
		 * n + 1 < 2^ex_n and max|x| < 2^ex_m (frexp). Then |q| <= 2^(61-ex_n)
		 * and any sum of at most n of them (a cluster's sum, a block's private
		 * partial, a warp group's partial) stays below n * 2^(61-ex_n) < 2^61,
		 * far from int64's 2^63: |x| * n cannot leave the range, because e is
		 * derived from both. What a large n or max|x| costs is resolution:
		 * the step 2^-e is max|x| * 2^-(61-ex_n), e.g. 2^-37 max|x| at
		 * n = 10M; one huge outlier coarsens every column's sums (each mean is
		 * off by at most half a step). Fast mode (fp64 atomics) has no such
		 * step but order-dependent last bits.
		 */
		int			ex_n = 0, ex_m = 0;
		frexp((double) n + 1.0, &ex_n);
		frexp(maxabs > 0 ? (double) maxabs : 1.0, &ex_m);
		r->qscale = ldexp(1.0, 61 - ex_n - ex_m);

		launch_fill_int(r->d_labels, n, -1, r->s_comp);
		r->cent.assign(kd, 0.0);
		for (int c = 0; c < k; c++)		/* until set: the first k rows */
			for (int j = 0; j < d; j++)
				r->cent[(size_t) c * d + j] = x[(size_t) c * d + j];
		CK(cudaStreamSynchronize(r->s_comp));
		return r;
	}
	catch (...)
	{
		destroy_run(r);
		throw;
	}
}

static void
set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen > 0)
	{
		strncpy(err, msg, errlen - 1);
		err[errlen - 1] = '\0';
	}
}

/* Runs body; maps every failure to a status and a message. */
template <typename F>
static int
guarded(char *err, size_t errlen, F body)
{
	try
	{
		body();
		return 0;
	}
	catch (const Failure &f)
	{
		set_err(err, errlen, f.msg.c_str());
		return f.status;
	}
	catch (const std::bad_alloc &)
	{
		set_err(err, errlen, "out of host memory in the GPU engine");
		return PGKM_ERR_NOMEM;
	}
	catch (const std::exception &e)
	{
		set_err(err, errlen, e.what());
		return PGKM_ERR_INTERNAL;
	}
	catch (...)
	{
		set_err(err, errlen, "unknown error in the GPU engine");
		return PGKM_ERR_INTERNAL;
	}
}

__global__ void
probe_kernel(int *p)
{
	*p = 42;
}

}							/* namespace pgkm_cuda */

using namespace pgkm_cuda;

static int
api_probe(char *info, size_t infolen)
{
	return guarded(info, infolen, [&] {
		int			count = 0;
		CK(cudaGetDeviceCount(&count));
		if (count < 1)
			throw Failure {PGKM_ERR_GPU_UNAVAILABLE, "no CUDA device"};
		cudaDeviceProp p;
		CK(cudaGetDeviceProperties(&p, 0));
		if (p.major < 8)
			throw Failure {PGKM_ERR_GPU_UNAVAILABLE, std::string(p.name) + " is older than compute capability 8.0"};
		int		   *dp = nullptr, hv = 0;
		CK(cudaMalloc(&dp, sizeof(int)));
		probe_kernel<<<1, 1>>>(dp);
		cudaError_t e = cudaGetLastError();
		if (e == cudaSuccess)
			e = cudaMemcpy(&hv, dp, sizeof(int), cudaMemcpyDeviceToHost);
		cudaFree(dp);
		if (e != cudaSuccess || hv != 42)
			throw Failure {PGKM_ERR_GPU_UNAVAILABLE, std::string("test kernel failed on ") + p.name + ": " + cudaGetErrorString(e)};
		char		buf[256];
		snprintf(buf, sizeof(buf), "%.200s, %.0f GiB, sm_%d%d", p.name, p.totalGlobalMem / 1073741824.0, p.major, p.minor);
		set_err(info, infolen, buf);
	});
}

static int
api_create(const float *x, int64_t n, int32_t d, int32_t k, const pgkm_cuda_config *cfg,
		   void **handle, char *err, size_t errlen)
{
	if (handle)
		*handle = nullptr;
	return guarded(err, errlen, [&] {
		if (!handle)
			throw Failure {PGKM_ERR_INVALID, "handle is NULL"};
		*handle = create_run(x, n, d, k, cfg);
	});
}

static int
api_init_kmeanspp(void *h, uint64_t seed, double *centroids, int32_t *k_found, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		if (!h || !centroids || !k_found)
			throw Failure {PGKM_ERR_INVALID, "NULL argument"};
		Run		   &r = *static_cast<Run *>(h);
		CK(cudaSetDevice(r.device));
		*k_found = kmeanspp(r, seed, centroids);
	});
}

static int
api_set_centroids(void *h, const double *centroids, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		if (!h || !centroids)
			throw Failure {PGKM_ERR_INVALID, "NULL argument"};
		Run		   &r = *static_cast<Run *>(h);
		for (size_t i = 0; i < (size_t) r.k * r.d; i++)
			if (!std::isfinite(centroids[i]))
				throw Failure {PGKM_ERR_INVALID, "centroids contain NaN or infinity"};
		make_current(r, centroids);
	});
}

static int
api_iterate(void *h, pgkm_cuda_iter *out, double *centroids, int64_t *sizes, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		if (!h || !out || !centroids || !sizes)
			throw Failure {PGKM_ERR_INVALID, "NULL argument"};
		Run		   &r = *static_cast<Run *>(h);
		CK(cudaSetDevice(r.device));
		run_pass(r, nullptr, nullptr);
		const int	d = r.d, k = r.k;
		const size_t kd = (size_t) k * d;
		double		inertia;
		memcpy(&inertia, &r.h_acc[kd + k + 1], sizeof(double));
		out->inertia = inertia;
		out->moved = (int64_t) r.h_acc[kd + k];
		double		shift = 0;
		int32_t		empty = 0;
		for (int c = 0; c < k; c++)
		{
			int64_t		cnt = acc_count(r, kd + c);
			sizes[c] = cnt;
			double	   *dst = centroids + (size_t) c * d;
			const double *old = r.cent.data() + (size_t) c * d;
			if (cnt == 0)
			{
				empty++;
				memcpy(dst, old, d * sizeof(double));
				continue;
			}
			for (int j = 0; j < d; j++)
			{
				double		v = acc_value(r, (size_t) c * d + j) / (double) cnt;
				if (centred_copy(r))
					v += r.mu[j];
				double		t = v - old[j];
				shift += t * t;
				dst[j] = v;
			}
		}
		out->shift = shift;
		out->empty = empty;
		make_current(r, centroids);
	});
}

static int
api_assign(void *h, int32_t *labels, double *dist2, int64_t *sizes, double *inertia, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		if (!h || !labels || !dist2 || !sizes || !inertia)
			throw Failure {PGKM_ERR_INVALID, "NULL argument"};
		Run		   &r = *static_cast<Run *>(h);
		CK(cudaSetDevice(r.device));
		run_pass(r, labels, dist2);
		const size_t kd = (size_t) r.k * r.d;
		for (int c = 0; c < r.k; c++)
			sizes[c] = acc_count(r, kd + c);
		memcpy(inertia, &r.h_acc[kd + r.k + 1], sizeof(double));
	});
}

static void
api_destroy(void *h)
{
	try
	{
		destroy_run(static_cast<Run *>(h));
	}
	catch (...)
	{
	}
}

static const pgkm_cuda_api the_api = {
	PGKM_CUDA_ABI_VERSION,
	(uint32_t) sizeof(pgkm_cuda_api),
	api_probe,
	api_create,
	api_init_kmeanspp,
	api_set_centroids,
	api_iterate,
	api_assign,
	api_destroy,
};

/* Not part of the ABI: launches + copies of the last pass, for benchmarks. */
extern "C" __attribute__((visibility("default"))) int
pgkm_cuda_debug_launches(void *h)
{
	return h ? static_cast<Run *>(h)->launches : -1;
}

/* Not part of the ABI: the assignment path pick_path() chose, for tests and benchmarks. */
extern "C" __attribute__((visibility("default"))) const char *
pgkm_cuda_debug_path(void *h)
{
	if (!h)
		return "none";
	const Run  *r = static_cast<Run *>(h);
	switch (r->path)
	{
		case PATH_DIRECT:
			return "direct";
		case PATH_DOT:
			return "dot";
		case PATH_TILED:
			return "tiled";
		case PATH_GEMM:
			return r->tf32_terms == 3 ? "gemm-3xtf32" : r->tf32_terms == 1 ? "gemm-tf32x1" : "gemm";
	}
	return "?";
}

extern "C" __attribute__((visibility("default"))) const pgkm_cuda_api *
pgkm_cuda_get_api(void)
{
	return &the_api;
}
