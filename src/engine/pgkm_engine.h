/*
 * pgkm_engine.h: the k-means engine's public interface.
 *
 * Plain C types only, so that the PostgreSQL glue (the .cpp files in src/) can call it with
 * nothing but plain data on its stack, and so that no PostgreSQL or CUDA type
 * ever appears here. Every function is noexcept in effect: the implementation
 * catches all C++ exceptions and turns them into a status plus a message in
 * the caller's buffer.
 *
 * A run is driven step by step: pgkm_run_create() validates and prepares,
 * each pgkm_run_step() does one bounded unit of work (one initialisation or
 * one Lloyd iteration) and returns, so that the caller can check for
 * interrupts, report progress, and ereport between steps with no C++ object
 * live on its stack. The glue frees a run from a memory-context reset
 * callback, so an ERROR (cancel, statement_timeout) anywhere still releases
 * all host and GPU memory.
 */
#ifndef PGKM_ENGINE_H
#define PGKM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pgkm_status
{
	PGKM_OK = 0,				/* step done, more to do */
	PGKM_DONE = 1,				/* run finished; result is ready */
	PGKM_INTERRUPTED = 2,		/* the interrupt callback asked to stop */
	PGKM_ERR_INVALID = 3,		/* bad argument (message says which) */
	PGKM_ERR_NOMEM = 4,			/* host or device allocation failed */
	PGKM_ERR_GPU_UNAVAILABLE = 5,	/* device=gpu but no usable GPU engine */
	PGKM_ERR_GPU = 6,			/* a CUDA error during a GPU run */
	PGKM_ERR_INTERNAL = 7,		/* anything else (a bug) */
	PGKM_ERR_RANGE = 8			/* a result beyond double precision's range */
} pgkm_status;

typedef enum pgkm_init_method
{
	PGKM_INIT_KMEANSPP = 0,		/* greedy k-means++ (sklearn's variant) */
	PGKM_INIT_RANDOM = 1,		/* k distinct rows chosen uniformly */
	PGKM_INIT_GIVEN = 2,		/* options.initial_centroids */
	PGKM_INIT_KMEANS_PARALLEL = 3	/* k-means|| (Bahmani et al.): a few rounds
									 * of sampled batches, reduced to k by
									 * weighted greedy k-means++ (not for
									 * method KERNEL) */
} pgkm_init_method;

typedef enum pgkm_device
{
	PGKM_DEVICE_AUTO = 0,		/* GPU if the plugin loads and a device works */
	PGKM_DEVICE_CPU = 1,
	PGKM_DEVICE_GPU = 2
} pgkm_device;

/*
 * Every method gives the same labels, centroids, iterations and inertia
 * (Lloyd's); they differ in the distance computations they skip.
 */
typedef enum pgkm_method
{
	PGKM_METHOD_LLOYD = 0,		/* every row against every centroid */
	PGKM_METHOD_ELKAN = 1,		/* k lower bounds per row (n x k floats) */
	PGKM_METHOD_HAMERLY = 2,	/* one upper and one lower bound per row */
	PGKM_METHOD_YINYANG = 3,	/* one lower bound per group of 16 centroids */
	PGKM_METHOD_SORT = 4,		/* Wu & Hong's sorted inter-centroid distances, no bounds kept */
	PGKM_METHOD_AUTO = 5		/* picks one from the shape and memory, measures, switches */,
	PGKM_METHOD_KERNEL = 16		/* kernel k-means (kernel_kmeans.cpp): a
								 * different objective, apart from Lloyd's
								 * exact variants */
} pgkm_method;

/* Kernels of method KERNEL, as scikit-learn's pairwise kernels define them. */
typedef enum pgkm_kernel
{
	PGKM_KERNEL_LINEAR = 0,		/* <x, y> */
	PGKM_KERNEL_POLYNOMIAL = 1, /* (gamma <x, y> + coef0)^degree */
	PGKM_KERNEL_RBF = 2,		/* exp(-gamma ||x - y||^2) */
	PGKM_KERNEL_SIGMOID = 3		/* tanh(gamma <x, y> + coef0) */
} pgkm_kernel;

