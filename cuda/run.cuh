/*
 * run.cuh: the state of one GPU run (an ABI handle), its device resources,
 * and the functions of the plugin's translation units that act on it. No
 * relocatable device code: each kernel is launched from the file that
 * defines it (launch.cuh lists the launchers).
 */
#ifndef PGKM_CUDA_RUN_CUH
#define PGKM_CUDA_RUN_CUH

#include "failure.h"
#include "label_bound.h"
#include "pgkm_cuda_api.h"
#include "plan.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace pgkm_cuda
{

[[noreturn]] void fail_cuda(cudaError_t e, const char *what, const char *file, int line);
[[noreturn]] void fail_blas(cublasStatus_t e, const char *what);
#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) ::pgkm_cuda::fail_cuda(e_, #call, __FILE__, __LINE__); } while (0)
#define CKLAUNCH(what) CK(cudaGetLastError())

/*
 * Device memory (counted against the budget), pinned host memory, streams,
 * events and the cuBLAS handle of one run; the destructor releases whatever
 * was created (buffers.cu).
 */
struct Buffers
{
	int64_t		budget = 0;		/* bytes the run may hold (plan.budget) */
	size_t		allocated = 0;	/* bytes it holds */

	float	   *d_x = nullptr;	/* resident rows as stored (3xTF32: their TF32 part) */
	float	   *d_xlo = nullptr;	/* 3xTF32: x - tf32(x), resident */
	float	   *d_chunk[2] = {nullptr, nullptr};	/* streamed rows, double-buffered */
	float	   *d_chunk_lo[2] = {nullptr, nullptr};	/* 3xTF32: their low parts */
	int32_t    *d_labels = nullptr;
	float	   *d_cf = nullptr;	/* centroids in the path's layout */
	float	   *d_cf_lo = nullptr;	/* 3xTF32: c' - tf32(c') */
	float	   *d_bias = nullptr;	/* ||c'||^2 (GEMM: + 2 mu.c') */
	float	   *d_mu = nullptr; /* centring point, fp32 (GEMM: the rows' exact shift) */
	double	   *d_c64 = nullptr;	/* fp64 centroids */
	unsigned long long *d_acc = nullptr;	/* k*d sums, k counts, moved, inertia, rows decided in fp64 */
	double	   *d_partials = nullptr;	/* inertia, one per block and launch */
	float	   *d_tile = nullptr;	/* GEMM: -2 x'.c' of one row tile */
	double	   *d_dist2 = nullptr;	/* one chunk's distances, for assign() */
	unsigned int *d_colmax = nullptr;	/* d: each column's max |x| as float bits (create) */
	double	   *d_qscale = nullptr;	/* d: fixed-point scale of each column's sums */
	float	   *d_norms = nullptr;	/* GEMM: per row ||x'||^2 (resident: all rows; streamed: a chunk's) */
	unsigned int *d_colrange = nullptr;	/* GEMM: per column min and max (create) */
	int32_t    *d_list = nullptr;	/* TILED: a chunk's rows left to decide in fp64 */
	unsigned long long *d_list_mask = nullptr;	/* TILED, k <= 64: their candidates (in d_list's allocation) */
	unsigned int *d_list_count = nullptr;	/* TILED: one count per chunk, zeroed per pass */
	double	   *d_lower = nullptr;	/* Hamerly: per row a lower bound on its distance to every other centroid */
	int32_t    *d_open = nullptr;	/* Hamerly: the rows whose label is not proven, this pass */
	double	   *d_cprev = nullptr;	/* Hamerly: the centroids d_lower and the labels refer to */
	double	   *d_geom = nullptr;	/* Hamerly: k drifts, then k half-distances to the nearest other centroid */
	unsigned int *d_open_count = nullptr;	/* Hamerly: d_open's length, then d_ties' */
	float	   *d_cfh = nullptr;	/* Hamerly: float(c), k x d */
	int32_t    *d_ties = nullptr;	/* Hamerly: listed rows its float level left to fp64 */
	double	   *d_glower = nullptr;	/* Yinyang: t x n group lower bounds (d_lower: the rows' upper bounds) */
	int32_t    *d_perm = nullptr;	/* Yinyang: centroids in group order (k), then each one's position (k) */
	int32_t    *d_sort_keys[2] = {};	/* Yinyang: the listed rows' labels' positions, and the sort's other buffer */
	int32_t    *d_open_alt = nullptr;	/* Yinyang: the sort's other list */
	float	   *d_lbound = nullptr;	/* Elkan: n x k lower bounds, float rounded down */
	float	   *d_pairs = nullptr;	/* Elkan, sort: k x k inter-centroid lower bounds (sort: the keys' buffer) */
	int32_t    *d_pair_idx = nullptr;	/* sort: their centroids (the values' buffer) */
	float	   *d_keys2 = nullptr;	/* sort: the segmented sort's other key buffer */
	int32_t    *d_idx2 = nullptr;	/* sort: and value buffer */
	int32_t    *d_offsets = nullptr;	/* sort: k + 1 row offsets a k */
	void	   *d_sort_temp = nullptr;	/* CUB's scratch: Yinyang's radix sort (yinyang_sort_bytes) or sort's segmented one */
	size_t		sort_temp_bytes = 0;	/* sort: its size */

	cudaStream_t s_comp = nullptr, s_copy = nullptr;
	cudaEvent_t ev_copy[2] = {nullptr, nullptr}, ev_done[2] = {nullptr, nullptr};
	cudaEvent_t ev_upload = nullptr;	/* the centroid upload's copies out of the staging */
	cublasHandle_t blas = nullptr;

	unsigned long long *h_acc = nullptr;	/* pinned mirror of d_acc */
	float	   *h_cstage = nullptr; /* pinned staging: centroids, bias, 3xTF32 low parts */
	double	   *h_c64 = nullptr;	/* pinned staging: fp64 centroids */
	const float *registered = nullptr;	/* caller's rows pinned with cudaHostRegister */

	Buffers() = default;
	Buffers(const Buffers &) = delete;
	Buffers &operator=(const Buffers &) = delete;
	~Buffers();

	/* Device allocation counted against the budget (a sizing bug if it does not fit). */
	void	   *alloc(size_t bytes);
	void		release(void *p, size_t bytes);
};

struct Run
{
	/* shape and settings */
	const float *x = nullptr;	/* caller's rows, n x d */
	int64_t		n = 0;
	int32_t		d = 0, k = 0;
	Settings	settings;
	pgkm_cuda_interrupt_fn interrupt = nullptr;
	void	   *interrupt_ctx = nullptr;
	int			device = 0;
	DeviceLimits limits;
	Plan		plan;
	Buffers		buf;

	/* host state */
	std::vector<double> cent;	/* k x d current centroids */
	std::vector<double> mu;		/* d: centring point (sample mean, fp32 values; GEMM: exact_shift) */
	std::vector<float> muf;		/* the same, as fp32 */
	LabelTest	test {};		/* the label test of the current centroids (label_bound.h) */
	int64_t		decided = 0;	/* rows the last pass decided in fp64 */
	std::vector<double> qscale;	/* d: fixed-point scale of each column's sums */
	bool		cent_dirty = true;	/* cent not yet uploaded */
	int			launches = 0;	/* kernel launches + copies of the last pass */
	int64_t		kpp_rows_used = 0;	/* sample rows of the last k-means++ */
	bool		bounds_valid = false;	/* Hamerly: d_lower, d_cprev and the labels agree */
	bool		lloyd_passes = false;	/* set_method(LLOYD): Lloyd's passes though the plan holds bounds */
	int64_t		distances = -1;	/* distance computations of the last iteration (-1: n x k) */
	int64_t		listed = 0;		/* Hamerly: rows the last pass labelled against every centroid */
	bool		pruned = false; /* the last iteration ran a bounded method */
	int32_t		pruned_method = PGKM_CUDA_METHOD_LLOYD;	/* which (pgkm_cuda_method) */
	bool		groups_formed = false;	/* Yinyang: d_perm holds the groups */
};

/*
 * buffers.cu: every buffer of the plan. A streamed run lends the buffers each
 * pass fills afresh (plan.loan_bytes) to init; ensure_pass_buffers takes them
 * back before a pass.
 */
void		allocate_run_buffers(Run &r);
void		lend_pass_buffers(Run &r);
void		ensure_pass_buffers(Run &r);

/* data.cu: pin the rows, centring point, upload or scan, fixed-point scale, first centroids. */
void		prepare_data(Run &r);

/* pass.cu: a pass's start (buffers, centroids, zeroed sums); one Lloyd pass (labels/dist2 to the host
 * when given), and its results. */
void		begin_pass(Run &r);
void		run_pass(Run &r, int32_t *labels_out, double *dist2_out);
void		read_update(Run &r, pgkm_cuda_iter *out, double *centroids, int64_t *sizes);
void		read_sizes(const Run &r, int64_t *sizes, double *inertia);
void		make_current(Run &r, const double *centroids);
void		check_interrupt(Run &r);

/* pass.cu: the centroids in the path's layout, when changed. */
void		upload_centroids(Run &r);

/* hamerly.cu: one pass with Hamerly's bounds (plan.hamerly; Yinyang's with plan.yinyang): labels, sums, inertia as run_pass's. */
void		run_hamerly_pass(Run &r);
/* elkan.cu: the same with Elkan's bounds (plan.elkan). */
void		run_elkan_pass(Run &r);
/* sort.cu: the same with Wu & Hong's ranked centroids (plan.sort). */
void		run_sort_pass(Run &r);
/* sort.cu: its buffers (plan.cpp's sort_bytes, in its order), from allocate_run_buffers. */
void		allocate_sort_buffers(Run &r);

/* kmeanspp.cu: greedy k-means++ on a sample; returns the distinct centroids found. */
int32_t		kmeanspp(Run &r, uint64_t seed, double *centroids);

}							/* namespace pgkm_cuda */

#endif
