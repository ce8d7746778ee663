/*
 * api.cu: the plugin's C ABI (pgkm_cuda_api.h): Lloyd's entry points, run
 * creation from its parts (settings, device, plan, buffers, data), and the
 * table of every entry point (kernel k-means': kernel_api.cu).
 *
 * CUDA is touched only inside these entry points (never at dlopen), so the
 * runtime creates the process's one context lazily on the first call.
 * Every entry point catches everything and returns a status + message.
 */
#include "guarded.h"
#include "kernel_run.cuh"
#include "run.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

namespace pgkm_cuda
{

void
fail_cuda(cudaError_t e, const char *what, const char *file, int line)
{
	const char *base = strrchr(file, '/');
	cudaGetLastError();			/* clear a non-sticky error */
	fail(e == cudaErrorMemoryAllocation ? PGKM_ERR_NOMEM : PGKM_ERR_GPU, "%s: %s (%s:%d)", cudaGetErrorString(e), what,
		 base ? base + 1 : file, line);
}

void
fail_blas(cublasStatus_t e, const char *what)
{
	fail(e == CUBLAS_STATUS_ALLOC_FAILED ? PGKM_ERR_NOMEM : PGKM_ERR_GPU, "cuBLAS error %d in %s", (int) e, what);
}

DeviceLimits
device_limits(int dev)
{
	DeviceLimits l;
	CK(cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, dev));
	CK(cudaDeviceGetAttribute(&l.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
	CK(cudaDeviceGetAttribute(&l.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	return l;
}

/* min(memory_limit, free device memory - 256 MB for cuBLAS and context growth). */
int64_t
device_budget(int64_t memory_limit)
{
	size_t		freeb = 0, totalb = 0;
	CK(cudaMemGetInfo(&freeb, &totalb));
	int64_t		avail = (int64_t) freeb - (256LL << 20);
	return memory_limit > 0 ? std::min<int64_t>(memory_limit, avail) : avail;
}

static Run *
create_run(const float *x, int64_t n, int32_t d, int32_t k, const pgkm_cuda_config *cfg)
{
	if (!x || n < 1 || d < 1 || k < 1 || k > n)
		fail(PGKM_ERR_INVALID, "invalid shape for a GPU run");
	std::unique_ptr<Run> r(new Run);
	r->x = x;
	r->n = n;
	r->d = d;
	r->k = k;
	r->settings = settings_from_config(cfg);
	if (cfg)
	{
		r->interrupt = cfg->interrupt;
		r->interrupt_ctx = cfg->interrupt_ctx;
	}
	r->device = r->settings.device_ordinal >= 0 ? r->settings.device_ordinal : 0;
	CK(cudaSetDevice(r->device));
	r->limits = device_limits(r->device);
	r->plan = make_plan(n, d, k, r->settings, r->limits, device_budget(r->settings.memory_limit));
	allocate_run_buffers(*r);
	prepare_data(*r);
	return r.release();
}

static Run &
run_of(void *h)
{
	if (!h)
		fail(PGKM_ERR_INVALID, "NULL argument");
	Run		   &r = *static_cast<Run *>(h);
	CK(cudaSetDevice(r.device));
	return r;
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
			fail(PGKM_ERR_GPU_UNAVAILABLE, "no CUDA device");
		cudaDeviceProp p;
		CK(cudaGetDeviceProperties(&p, 0));
		if (p.major < 8)
			fail(PGKM_ERR_GPU_UNAVAILABLE, "%s is older than compute capability 8.0", p.name);
		/* a fat binary without this device's architecture fails here */
		int		   *dp = nullptr, hv = 0;
		CK(cudaMalloc(&dp, sizeof(int)));
		probe_kernel<<<1, 1>>>(dp);
		cudaError_t e = cudaGetLastError();
		if (e == cudaSuccess)
			e = cudaMemcpy(&hv, dp, sizeof(int), cudaMemcpyDeviceToHost);
		cudaFree(dp);
		if (e != cudaSuccess || hv != 42)
			fail(PGKM_ERR_GPU_UNAVAILABLE, "test kernel failed on %s: %s", p.name, cudaGetErrorString(e));
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
			fail(PGKM_ERR_INVALID, "handle is NULL");
		*handle = create_run(x, n, d, k, cfg);
	});
}

static int
api_init_kmeanspp(void *h, uint64_t seed, double *centroids, int32_t *k_found, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		Run		   &r = run_of(h);
		if (!centroids || !k_found)
			fail(PGKM_ERR_INVALID, "NULL argument");
		*k_found = kmeanspp(r, seed, centroids);
		r.bounds_valid = false;
	});
}

static int
api_set_centroids(void *h, const double *centroids, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		if (!h || !centroids)
			fail(PGKM_ERR_INVALID, "NULL argument");
		Run		   &r = *static_cast<Run *>(h);
		for (size_t i = 0; i < (size_t) r.k * r.d; i++)
			if (!std::isfinite(centroids[i]))
				fail(PGKM_ERR_INVALID, "centroids contain NaN or infinity");
		make_current(r, centroids);
	});
}