/* Where kernel k-means keeps the n x n kernel matrix K. */
typedef enum pgkm_kernel_matrix
{
	PGKM_KMATRIX_AUTO = 0,		/* stored when it fits memory_limit, else recomputed */
	PGKM_KMATRIX_STORED = 1,	/* built once (n^2 floats), read every iteration */
	PGKM_KMATRIX_RECOMPUTED = 2 /* tiles recomputed from the data every pass */
} pgkm_kernel_matrix;

/* The largest |pgkm_options.scale_log2|: any double's exponent range twice over. */
#define PGKM_MAX_SCALE_LOG2 2200

typedef struct pgkm_options
{
	int32_t		k;
	int32_t		max_iter;
	double		tol;			/* sklearn semantics: stop when the sum of
								 * squared centroid shifts <= tol * mean
								 * per-feature variance of the data */
	int32_t		init;			/* pgkm_init_method */
	const double *initial_centroids;	/* k x d row-major, for INIT_GIVEN */
	int32_t		n_init;			/* runs with different seeds; best inertia wins */
	uint64_t	seed;
	int32_t		method;			/* pgkm_method */
	int32_t		device;			/* pgkm_device */
	int32_t		n_threads;		/* CPU threads; 0 = every core the process may use */
	int32_t		deterministic;	/* GPU: fixed-order reductions (default 1) */
	const char *gpu_plugin_path;	/* full path of pg_kmeans_cuda.so, or NULL */
	int64_t		gpu_memory_limit;	/* bytes; 0 = whatever the device allows */

	/*
	 * How the float32 data x was made from the caller's values X:
	 * x[i][j] = float((X[i][j] - shift[j]) * 2^scale_log2), shift d values
	 * (NULL: all 0). initial_centroids and every result (centroids,
	 * distances, inertia) are in X's units, converted in fp64. The
	 * engine's float32 kernels need max |x| <= 2^60 / sqrt(12 d): larger
	 * data is an error (scale it down). Kernel k-means takes gamma in X's
	 * units too; its polynomial and sigmoid kernels depend on the origin,
	 * so their shift must be NULL or all 0.
	 */
	const double *shift;
	int32_t		scale_log2;		/* within +-PGKM_MAX_SCALE_LOG2 */

	/* method KERNEL only (the defaults are scikit-learn's) */
	int32_t		kernel;			/* pgkm_kernel (default RBF) */
	double		gamma;			/* > 0; 0 = 1 / d */
	double		coef0;			/* polynomial and sigmoid (default 1) */
	int32_t		degree;			/* polynomial, >= 1 (default 3) */
	int32_t		kernel_matrix;	/* pgkm_kernel_matrix */
	int64_t		memory_limit;	/* host bytes the engine may allocate (the
								 * caller's data buffer not counted): method
								 * AUTO keeps its bounds and kernel_matrix AUTO
								 * its K within it; 0 = no limit */
	const int32_t *initial_labels;	/* n labels in 0..k-1, for INIT_GIVEN */
} pgkm_options;

/* Fills *opt with the documented defaults (k = 0 must still be set). */
void		pgkm_options_default(pgkm_options *opt);

typedef struct pgkm_progress
{
	int32_t		run;			/* 0-based index among n_init runs */
	int32_t		iteration;		/* 1-based Lloyd iteration; 0 = init step */
	double		inertia;		/* sum of squared distances at this step */
	int64_t		moved;			/* points whose label changed */
	double		elapsed_s;		/* since pgkm_run_create */
	int64_t		distance_computations;	/* of this step's assignment (n x k
										 * for Lloyd); 0 at init */
	int32_t		method;			/* pgkm_method of this step (AUTO resolved) */
} pgkm_progress;

