/*
 * kernel_api.cu: the kernel k-means entry points of the ABI
 * (pgkm_cuda_api.h, ABI 3): the plan, run creation from its parts
 * (settings, device, plan, buffers, rows), build, rows, pass, destroy.
 * Every entry point runs inside guarded(): no exception leaves the plugin.
 */
#include "guarded.h"
#include "kernel_run.cuh"

#include <cmath>
#include <memory>

namespace pgkm_cuda
{

static void
fill_plan(const KernelPlan &p, pgkm_cuda_kernel_plan *out)
{
	if (!out)
		return;
	out->matrix = p.stored ? PGKM_CUDA_KMATRIX_STORED : PGKM_CUDA_KMATRIX_STREAMED;
	out->precision = p.precision;
	out->build = p.syrk ? PGKM_CUDA_KBUILD_SYRK : PGKM_CUDA_KBUILD_GEMM;
	out->product = p.tf32x3 ? PGKM_CUDA_PRODUCT_3XTF32 : PGKM_CUDA_PRODUCT_FP32;
	out->device_bytes = p.device_bytes;
	out->stored_bytes = p.stored_bytes;
	out->budget = p.budget;
}

static KernelPlan
plan_for(int64_t n, int32_t d, int32_t kmax, const KernelSettings &s, int *device, DeviceLimits *limits)
{
	*device = s.device_ordinal >= 0 ? s.device_ordinal : 0;
	CK(cudaSetDevice(*device));
	*limits = device_limits(*device);
	return make_kernel_plan(n, d, kmax, s, *limits, device_budget(s.memory_limit));
}

/* Every buffer of the plan, in kernel_bytes' order; pinned staging; stream, events, cuBLAS. */
static void
allocate(KRun &r)
{
	const KernelPlan &p = r.plan;
	const KernelBytes b = kernel_bytes(p);
	DeviceArena &m = r.mem;
	m.budget = p.budget;
	r.d_mean = m.alloc<double>(b.mean);
	r.d_x = m.alloc<float>(b.x);
	r.d_xc = m.alloc<float>(b.xc);
	r.d_xlo = m.alloc<float>(b.xlo);
	r.d_xs = m.alloc<float>(b.xs);
	double	   *stats = m.alloc<double>(b.stats);
	r.d_diag = stats;
	r.d_cnorm = stats + r.n;
	r.d_coff = stats + 2 * r.n;
	r.d_labels = m.alloc<int32_t>(b.labels);
	r.d_perm = m.alloc<int32_t>(b.perm);
	r.d_chunks = m.alloc<KChunk>(b.chunks);
	r.d_S = m.alloc<double>(b.S);
	r.d_partial = m.alloc<double>(b.partial);
	r.d_rowsum = m.alloc<double>(b.rowsum);
	r.d_norms = m.alloc<double>(b.norms);
	r.d_clusters = m.alloc<KCluster>(b.clusters);
	r.d_out_labels = m.alloc<int32_t>(b.out_labels);
	r.d_dist2 = m.alloc<double>(b.dist2);
	r.d_w = m.alloc<double>(b.w);
	r.d_flag = m.alloc<unsigned int>(b.flag);
	r.d_ksum = reinterpret_cast<double *>(reinterpret_cast<char *>(r.d_flag) + 8);
	r.d_rows = m.alloc<float>(b.rows);
	r.d_K = m.alloc_bytes(b.K);
	r.d_tile = m.alloc<float>(b.tile);
	/* the build's panel (b.panel) is allocated by the build and freed after it */

	CK(cudaStreamCreateWithFlags(&r.st, cudaStreamNonBlocking));
	for (cudaEvent_t *e : {&r.ev_throttle[0], &r.ev_throttle[1]})
		CK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
	CK(cudaEventCreate(&r.ev_begin));
	CK(cudaEventCreate(&r.ev_end));
	cublasStatus_t bs = cublasCreate(&r.blas);
	if (bs != CUBLAS_STATUS_SUCCESS)
		fail_blas(bs, "cublasCreate");
	cublasSetStream(r.blas, r.st);
	/* TF32 only as 3xTF32, whose parts the tensor cores take unchanged */
	cublasSetMathMode(r.blas, p.tf32x3 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
	CK(cudaMemsetAsync(r.d_flag, 0, (size_t) b.flag, r.st));

	const int64_t n = r.n;
	CK(cudaMallocHost((void **) &r.h_in, (size_t) n * 8));
	CK(cudaMallocHost((void **) &r.h_chunks, (size_t) p.max_chunks * sizeof(KChunk)));
	CK(cudaMallocHost((void **) &r.h_clusters, (size_t) r.kmax * sizeof(KCluster)));
	CK(cudaMallocHost((void **) &r.h_out_labels, (size_t) n * 4));
	CK(cudaMallocHost((void **) &r.h_out, (size_t) (2 * n + r.kmax + 1) * 8));
}

static KRun *
create_run(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
		   const pgkm_cuda_kernel_config *cfg, double *diag)
{
	if (!x || !mean || !diag || n < 1 || d < 1 || kmax < 1 || kmax > n || n > INT32_MAX)
		fail(PGKM_ERR_INVALID, "invalid shape for a GPU kernel run");
	std::unique_ptr<KRun> r(new KRun);
	r->x = x;
	r->n = n;
	r->d = d;
	r->kmax = kmax;
	r->s = kernel_settings_from_config(cfg);
	r->interrupt = cfg->interrupt;
	r->interrupt_ctx = cfg->interrupt_ctx;
	r->plan = plan_for(n, d, kmax, r->s, &r->device, &r->limits);
	r->mean.assign(mean, mean + d);
	r->meanf.assign(mean, mean + d);
	allocate(*r);

	KMapArgs   &m = r->map;
	m.kind = r->s.kernel;
	m.degree = r->s.degree;
	m.gamma = r->s.gamma;
	m.coef0 = r->s.coef0;
	m.mm = 0;
	for (int j = 0; j < d; j++)
		m.mm += r->mean[j] * r->mean[j];
	m.near = 2.0 * (d + 2) * 0x1p-24;	/* the CPU device's bound (kernel_cpu.cpp) */
	m.diag = r->d_diag;
	m.cnorm = r->d_cnorm;
	m.coff = r->d_coff;
	m.x = r->d_x;
	m.d = d;
	m.flag = r->d_flag;
	kernel_prepare(*r, diag);
	for (int64_t i = 0; i < n; i++)
		if (!std::isfinite(diag[i]))
			fail(PGKM_ERR_INVALID, "the kernel overflows float32 on this data");
	return r.release();
}

static KRun &
krun_of(void *h)
{
	if (!h)
		fail(PGKM_ERR_INVALID, "NULL argument");
	KRun	   &r = *static_cast<KRun *>(h);
	CK(cudaSetDevice(r.device));
	return r;
}

int
kapi_plan(int64_t n, int32_t d, int32_t kmax, const pgkm_cuda_kernel_config *cfg, pgkm_cuda_kernel_plan *out,
		  char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		KernelSettings s = kernel_settings_from_config(cfg);
		int			device;
		DeviceLimits limits;
		fill_plan(plan_for(n, d, kmax, s, &device, &limits), out);
	});
}