static int
api_iterate(void *h, pgkm_cuda_iter *out, double *centroids, int64_t *sizes, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		Run		   &r = run_of(h);
		if (!out || !centroids || !sizes)
			fail(PGKM_ERR_INVALID, "NULL argument");
		if (r.lloyd_passes || !bounded_plan(r.plan))
		{
			run_pass(r, nullptr, nullptr);
			r.distances = -1;
			r.pruned = false;
			r.bounds_valid = false;	/* Lloyd's pass does not keep them */
		}
		else if (r.plan.hamerly)
			run_hamerly_pass(r);
		else if (r.plan.elkan)
			run_elkan_pass(r);
		else
			run_sort_pass(r);
		read_update(r, out, centroids, sizes);
		out->distances = r.distances;
		out->method = r.pruned ? r.pruned_method : PGKM_CUDA_METHOD_LLOYD;
	});
}

static int
api_assign(void *h, int32_t *labels, double *dist2, int64_t *sizes, double *inertia, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		Run		   &r = run_of(h);
		if (!labels || !dist2 || !sizes || !inertia)
			fail(PGKM_ERR_INVALID, "NULL argument");
		run_pass(r, labels, dist2);
		r.bounds_valid = false;	/* Hamerly's bounds are not kept by Lloyd's pass */
		read_sizes(r, sizes, inertia);
	});
}

static int
api_set_method(void *h, int32_t method, int32_t *runs, char *err, size_t errlen)
{
	return guarded(err, errlen, [&] {
		Run		   &r = run_of(h);
		if (!runs)
			fail(PGKM_ERR_INVALID, "NULL argument");
		if (method != PGKM_CUDA_METHOD_LLOYD && method != r.settings.method)
			fail(PGKM_ERR_INVALID, "GPU method %d: this run was created for method %d and Lloyd's passes",
				 (int) method, (int) r.settings.method);
		r.lloyd_passes = method == PGKM_CUDA_METHOD_LLOYD;
		*runs = r.lloyd_passes || !bounded_plan(r.plan) ? PGKM_CUDA_METHOD_LLOYD : planned_method(r.plan);
	});
}

static void
api_destroy(void *h)
{
	try
	{
		delete static_cast<Run *>(h);
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
	kapi_plan,
	kapi_create,
	kapi_build,
	kapi_rows,
	kapi_pass,
	kapi_destroy,
	api_set_method,
};

extern "C" __attribute__((visibility("default"))) const pgkm_cuda_api *
pgkm_cuda_get_api(void)
{
	return &the_api;
}

/*
 * Not part of the ABI: what a run decided, for the GPU tests and benchmarks
 * (the engine never calls them).
 */

/* Kernel launches + copies of the last pass. */
extern "C" __attribute__((visibility("default"))) int
pgkm_cuda_debug_launches(void *h)
{
	return h ? static_cast<Run *>(h)->launches : -1;
}

/* The assignment path (and GEMM product) the plan chose. */
extern "C" __attribute__((visibility("default"))) const char *
pgkm_cuda_debug_path(void *h)
{
	if (!h)
		return "none";
	const Plan &p = static_cast<Run *>(h)->plan;
	switch (p.path)
	{
		case PATH_DIRECT:
			return "direct";
		case PATH_DOT:
			return "dot";
		case PATH_TILED:
			return "tiled";
		case PATH_GEMM:
			return p.product == PRODUCT_3XTF32 ? "gemm-3xtf32" : p.product == PRODUCT_TF32 ? "gemm-tf32x1" : "gemm";
	}
	return "?";
}

/* 1 when the rows are streamed from host memory on every pass, 0 when resident. */
extern "C" __attribute__((visibility("default"))) int
pgkm_cuda_debug_streamed(void *h)
{
	return h ? !static_cast<Run *>(h)->plan.resident : -1;
}

/* Rows the last pass decided in fp64 (their float runner-up was within the label bound). */
extern "C" __attribute__((visibility("default"))) int64_t
pgkm_cuda_debug_decided(void *h)
{
	return h ? static_cast<Run *>(h)->decided : -1;
}

/* 1 when iterate() prunes with Hamerly's bounds (config.method and the plan allow it). */
extern "C" __attribute__((visibility("default"))) int
pgkm_cuda_debug_hamerly(void *h)
{
	return h ? static_cast<Run *>(h)->plan.hamerly : -1;
}

/* The pgkm_cuda_method iterate() prunes with (the plan allows it), 0 for Lloyd's passes. */
extern "C" __attribute__((visibility("default"))) int
pgkm_cuda_debug_method(void *h)
{
	if (!h)
		return -1;
	return planned_method(static_cast<Run *>(h)->plan);
}

/* Rows the last Hamerly pass labelled against every centroid (of which pgkm_cuda_debug_decided in fp64). */
extern "C" __attribute__((visibility("default"))) int64_t
pgkm_cuda_debug_listed(void *h)
{
	return h ? static_cast<Run *>(h)->listed : -1;
}

/* Sample rows of the last k-means++ (0 before one ran). */
extern "C" __attribute__((visibility("default"))) int64_t
pgkm_cuda_debug_kpp_rows(void *h)
{
	return h ? static_cast<Run *>(h)->kpp_rows_used : -1;
}
