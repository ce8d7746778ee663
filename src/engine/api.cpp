/*
 * api.cpp: the engine's C entry points (pgkm_engine.h). Each one runs its
 * work inside engine_guard, so no C++ exception crosses into the caller;
 * argument checks that need no data pass live here, the run itself in
 * driver.cpp.
 */
#include "argmin_kernels.h"
#include "auto_assign.h"
#include "centroid_sums.h"
#include "bounded_assign.h"
#include "cpu_assign.h"
#include "device.h"
#include "driver.h"
#include "errors.h"
#include "gpu_plugin.h"
#include "init.h"
#include "kernel_kmeans.h"
#include "nearest.h"
#include "stats.h"
#include "thread_pool.h"
#include "units.h"
#include "util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace pgkm;

extern "C" void
pgkm_options_default(pgkm_options *opt)
{
	if (!opt)
		return;
	memset(opt, 0, sizeof(*opt));
	opt->k = 0;
	opt->max_iter = 300;
	opt->tol = 1e-4;
	opt->init = PGKM_INIT_KMEANSPP;
	opt->initial_centroids = nullptr;
	opt->n_init = 1;
	opt->seed = 0;
	opt->method = PGKM_METHOD_LLOYD;
	opt->device = PGKM_DEVICE_AUTO;
	opt->n_threads = 0;
	opt->deterministic = 1;
	opt->gpu_plugin_path = nullptr;
	opt->gpu_memory_limit = 0;
	opt->kernel = PGKM_KERNEL_RBF;
	opt->gamma = 0;
	opt->coef0 = 1;
	opt->degree = 3;
	opt->kernel_matrix = PGKM_KMATRIX_AUTO;
	opt->memory_limit = 0;
	opt->initial_labels = nullptr;
	opt->shift = nullptr;
	opt->scale_log2 = 0;
}

/* Argument checks that need no data pass. */
static void
validate_options(int64_t n, int32_t d, const pgkm_options *opt)
{
	if (!opt)
		throw EngineError(PGKM_ERR_INVALID, "options must not be NULL");
	if (d < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("the number of features must be at least 1 (got %d)", d));
	if (n < 1)
		throw EngineError(PGKM_ERR_INVALID, "no rows to cluster");
	if (opt->k < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("k must be at least 1 (got %d)", opt->k));
	if (opt->k > n)
		throw EngineError(PGKM_ERR_INVALID,
						  fmt("k (%d) must not exceed the number of rows (%lld)", opt->k, (long long) n));
	if (opt->max_iter < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("max_iter must be at least 1 (got %d)", opt->max_iter));
	if (!(opt->tol >= 0) || std::isinf(opt->tol))
		throw EngineError(PGKM_ERR_INVALID, fmt("tol must be a finite number >= 0 (got %g)", opt->tol));
	if (opt->n_init < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("n_init must be at least 1 (got %d)", opt->n_init));
	if (opt->init != PGKM_INIT_KMEANSPP && opt->init != PGKM_INIT_RANDOM && opt->init != PGKM_INIT_GIVEN &&
		opt->init != PGKM_INIT_KMEANS_PARALLEL)
		throw EngineError(PGKM_ERR_INVALID, fmt("unknown init method %d", opt->init));
	if (opt->init == PGKM_INIT_GIVEN && opt->method != PGKM_METHOD_KERNEL && !opt->initial_centroids)
		throw EngineError(PGKM_ERR_INVALID, "init GIVEN needs initial_centroids");
	if (!pgkm_method_name(opt->method))
		throw EngineError(PGKM_ERR_INVALID,
						  fmt("unknown method %d (valid: lloyd, elkan, hamerly, yinyang, sort, auto, kernel)",
							  opt->method));
	if (opt->memory_limit < 0)
		throw EngineError(PGKM_ERR_INVALID, "memory_limit must be >= 0");
	if (opt->method == PGKM_METHOD_KERNEL)
		validate_kernel_options(n, d, *opt);
	if (opt->device != PGKM_DEVICE_AUTO && opt->device != PGKM_DEVICE_CPU && opt->device != PGKM_DEVICE_GPU)
		throw EngineError(PGKM_ERR_INVALID, fmt("unknown device %d", opt->device));
	if (opt->n_threads < 0)
		throw EngineError(PGKM_ERR_INVALID, fmt("n_threads must be >= 0 (got %d)", opt->n_threads));
	if ((double) d * (double) opt->k > 2.0e9)
		throw EngineError(PGKM_ERR_INVALID, "k x d is too large");
}

