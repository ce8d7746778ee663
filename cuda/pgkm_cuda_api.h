/*
 * pgkm_cuda_api.h: the versioned C interface between the engine and the CUDA
 * plugin (pg_kmeans_cuda.so).
 *
 * The engine dlopen()s the plugin on first GPU use and calls
 * pgkm_cuda_get_api(); nothing here names a CUDA type, so the main extension
 * library builds, loads and runs with no CUDA toolkit, driver or GPU. Bump
 * PGKM_CUDA_ABI_VERSION on any change to a struct or enum here; the loader
 * refuses a plugin whose version differs.
 *
 * Semantics match the CPU engine's, so that the same initial centroids give
 * the same sequence of labels on either engine (each row's label is the fp64
 * argmin of the CPU engine's sqdist_exact, lowest index on exact ties):
 *   create -> (init_kmeanspp | set_centroids) -> (set_method? iterate)* -> assign -> destroy
 * and for kernel k-means (since ABI 3; the kernel_* entry points, NULL in a plugin
 * without it, which the engine then runs on the CPU):
 *   kernel_plan? -> kernel_create -> kernel_build -> (kernel_rows | kernel_pass)* -> kernel_destroy
 * with the semantics of the engine's KernelDevice (src/engine/kernel_device.h).
 * Every function returns 0 on success, or a nonzero PGKM_ERR_* / PGKM_INTERRUPTED
 * status (pgkm_engine.h) with a message in err. No exception escapes.
 * Every function polls interrupt(ctx) between kernel launches and returns
 * PGKM_INTERRUPTED promptly (within ~100 ms of work) when it is nonzero.
 * A handle is used by one thread at a time. The plugin reads no environment
 * variable: everything it does is decided by these arguments and the device.
 */
#ifndef PGKM_CUDA_API_H
#define PGKM_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PGKM_CUDA_ABI_VERSION 6
#define PGKM_CUDA_ENTRY_SYMBOL "pgkm_cuda_get_api"

typedef int (*pgkm_cuda_interrupt_fn) (void *ctx);

/* An assignment path forced by a measurement or a test (config.force_path). */
typedef enum pgkm_cuda_path
{
	PGKM_CUDA_PATH_AUTO = 0,	/* by shape: what the engine always uses */
	PGKM_CUDA_PATH_FUSED = 1,	/* fused distance + argmin + sums kernel; d <= 64 */
	PGKM_CUDA_PATH_TILED = 2,	/* tiled product + argmin, sorted update; d, k <= 1024 */
	PGKM_CUDA_PATH_GEMM = 3		/* cuBLAS product per row tile + argmin kernel */
} pgkm_cuda_path;

/* The product of the GEMM path (config.gemm_product); other paths ignore it. */
typedef enum pgkm_cuda_product
{
	PGKM_CUDA_PRODUCT_AUTO = 0, /* 3xTF32 where d and k are both >= 512, else fp32 */
	PGKM_CUDA_PRODUCT_FP32 = 1,
	PGKM_CUDA_PRODUCT_3XTF32 = 2,	/* three TF32 tensor-core products: fp32-accurate */
	PGKM_CUDA_PRODUCT_TF32 = 3	/* one TF32 product: NOT fp32-accurate; the GPU
								 * tests' negative control, never a product choice */
} pgkm_cuda_product;

/* How the per-cluster sums are accumulated (config.sums). */
typedef enum pgkm_cuda_sums
{
	PGKM_CUDA_SUMS_AUTO = 0,	/* per-block shared-memory sums where they fit */
	PGKM_CUDA_SUMS_GLOBAL = 1	/* one global atomic per element and row: the
								 * reference the private sums are tested against */
} pgkm_cuda_sums;

/*
 * How iterate() assigns (config.method, then set_method); all give the same
 * labels. The pruned methods run on resident rows with d <= 1024 whose plan
 * also holds their state; others run Lloyd's passes (and iterate reports
 * lloyd).
 */
typedef enum pgkm_cuda_method
{
	PGKM_CUDA_METHOD_LLOYD = 0,	/* every row against every centroid */
	PGKM_CUDA_METHOD_HAMERLY = 1,	/* rows whose one lower bound proves their label are skipped */
	PGKM_CUDA_METHOD_YINYANG = 2,	/* Hamerly's test with a lower bound per group of
								 * centroids, and a listed row's proven-far groups
								 * skipped */
	PGKM_CUDA_METHOD_ELKAN = 3,	/* k lower bounds per row: only unproven centroids computed */
	PGKM_CUDA_METHOD_SORT = 4	/* Wu & Hong: each row walks its centroid's ranked neighbours */
} pgkm_cuda_method;