/*
 * Interrupt poll. Called often (between row blocks and kernel launches), only
 * from the thread that called pgkm_run_step, so it may read backend-local
 * flags; it must not call anything that can raise an error. Nonzero = stop.
 */
typedef int (*pgkm_interrupt_fn) (void *ctx);

typedef struct pgkm_run pgkm_run;

/*
 * x: n x d row-major float32; must stay valid and unchanged until
 * pgkm_run_free. Except for method KERNEL the run first rounds it in place
 * to its centroid sums' grid, 2^-min(50, 61 - e_n) of each column's largest
 * |value| (n + 1 < 2^e_n): only values below 2^24 steps change (below
 * 2^-26 of the maximum up to 2,046 rows, 2^-13 at 10M rows), and every
 * result is that of the rounded data. Returns PGKM_OK and *out, or an error
 * status with a message.
 */
int			pgkm_run_create(float *x, int64_t n, int32_t d,
							const pgkm_options *opt,
							pgkm_interrupt_fn interrupt, void *interrupt_ctx,
							pgkm_run **out, char *err, size_t errlen);

/* One bounded unit of work. PGKM_OK: call again; PGKM_DONE: result ready. */
int			pgkm_run_step(pgkm_run *run, pgkm_progress *progress,
						  char *err, size_t errlen);

typedef struct pgkm_result
{
	int64_t		n;
	int32_t		d;
	int32_t		k;				/* clusters returned; < k_requested only when
								 * the data (as float32; for method KERNEL in
								 * the kernel's feature space) has only k
								 * distinct points, or unfilled_clusters > 0 */
	int32_t		k_requested;
	/* All in the caller's units (pgkm_options.shift, scale_log2). */
	const double *centroids;	/* k x d */
	const double *initial_centroids;	/* k x d, of the winning run */
	const int32_t *labels;		/* n, in 0..k-1 */
	const double *distances;	/* n, Euclidean distance to own centroid */
	const int64_t *sizes;		/* k */
	const double *cluster_inertia;	/* k, each cluster's sum of squared
									 * distances (fp64, rows in order) */
	double		inertia;		/* sum of squared distances, fp64 */
	int32_t		iterations;		/* of the winning run */
	int32_t		converged;
	int32_t		best_run;
	int32_t		empty_cluster_repairs;	/* empty clusters split or moved to a row */
	int32_t		unfilled_clusters;	/* dropped although rows stayed apart from
									 * every centroid: only the GPU's float32
									 * labels can do that for Lloyd; kernel
									 * k-means after k rounds of moves */
	double		elapsed_s;
	const char *device;			/* "cpu" or "gpu" */
	const char *device_detail;	/* e.g. "NVIDIA H100 80GB HBM3" or "8 threads" */
	const char *fallback_reason;	/* device=auto that fell back to CPU: why; else "" */
	const char *method_used;	/* the method that ran, e.g. "yinyang"; for
								 * AUTO what it chose, e.g. "yinyang, then
								 * lloyd from iteration 4" */
	int64_t		distance_computations;	/* of every assignment pass of every run */
	int64_t		distance_computations_lloyd;	/* what Lloyd would have
												 * computed: n x k per pass */
	const struct pgkm_kernel_result *kernel;	/* method KERNEL, else NULL */
	const double *sum_scales;	/* d, in the engine's units (x's): the data
								 * was put on each column's grid of step
								 * 1 / sum_scales[j], a power of two, where
								 * below 2^24 steps (pgkm_run_create); NULL
								 * for method KERNEL. For pgkm_nearest. */
} pgkm_result;

/* The SQL name of a method ("lloyd", "elkan", ...), NULL if unknown. */
const char *pgkm_method_name(int32_t method);

/*
 * "NaN", "Infinity" or "-Infinity", as PostgreSQL spells them (v not
 * finite): the engine's messages and the glue's name such values alike.
 */
const char *pgkm_nonfinite_name(double v);