extern "C" int
pgkm_run_create(float *x, int64_t n, int32_t d, const pgkm_options *opt,
				pgkm_interrupt_fn interrupt, void *interrupt_ctx, pgkm_run **out,
				char *err, size_t errlen)
{
	if (out)
		*out = nullptr;
	return engine_guard(err, errlen, [&]() -> int {
		if (!out)
			throw EngineError(PGKM_ERR_INVALID, "out must not be NULL");
		validate_options(n, d, opt);
		if (!x)
			throw EngineError(PGKM_ERR_INVALID, "data must not be NULL");
		*out = new pgkm_run(x, n, d, *opt, interrupt, interrupt_ctx);
		return PGKM_OK;
	});
}

extern "C" int
pgkm_run_step(pgkm_run *run, pgkm_progress *progress, char *err, size_t errlen)
{
	if (progress)
		memset(progress, 0, sizeof(*progress));
	return engine_guard(err, errlen, [&]() -> int {
		if (!run)
			throw EngineError(PGKM_ERR_INVALID, "run must not be NULL");
		return run->step(progress);
	});
}

extern "C" int
pgkm_run_result(const pgkm_run *r, pgkm_result *out)
{
	if (!r || !out || !r->result(out))
		return PGKM_ERR_INVALID;
	return PGKM_OK;
}

extern "C" void
pgkm_run_free(pgkm_run *run)
{
	engine_guard(nullptr, 0, [&]() -> int {
		delete run;
		return PGKM_OK;
	});
}

/*
 * Upper bound of the engine's own allocations for this shape (the caller's
 * float buffer excluded): labels and distances of the current and best run,
 * k-means++ scratch, per-thread tiles, centroid arrays, partial sums.
 * Per-thread scratch is a fixed tile (argmin_kernels.h: a K block of rows and
 * a bounded partial tile) plus per-row state of one chunk, so it does not
 * grow with d; the workers' own centroid sums are kept only within a fixed
 * budget and what the memory limit leaves: threads never turn a call that
 * fits into one that does not.
 * GPU memory is the plugin's business; the host side is the same.
 */
static double
bytes_besides_worker_sums(int64_t n, int32_t d, const pgkm_options *opt)
{
	const double k = std::max<int32_t>(opt->k, 1);
	const double threads = useful_threads(opt->n_threads, n, d, (int32_t) k);
	const double dn = (double) n, dd = d;
	double		b = 0;
	b += 2 * dn * (4 + 8);		/* labels + squared distances: current and best */
	b += dn * (4 + (cpu_keeps_row_distances(d) ? 8 : 0));	/* CPU device's iteration labels and the distances it keeps */
	b += threads * 4096 * 4;	/* the update's row lists */
	if (opt->init == PGKM_INIT_KMEANSPP)
	{
		const double trials = 2 + std::floor(std::log(k));
		b += dn * 4 + (dn / 1024 + 1) * 8 * (1 + trials);	/* D^2 (float), chunk sums, trial partials */
		if (trials <= d)
			b += dn * trials * 4;	/* every row's distance to each candidate */
		else
			b += threads * 1024 * trials * 4;
		b += threads * 1024 * 4;	/* per-thread row lists */
		b += dn * 4;				/* each row's closest center */
		/*
		 * groups (kmeanspp_groups.h): member lists, the rows a grouped step
		 * moves (at most half), per-center state, near pairs (2^15 a worker)
		 */
		b += dn * 4 + dn / 2 * 8 + k * (48 + threads * 12) + threads * (1 << 18);
	}
	else if (opt->init == PGKM_INIT_KMEANS_PARALLEL)
	{
		const double cand = 1 + 2 * KPAR_ROUNDS * KPAR_OVERSAMPLING * k;	/* candidates, with room */
		b += dn * (8 + 4 + 4 + 8 + 4);	/* D^2, owner; a pass's labels, distances, device labels */
		b += cand * (dd * 4 + 4 * 4 + 8 * 3);	/* candidate rows, their k-means++ state and weights */
	}
	const double rows = (double) assign_chunk_rows(d, (int32_t) k);
	const double block_rows = 32;	/* the widest kernel's rows per block */
	b += threads * (ARGMIN_KC + ARGMIN_GROUP) * block_rows * 4;	/* kernel tiles */
	b += threads * rows * (6 * 4 + 8 + 8);	/* per-row state of a chunk: labels, best, runner-up, x2, rows to decide, moved rows and their old labels, limits */
	b += threads * (GATHER_FLOATS * 4 + rows * 4 + GATHER_FLOATS * 12) + (threads + 2) * k;	/* rows gathered for their distances; clusters changed, centroids moved */
	b += threads * (4 * (dd + 2 * k + 16) * 4 + k * (4 + 8));	/* rows decided in fp64 (4 at a time, values and a block), candidates; cluster counts */
	b += k * dd * (8 * 8 + 4 * 4) + k * 64;	/* fp64 centroid arrays, float copies (one transposed) and panels, sizes */
	b += (dn / (double) stats_chunk_rows(d) + 1) * dd * (8 + 4);	/* statistics partials: sums and column maxima */
	b += (dn / 64 + 1) * 8;		/* per-chunk inertia */
	b += threads * (256 << 10);	/* the part of a worker's stack it touches, with room */
	b += dd * 8 * 2;			/* the shift and the column means */
	int32_t		method = opt->method == PGKM_METHOD_AUTO
		? auto_first_method(n, d, (int32_t) k, opt) : opt->method;
	b += method_state_bytes(method, n, d, (int32_t) k, (int) threads);	/* pruning bounds */
	return b;
}

