/*
 * kernel_run.cuh: the state of one kernel k-means run (an ABI handle made by
 * kernel_create), its device memory, and the functions of the kernel
 * translation units (kernel_build.cu, kernel_pass.cu) that act on it.
 */
#ifndef PGKM_CUDA_KERNEL_RUN_CUH
#define PGKM_CUDA_KERNEL_RUN_CUH

#include "device/kernel_map.cuh"
#include "kernel_plan.h"
#include "run.cuh"

#include <cstdint>
#include <utility>
#include <vector>

namespace pgkm_cuda
{

/* Rows [start, start + len) of the label-sorted order, all of cluster `cluster`. */
struct KChunk
{
	int64_t		start;
	int32_t		len;
	int32_t		cluster;
};

/* A cluster of the pass's partition: its rows in sorted order and its chunks. */
struct KCluster
{
	int64_t		size;
	int64_t		offset;			/* first sorted position */
	int32_t		first_chunk;
	int32_t		nchunks;
	double		two_over;		/* 2 / size, 0 when empty (the CPU device's value) */
};

/* Device allocations counted against the budget; what is live is freed at destruction. */
struct DeviceArena
{
	int64_t		budget = 0;
	int64_t		allocated = 0;
	std::vector<std::pair<void *, int64_t>> live;

	DeviceArena() = default;
	DeviceArena(const DeviceArena &) = delete;
	DeviceArena &operator=(const DeviceArena &) = delete;
	~DeviceArena();
	/* bytes 0: nullptr, nothing allocated */
	template <typename T>
	T		   *alloc(int64_t bytes) { return static_cast<T *>(alloc_bytes(bytes)); }
	void	   *alloc_bytes(int64_t bytes);
	void		release(void *p);
};

struct KRun
{
	const float *x = nullptr;	/* caller's rows, n x d */
	int64_t		n = 0;
	int			d = 0, kmax = 0;
	KernelSettings s;
	KernelPlan	plan;
	DeviceLimits limits;
	int			device = 0;
	pgkm_cuda_interrupt_fn interrupt = nullptr;
	void	   *interrupt_ctx = nullptr;
	std::vector<double> mean;	/* d, fp64 */
	std::vector<float> meanf;	/* d, the centring point the products use */
	KMapArgs	map {};			/* device pointers filled at create */

	DeviceArena mem;
	cudaStream_t st = nullptr;
	cudaEvent_t ev_begin = nullptr, ev_end = nullptr, ev_throttle[2] = {nullptr, nullptr};
	cublasHandle_t blas = nullptr;

	/* device buffers (kernel_plan.cpp counts each) */
	double	   *d_mean = nullptr;	/* d fp64 column means, then d floats: the centring point */
	float	   *d_x = nullptr;	/* raw rows, n x d */
	float	   *d_xc = nullptr; /* centred rows, n x xw (zero padded); 3xTF32: the TF32 part, streamed [hi lo hi] */
	float	   *d_xlo = nullptr;	/* stored 3xTF32: the remainder */
	float	   *d_xs = nullptr; /* streamed: d_xc's rows in label-sorted order, as [hi hi lo] for 3xTF32 */
	double	   *d_diag = nullptr, *d_cnorm = nullptr, *d_coff = nullptr;
	int32_t    *d_labels = nullptr, *d_perm = nullptr;
	KChunk	   *d_chunks = nullptr;
	KCluster   *d_clusters = nullptr;
	double	   *d_S = nullptr;	/* k x n: S[c * n + i] */
	double	   *d_partial = nullptr;	/* max_chunks x partial_cols */
	double	   *d_rowsum = nullptr, *d_norms = nullptr, *d_dist2 = nullptr, *d_w = nullptr;
	int32_t    *d_out_labels = nullptr;
	unsigned int *d_flag = nullptr;	/* bit 0: a K value is not finite; bit 1: beyond float16 */
	double	   *d_ksum = nullptr;
	float	   *d_rows = nullptr;	/* rows() staging */
	void	   *d_K = nullptr;	/* stored: n x ld at plan.precision */
	float	   *d_tile = nullptr;	/* streamed: tile_rows x tile_cols Gram entries */

	/* pinned host staging */
	int32_t    *h_in = nullptr;	/* labels n, perm n */
	KChunk	   *h_chunks = nullptr;
	KCluster   *h_clusters = nullptr;
	int32_t    *h_out_labels = nullptr;
	double	   *h_out = nullptr;	/* dist2 n, w n, norms kmax, ksum 1 */

	double		mu = 0;			/* a half-precision K stores K - mu (kernel_build.cu), fp32 K mu = 0 */
	double		build_s = 0;
	bool		built = false;

	KRun() = default;
	KRun(const KRun &) = delete;
	KRun &operator=(const KRun &) = delete;
	~KRun();
};

/* kernel_build.cu */
void		kernel_prepare(KRun &r, double *diag_out);	/* upload, centre, row statistics, diag */
void		kernel_build_matrix(KRun &r);	/* stored: K by panels; streamed: nothing */
void		kernel_rows(KRun &r, const int64_t *idx, int32_t count, float *out);
void		kernel_check_flag(KRun &r);	/* Failure {PGKM_ERR_INVALID} when a K value overflowed */
void		kernel_poll(KRun &r);		/* Failure {PGKM_INTERRUPTED} when the caller cancels */

/* kernel_pass.cu */
void		kernel_pass(KRun &r, const int32_t *labels, const int64_t *sizes, int32_t k,
						pgkm_cuda_kernel_pass *out);

/* api.cu: min(memory_limit, free device memory - 256 MB); the device's limits. */
int64_t		device_budget(int64_t memory_limit);
DeviceLimits device_limits(int dev);

/* kernel_api.cu: the kernel entry points of the ABI (api.cu puts them in its table). */
int			kapi_plan(int64_t n, int32_t d, int32_t kmax, const pgkm_cuda_kernel_config *cfg,
					  pgkm_cuda_kernel_plan *out, char *err, size_t errlen);
int			kapi_create(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
						const pgkm_cuda_kernel_config *cfg, double *diag, pgkm_cuda_kernel_plan *plan,
						void **handle, char *err, size_t errlen);
int			kapi_build(void *h, double *seconds, char *err, size_t errlen);
int			kapi_rows(void *h, const int64_t *idx, int32_t count, float *out, char *err, size_t errlen);
int			kapi_pass(void *h, const int32_t *labels, const int64_t *sizes, int32_t k, pgkm_cuda_kernel_pass *out,
					  char *err, size_t errlen);
void		kapi_destroy(void *h);

}							/* namespace pgkm_cuda */

#endif