/*
 * What kernel k-means adds to a result. Its clusters have no centroid
 * vectors: the feature-space centroid of cluster c is the mean of phi(x_i)
 * over the rows i with members[i] == c, the partition the final labels were
 * assigned against. The result's centroids are the input-space means of the
 * final clusters, its distances and inertia feature-space ones.
 */
typedef struct pgkm_kernel_result
{
	const int32_t *initial_labels;	/* n: the winning run's starting partition */
	const int32_t *members;		/* n: cluster in 0..k-1, or -1 for a row of a
								 * cluster that was dropped (empty at the end) */
	const int64_t *member_sizes;	/* k: rows with members[i] == c */
	const double *centroid_norms;	/* k: ||c||^2 in feature space, in the engine's
									 * units (2^2e times the caller's for linear) */
	double		gamma;			/* the gamma used, in the caller's units (the 1 / d
								 * default resolved) */
	const char *matrix;			/* "stored" or "recomputed" */
	double		matrix_s;		/* seconds building K (0 when recomputed) */
} pgkm_kernel_result;

/* Valid after pgkm_run_step returned PGKM_DONE; pointers live until free. */
int			pgkm_run_result(const pgkm_run *run, pgkm_result *out);

void		pgkm_run_free(pgkm_run *run);

/* Bytes the engine will allocate for this shape (data buffer excluded). */
int64_t		pgkm_estimate_bytes(int64_t n, int32_t d, const pgkm_options *opt);

/* The cores this process may run on (its affinity mask): what n_threads = 0 means. */
int32_t		pgkm_usable_cores(void);

/*
 * Is a GPU engine usable? Loads the plugin (once per process) and probes the
 * device. Returns 1 and a description, or 0 and the reason, in info.
 */
int			pgkm_gpu_available(const char *plugin_path, char *info, size_t infolen);

/*
 * Kernel k-means prediction against a stored partition: the row x (d fp64,
 * in the caller's units) goes to the cluster whose feature-space centroid is
 * nearest,
 *   argmin_c  K(x,x) - 2/|c| sum_{l in c} K(x, rows_l) + norms[c],
 * lowest index on ties, computed in fp64 over the n training rows (n x d,
 * members[l] in 0..k-1 or -1 = no cluster). rows and norms are the fit's,
 * in its engine units (the float32 data and pgkm_kernel_result.centroid_norms);
 * kernel holds the fit's kernel, gamma, coef0, degree, shift and scale_log2,
 * which x is brought into. Returns the cluster and its squared feature-space
 * distance in *dist2; -1 on bad arguments; -2 when a distance is not finite
 * (x so far out that its kernel values overflow double).
 */
int32_t		pgkm_kernel_nearest(const pgkm_options *kernel, const float *rows,
								const int32_t *members, int64_t n, int32_t d, int32_t k,
								const double *norms, const double *x, double *dist2);

/*
 * Index of the centroid nearest to x (Euclidean), the lowest index on
 * exact ties, for any finite values: centroids are compared pairwise by
 * sum_j (a_j - b_j)(a_j + b_j - 2 x_j) with power-of-two scaling, so no
 * intermediate overflows and no common term hides the difference. units
 * (NULL: none) gives the fit's buffer (its shift and scale_log2 only): x is
 * first rounded to the float that buffer would hold, and with sum_scales
 * (the fit's pgkm_result.sum_scales, d values, or NULL) to the sums' grid
 * as the fit's data was, so a training row gets the label the fit gave it
 * (up to fp64 rounding of the shift). *dist2 (if non-NULL): the squared
 * distance of that x, +Infinity only when it exceeds double's range. -1
 * for bad arguments or a failed allocation.
 */
int32_t		pgkm_nearest(const double *centroids, int32_t k, int32_t d,
						 const pgkm_options *units, const double *sum_scales,
						 const double *x, double *dist2);

#ifdef __cplusplus
}
#endif

#endif							/* PGKM_ENGINE_H */