/*
 * The CPU device's workers keep their own centroid sums when those fit the
 * device's budget for them and, under a memory limit, what the rest leaves
 * of it: else the update splits the clusters (same bits, no extra memory).
 */
bool
pgkm::cpu_worker_sums(int64_t n, int32_t d, int32_t k, int threads, const pgkm_options *opt)
{
	if (!worker_sums_fit(threads, d, k))
		return false;
	return !opt || opt->memory_limit <= 0 ||
		bytes_besides_worker_sums(n, d, opt) + (double) threads * k * d * 8 <= (double) opt->memory_limit;
}

extern "C" int32_t
pgkm_usable_cores(void)
{
	return resolve_threads(0);
}

extern "C" int64_t
pgkm_estimate_bytes(int64_t n, int32_t d, const pgkm_options *opt)
{
	if (n < 0 || d < 1 || !opt)
		return 0;
	if (opt->method == PGKM_METHOD_KERNEL)
		return kernel_estimate_bytes(n, d, *opt);
	const int32_t k = std::max<int32_t>(opt->k, 1);
	const int	threads = useful_threads(opt->n_threads, n, d, k);
	double		b = bytes_besides_worker_sums(n, d, opt);
	if (cpu_worker_sums(n, d, k, threads, opt))
		b += (double) threads * k * d * 8;	/* the workers' own centroid sums */
	return (int64_t) std::ceil(b);
}

extern "C" int
pgkm_gpu_available(const char *plugin_path, char *info, size_t infolen)
{
	int			usable = 0;
	int			st = engine_guard(info, infolen, [&]() -> int {
		std::string why;
		const CudaPlugin *p = load_cuda_plugin(plugin_path, &why);
		usable = p != nullptr;
		copy_message(info, infolen, p ? cuda_plugin_probe_info(p) : why);
		return PGKM_OK;
	});
	return st == PGKM_OK ? usable : 0;
}

extern "C" int32_t
pgkm_nearest(const double *centroids, int32_t k, int32_t d, const pgkm_options *units,
			 const double *sum_scales, const double *x, double *dist2)
{
	if (!centroids || !x || k < 1 || d < 1)
		return -1;
	int32_t		best = -1;
	int			st = engine_guard(nullptr, 0, [&]() -> int {
		std::vector<double> image;
		const double *p = x;
		if (units)
		{
			/* x as the fit's buffer (and grid) would hold it, back in the caller's units */
			const Units u(units->shift, units->scale_log2, d);
			image.resize(d);
			for (int32_t j = 0; j < d; j++)
			{
				double		v = u.to_buffer(x[j], j);
				if (sum_scales)
					v = on_sum_grid_if_below(v, sum_scales[j]);
				const double c = u.coordinate(v, j);
				image[j] = std::isfinite(c) ? c : x[j];
			}
			p = image.data();
		}
		best = nearest_centroid(centroids, k, d, p);
		if (dist2)
			*dist2 = squared_distance(p, centroids + (size_t) best * d, d);
		return PGKM_OK;
	});
	return st == PGKM_OK ? best : -1;
}