typedef struct pgkm_cuda_config
{
	int64_t		memory_limit;	/* bytes; 0 = what cudaMemGetInfo allows */
	int32_t		deterministic;	/* 1 = fixed-order (run-to-run identical) sums */
	int32_t		device_ordinal; /* -1 = current/default device */
	pgkm_cuda_interrupt_fn interrupt;	/* may be NULL */
	void	   *interrupt_ctx;
	int32_t		method;			/* pgkm_cuda_method */

	/*
	 * Measurement and test switches. 0 in every field is the production
	 * behaviour and the engine never sets anything else; the GPU tests and
	 * bench/gpu_bench.cpp set them to compare variants in one process. A
	 * value out of range, or a forced path the shape cannot take, makes
	 * create() fail with PGKM_ERR_INVALID.
	 */
	int32_t		force_path;		/* pgkm_cuda_path */
	int32_t		gemm_product;	/* pgkm_cuda_product */
	int32_t		sums;			/* pgkm_cuda_sums */
	int32_t		gemm_blocks_per_sm; /* GEMM argmin kernel, 1..8; 0 = 4 */
	int32_t		gemm_tile_mb;	/* GEMM distance tile, 1..1024 MB; 0 = 16 */
} pgkm_cuda_config;

typedef struct pgkm_cuda_iter
{
	double		inertia;		/* sum of squared distances of each point to
								 * the centroid it was assigned to (the
								 * centroids before this update), fp64 */
	int64_t		moved;			/* labels changed vs the previous assignment
								 * (all n on the first iteration) */
	int64_t		distances;		/* distance computations of the assignment;
								 * -1: every row against every centroid */
	int32_t		method;			/* pgkm_cuda_method of the assignment */
} pgkm_cuda_iter;

/* Where kernel k-means keeps K (kernel config.matrix). */
typedef enum pgkm_cuda_kmatrix
{
	PGKM_CUDA_KMATRIX_AUTO = 0,	/* stored when that plan fits the budget, else streamed */
	PGKM_CUDA_KMATRIX_STORED = 1,	/* built once in device memory, read every pass */
	PGKM_CUDA_KMATRIX_STREAMED = 2	/* tiles recomputed from the rows every pass */
} pgkm_cuda_kmatrix;

/* The element type of a stored K (kernel config.precision); streamed tiles are float32. */
typedef enum pgkm_cuda_kprecision
{
	PGKM_CUDA_KPREC_FP32 = 0,
	PGKM_CUDA_KPREC_BF16 = 1,	/* half the bytes, 8 mantissa bits; sums in fp32 per chunk */
	PGKM_CUDA_KPREC_FP16 = 2	/* half the bytes, 11 mantissa bits, |K| < 65504 */
} pgkm_cuda_kprecision;

/* How a stored K's Gram product is taken (kernel config.build). */
typedef enum pgkm_cuda_kbuild
{
	PGKM_CUDA_KBUILD_AUTO = 0,	/* by n / d (plan.cpp's measured threshold) */
	PGKM_CUDA_KBUILD_GEMM = 1,	/* the full n x n product, row panel by row panel */
	PGKM_CUDA_KBUILD_SYRK = 2	/* the upper triangle: SYRK on diagonal blocks, GEMM right of them */
} pgkm_cuda_kbuild;

typedef struct pgkm_cuda_kernel_config
{
	int64_t		memory_limit;	/* bytes; 0 = what cudaMemGetInfo allows */
	int32_t		device_ordinal; /* -1 = current/default device */
	pgkm_cuda_interrupt_fn interrupt;	/* may be NULL */
	void	   *interrupt_ctx;
	int32_t		kernel;			/* pgkm_kernel */
	int32_t		degree;			/* polynomial */
	double		gamma;			/* resolved: > 0 */
	double		coef0;
	int32_t		matrix;			/* pgkm_cuda_kmatrix */
	int32_t		precision;		/* pgkm_cuda_kprecision of a stored K */

	/* Measurement and test switches; 0 = production, as pgkm_cuda_config's. */
	int32_t		build;			/* pgkm_cuda_kbuild */
	int32_t		product;		/* pgkm_cuda_product: AUTO, FP32 or 3XTF32 */
	int32_t		chunk_rows;		/* rows of one cluster summed per block, 8..65536; 0 = by mode */
	int32_t		tile_mb;		/* a streamed tile, 1..1024 MB; 0 = 32 */
} pgkm_cuda_kernel_config;

/* What a kernel run does (kernel_plan, kernel_create). */
typedef struct pgkm_cuda_kernel_plan
{
	int32_t		matrix;			/* STORED or STREAMED */
	int32_t		precision;		/* of a stored K */
	int32_t		build;			/* GEMM or SYRK */
	int32_t		product;		/* FP32 or 3XTF32 */
	int64_t		device_bytes;	/* the run's peak device memory */
	int64_t		stored_bytes;	/* a stored run's peak at this precision (for messages) */
	int64_t		budget;			/* what it was planned against */
} pgkm_cuda_kernel_plan;

