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
 *   create -> (init_kmeanspp | set_centroids) -> iterate* -> assign -> destroy
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

#define PGKM_CUDA_ABI_VERSION 2
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

typedef struct pgkm_cuda_config
{
	int64_t		memory_limit;	/* bytes; 0 = what cudaMemGetInfo allows */
	int32_t		deterministic;	/* 1 = fixed-order (run-to-run identical) sums */
	int32_t		device_ordinal; /* -1 = current/default device */
	pgkm_cuda_interrupt_fn interrupt;	/* may be NULL */
	void	   *interrupt_ctx;

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
} pgkm_cuda_iter;

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
} pgkm_cuda_api;

/* The plugin's one exported symbol of the ABI. */
const pgkm_cuda_api *pgkm_cuda_get_api(void);

#ifdef __cplusplus
}
#endif

#endif							/* PGKM_CUDA_API_H */
