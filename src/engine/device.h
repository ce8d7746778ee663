/*
 * device.h: the device half of a run. The driver (driver.cpp) owns the
 * run's policy (initialisation choice, convergence, empty-cluster repair,
 * n_init); a Device owns the data on its hardware and does the passes over
 * it. The CPU engine (cpu_device.cpp) and the CUDA plugin adapter
 * (gpu_plugin.cpp) implement it, so both devices share one driver and give
 * the same semantics.
 *
 * Call order: kmeanspp | set_centroids, then iterate*, then assign.
 * iterate leaves the centroids of empty clusters unchanged; the driver
 * repairs them and hands them back with set_centroids.
 */
#ifndef PGKM_DEVICE_H
#define PGKM_DEVICE_H

#include "pgkm_engine.h"

#include <cstdint>
#include <memory>
#include <string>

namespace pgkm
{

class ThreadPool;
struct CudaPlugin;

/* One Lloyd iteration's statistics (mirrors pgkm_cuda_iter). */
struct IterStats
{
	double		inertia = 0;	/* with the centroids before the update */
	int64_t		moved = 0;		/* labels changed (all n on the first pass) */
};

class Device
{
public:
	virtual		~Device() {}
	/* Greedy k-means++; writes k x d, returns the number of distinct centers found. */
	virtual int32_t kmeanspp(uint64_t seed, int32_t k, double *centroids, double *potential) = 0;
	virtual void set_centroids(const double *centroids, int32_t k) = 0;
	/* Assign with the current centroids, then write the updated ones and the sizes. */
	virtual void iterate(IterStats *st, double *centroids, int64_t *sizes) = 0;
	/* Final assignment without update: labels, squared distances, sizes, inertia. */
	virtual void assign(int32_t *labels, double *dist2, int64_t *sizes, double *inertia) = 0;
	/*
	 * Distance computations of the last assignment pass (-1: every row
	 * against every centroid) and the pgkm_method that ran it.
	 */
	virtual int64_t last_pass_distances(int32_t *method) const
	{
		*method = PGKM_METHOD_LLOYD;
		return -1;
	}
	virtual std::string detail() const = 0;
	virtual const char *name() const = 0;	/* "cpu" or "gpu" */
};

/*
 * CPU device over x (n x d float32, row-major, column means given); pool
 * owned by the caller; opt picks the assignment method (NULL: Lloyd).
 * maxabs: each column's largest |x| (the centroid sums' scales); NULL for a
 * device that only assigns (iterate then throws).
 */
std::unique_ptr<Device> make_cpu_device(const float *x, int64_t n, int32_t d, int32_t k,
										const double *mean, const float *maxabs, ThreadPool *pool,
										const pgkm_options *opt = nullptr);

/* Whether the CPU device keeps each row's fp64 distance between passes (n doubles). */
bool		cpu_keeps_row_distances(int32_t d);

/* Whether threads workers' own centroid sums (k x d each) fit the CPU device's budget for them. */
bool		worker_sums_fit(int threads, int32_t d, int32_t k);

/*
 * Whether a CPU device of threads workers keeps them (worker_sums_fit, and
 * within opt->memory_limit with the engine's other needs; api.cpp).
 */
bool		cpu_worker_sums(int64_t n, int32_t d, int32_t k, int threads, const pgkm_options *opt);

/* GPU device through a loaded CUDA plugin (gpu_plugin.h); throws EngineError on setup failure. */
std::unique_ptr<Device> make_gpu_device(const CudaPlugin *plugin, const float *x, int64_t n,
										int32_t d, int32_t k, const pgkm_options *opt,
										pgkm_interrupt_fn interrupt, void *ctx);

}							/* namespace pgkm */

#endif							/* PGKM_DEVICE_H */
