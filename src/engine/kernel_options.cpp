/*
 * kernel_options.cpp: the kernel k-means options that need no data pass:
 * validation, the memory estimate, and the choice between a stored and a
 * recomputed kernel matrix (kernel_kmeans.h).
 */
#include "errors.h"
#include "kernel_device.h"
#include "kernel_kmeans.h"
#include "stats.h"
#include "thread_pool.h"
#include "util.h"

#include <unistd.h>

#include <cmath>

namespace pgkm
{

void
validate_kernel_options(int64_t n, int32_t d, const pgkm_options &o)
{
	(void) n;
	if (o.kernel < PGKM_KERNEL_LINEAR || o.kernel > PGKM_KERNEL_SIGMOID)
		throw EngineError(PGKM_ERR_INVALID, fmt("unknown kernel %d", o.kernel));
	if (!(o.gamma >= 0) || std::isinf(o.gamma))
		throw EngineError(PGKM_ERR_INVALID,
						  fmt("gamma must be a finite number > 0, or 0 for 1/d (got %g)", o.gamma));
	if (!std::isfinite(o.coef0))
		throw EngineError(PGKM_ERR_INVALID, fmt("coef0 must be finite (got %g)", o.coef0));
	if (o.kernel == PGKM_KERNEL_POLYNOMIAL && o.degree < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("degree must be at least 1 (got %d)", o.degree));
	if (o.kernel_matrix < PGKM_KMATRIX_AUTO || o.kernel_matrix > PGKM_KMATRIX_RECOMPUTED)
		throw EngineError(PGKM_ERR_INVALID, fmt("unknown kernel_matrix %d", o.kernel_matrix));
	if (o.memory_limit < 0)
		throw EngineError(PGKM_ERR_INVALID, "memory_limit must be >= 0");
	if (o.init == PGKM_INIT_KMEANS_PARALLEL)
		throw EngineError(PGKM_ERR_INVALID, "kernel k-means takes init k-means++, random or given, not k-means||");
	if (o.init == PGKM_INIT_GIVEN && !o.initial_labels)
		throw EngineError(PGKM_ERR_INVALID, "kernel k-means with init GIVEN needs initial_labels");
	if (o.shift && KernelParams::from_options(o, d).needs_origin())
		for (int32_t j = 0; j < d; j++)
			if (o.shift[j] != 0)
				throw EngineError(PGKM_ERR_INVALID,
								  fmt("the %s kernel depends on the origin: its data must not be shifted "
									  "(shift of feature %d is %g)",
									  o.kernel == PGKM_KERNEL_POLYNOMIAL ? "polynomial" : "sigmoid", j,
									  o.shift[j]));
}

/* Physical memory, for kernel_matrix AUTO without a memory_limit. */
static double
physical_bytes()
{
	long		pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (double) pages * size : 0;
}

/* The step loop's own arrays (the device's are cpu_kernel_device_bytes). */
static double
loop_bytes(int64_t n, int32_t d, int32_t k, int threads, int32_t init)
{
	const double dn = (double) n;
	double		b = dn * 4 * 8;		/* labels: current, new, initial, given; best x3; sizes */
	b += dn * 8 * 2;			/* squared distances: current and best */
	b += (double) k * (8 * 10 + 3 * 8 * d);	/* sizes, norms, cross; centroids */
	if (init == PGKM_INIT_KMEANSPP)
		b += dn * 8 + (2 + std::log((double) k)) * dn * 4;	/* D^2, candidate rows */
	b += (dn / (double) stats_chunk_rows(d) + 1) * d * (8 + 4);	/* statistics partials: sums and column maxima */
	b += threads * (8 << 20);	/* thread stacks (virtual, counted anyway) */
	return b;
}

static double
run_bytes(int64_t n, int32_t d, const pgkm_options &o, int threads, bool stored)
{
	const int32_t k = o.k > 0 ? o.k : 1;
	return loop_bytes(n, d, k, threads, o.init) +
		cpu_kernel_device_bytes(n, d, k, threads, stored);
}

bool
kernel_store_matrix(int64_t n, int32_t d, const pgkm_options &o, int threads)
{
	const double ram = physical_bytes();
	if (o.kernel_matrix == PGKM_KMATRIX_RECOMPUTED)
		return false;
	if (o.kernel_matrix == PGKM_KMATRIX_STORED)
	{
		const double kb = (double) n * n * 4;
		if (ram > 0 && kb > ram)
			throw EngineError(PGKM_ERR_NOMEM,
							  fmt("the kernel matrix of %lld rows needs %.1f GB (n^2 float32), "
								  "more than this machine's %.1f GB of memory; "
								  "recompute it instead (kernel_matrix recomputed)",
								  (long long) n, kb / 1e9, ram / 1e9));
		return true;
	}
	const double limit = o.memory_limit > 0 ? (double) o.memory_limit : 0.75 * ram;
	return limit <= 0 || run_bytes(n, d, o, threads, true) <= limit;
}

int64_t
kernel_estimate_bytes(int64_t n, int32_t d, const pgkm_options &o)
{
	const int	threads = resolve_threads(o.n_threads);
	bool		stored;
	try
	{
		stored = kernel_store_matrix(n, d, o, threads);
	}
	catch (const EngineError &)
	{
		stored = true;			/* explicitly stored and larger than RAM: count it */
	}
	return (int64_t) std::ceil(run_bytes(n, d, o, threads, stored));
}

}							/* namespace pgkm */