int
kapi_create(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
			const pgkm_cuda_kernel_config *cfg, double *diag, pgkm_cuda_kernel_plan *plan, void **handle,
			char *err, size_t errlen)
{
	if (handle)
		*handle = nullptr;
	return guarded(err, errlen, [&] {
		if (!handle)
			fail(PGKM_ERR_INVALID, "handle is NULL");
		KRun	   *r = create_run(x, n, d, kmax, mean, cfg, diag);
		fill_plan(r->plan, plan);
		*handle = r;
	});
}

int
kapi_build(void *h, double *seconds, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		KRun	   &r = krun_of(h);
		kernel_build_matrix(r);
		if (seconds)
			*seconds = r.build_s;
	});
}

int
kapi_rows(void *h, const int64_t *idx, int32_t count, float *out, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		KRun	   &r = krun_of(h);
		if (!idx || !out || count < 0)
			fail(PGKM_ERR_INVALID, "NULL argument");
		if (!r.built)
			fail(PGKM_ERR_INVALID, "kernel rows before build");
		kernel_rows(r, idx, count, out);
	});
}

int
kapi_pass(void *h, const int32_t *labels, const int64_t *sizes, int32_t k, pgkm_cuda_kernel_pass *out, char *err,
		  size_t errlen)
{
	return guarded(err, errlen, [&] {
		KRun	   &r = krun_of(h);
		if (!labels || !sizes || !out || !out->labels || !out->dist2 || !out->norms || !out->cross)
			fail(PGKM_ERR_INVALID, "NULL argument");
		kernel_pass(r, labels, sizes, k, out);
	});
}

void
kapi_destroy(void *h)
{
	try
	{
		delete static_cast<KRun *>(h);
	}
	catch (...)
	{
	}
}

}							/* namespace pgkm_cuda */