/* Where kernel_pass writes (caller-owned, n or k long): see KernelPass. */
typedef struct pgkm_cuda_kernel_pass
{
	int32_t    *labels;			/* n: argmin over the non-empty clusters, lowest on ties */
	double	   *dist2;			/* n: D at that label */
	double	   *norms;			/* k: C_c, 0 for an empty cluster */
	double	   *cross;			/* k: sum over rows newly labelled c of S_ic */
	double		kernel_sum;		/* sum of every entry of K */
	double		device_s;		/* device time of the pass (CUDA events) */
} pgkm_cuda_kernel_pass;

typedef struct pgkm_cuda_api
{
	uint32_t	abi_version;	/* PGKM_CUDA_ABI_VERSION */
	uint32_t	struct_size;	/* sizeof(pgkm_cuda_api) */

	/* 0 when a usable device exists; info gets e.g. "NVIDIA H100 ..., 79 GiB". */
	int			(*probe) (char *info, size_t infolen);

	/*
	 * Prepare a run over x (n x d row-major float32, host memory that stays
	 * valid until destroy). Copies x to the device when it fits the budget
	 * together with k-means++'s sample, else streams it from pinned host
	 * memory on every pass (exact results).
	 */
	int			(*create) (const float *x, int64_t n, int32_t d, int32_t k,
						   const pgkm_cuda_config *cfg, void **handle,
						   char *err, size_t errlen);

	/* Greedy k-means++ on the device, seeded; writes k x d to centroids and
	 * makes them current. Returns the number of distinct centroids found in
	 * *k_found (< k when the data has fewer distinct points). Streamed runs
	 * give the resident run's centroids whenever the budget holds the sample. */
	int			(*init_kmeanspp) (void *handle, uint64_t seed, double *centroids,
								  int32_t *k_found, char *err, size_t errlen);

	/* Make k x d centroids (fp64 host) current. */
	int			(*set_centroids) (void *handle, const double *centroids,
								  char *err, size_t errlen);

	/*
	 * One Lloyd iteration: assign every point to its nearest current centroid,
	 * then replace each non-empty centroid by the mean of its points (fp64
	 * sums); an empty cluster keeps its centroid. Writes the new centroids
	 * (k x d fp64) and sizes (k) to the host.
	 */
	int			(*iterate) (void *handle, pgkm_cuda_iter *out, double *centroids,
							int64_t *sizes, char *err, size_t errlen);

	/*
	 * Final assignment against the current centroids without update: labels
	 * (n), squared distances (n, fp64, computed in the exact form
	 * sum((x-c)^2)), sizes (k) and the total in *inertia.
	 */
	int			(*assign) (void *handle, int32_t *labels, double *dist2,
						   int64_t *sizes, double *inertia, char *err, size_t errlen);

	/* Frees all device and pinned memory of the run; handle may be NULL. */
	void		(*destroy) (void *handle);

	/*
	 * Kernel k-means. kernel_plan says what kernel_create would do for this
	 * shape and config, allocating nothing; PGKM_ERR_NOMEM with the numbers
	 * and a hint when no mode fits the budget.
	 */
	int			(*kernel_plan) (int64_t n, int32_t d, int32_t kmax, const pgkm_cuda_kernel_config *cfg,
								pgkm_cuda_kernel_plan *out, char *err, size_t errlen);

	/*
	 * Prepare a run over x (n x d float32 row-major, valid until
	 * kernel_destroy) with column means mean (d, fp64; the Gram products are
	 * taken on rows centred on their float values, as the CPU device does):
	 * uploads, writes K_ii (n, fp64) to diag and the plan to *plan.
	 */
	int			(*kernel_create) (const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
								  const pgkm_cuda_kernel_config *cfg, double *diag,
								  pgkm_cuda_kernel_plan *plan, void **handle, char *err, size_t errlen);

	/* Builds a stored K (nothing for a streamed one); PGKM_ERR_INVALID when K overflows. */
	int			(*kernel_build) (void *handle, double *seconds, char *err, size_t errlen);

	/* Rows idx[0..count) of K into out (count x n float32). */
	int			(*kernel_rows) (void *handle, const int64_t *idx, int32_t count, float *out,
								char *err, size_t errlen);

	/* One pass from the partition labels (n, in 0..k-1) with its sizes (k), k <= kmax. */
	int			(*kernel_pass) (void *handle, const int32_t *labels, const int64_t *sizes, int32_t k,
								pgkm_cuda_kernel_pass *out, char *err, size_t errlen);

	void		(*kernel_destroy) (void *handle);

	/*
	 * The method of the following iterate() calls (since ABI 6): LLOYD, or
	 * the config.method the run was created with. *runs gets what iterate()
	 * will run: LLOYD where the plan holds no bounds. Lloyd's passes keep no
	 * bounds, so the first bounded pass after them computes every distance.
	 * PGKM_ERR_INVALID for any other method.
	 */
	int			(*set_method) (void *handle, int32_t method, int32_t *runs, char *err, size_t errlen);
} pgkm_cuda_api;

/* The plugin's one exported symbol of the ABI. */
const pgkm_cuda_api *pgkm_cuda_get_api(void);

#ifdef __cplusplus
}
#endif

#endif							/* PGKM_CUDA_API_H */
