/*
 * kernel_gpu_util.h: what the GPU kernel k-means tests share: the GPU and CPU
 * KernelDevices over the same rows and column means, one pass from a
 * partition, a loop of passes from the same initial labels (the step loop's
 * rule without its policies), and the near-tie test against the fp64
 * reference (tests/common/kernel_reference.h).
 */
#ifndef PGKM_KERNEL_GPU_UTIL_H
#define PGKM_KERNEL_GPU_UTIL_H

#include "gpu_kernel_device.h"
#include "kernel_device.h"
#include "kernel_reference.h"
#include "thread_pool.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/* The plugin loaded as the engine loads it; throws (the test fails) if it does not load or lacks kernel k-means. */
const pgkm::CudaPlugin *kernel_plugin();

pgkm::KernelParams kparams(int kind, double gamma, double coef0 = 1, int degree = 3);

/* Rows, their column means, and a CPU pool: what both devices are made from. */
struct KData
{
	std::vector<float> x;
	int32_t		d = 0;
	int64_t		n = 0;
	std::vector<double> mean;
	std::unique_ptr<pgkm::ThreadPool> pool;
	KData(std::vector<float> rows, int32_t dims);
};

std::unique_ptr<pgkm::KernelDevice> cpu_kdev(KData &data, const pgkm::KernelParams &p, int32_t kmax,
											 bool stored = true);
/* A GPU device; build() already called. */
std::unique_ptr<pgkm::KernelDevice> gpu_kdev(KData &data, const pgkm::KernelParams &p, int32_t kmax,
											 const pgkm::GpuKernelOptions &o = pgkm::GpuKernelOptions(),
											 pgkm_interrupt_fn interrupt = nullptr, void *ctx = nullptr);
/* options for a mode: matrix, precision, product */
pgkm::GpuKernelOptions kopts(int matrix, int precision = 0, int product = 0, int build = 0);

struct PassOut
{
	std::vector<int32_t> labels;
	std::vector<double> dist2, norms, cross;
	double		kernel_sum = 0;
};
PassOut		run_pass(pgkm::KernelDevice &dev, const std::vector<int32_t> &labels, int32_t k);

/* L_{s+1} = the pass's argmin from L_s, until no label moves or max_iter passes. */
struct LoopOut
{
	std::vector<int32_t> labels;	/* the last pass's argmin */
	double		objective = 0;	/* sum of max(D, 0) at those labels */
	int			passes = 0;
	bool		converged = false;
};
LoopOut		run_loop(pgkm::KernelDevice &dev, std::vector<int32_t> labels, int32_t k, int max_iter);

/*
 * Rows where la and lb differ although the fp64 reference distances (from
 * the partition) to the two labels differ by more than rel times the
 * kernel's scale (max |K_ii|): label differences that are not near-ties.
 */
int64_t		not_near_ties(const KData &data, const pgkm::KernelParams &p, const std::vector<int32_t> &partition,
						  int32_t k, const std::vector<int32_t> &la, const std::vector<int32_t> &lb, double rel);

/* Uniform labels in 0..k-1 (mt19937_64, independent of the engine's generator). */
std::vector<int32_t> random_labels(int64_t n, int32_t k, uint64_t seed);

/* Two interleaved half-moons (scikit-learn's make_moons shape), the moon of each row in *labels. */
std::vector<float> moons(int64_t n, double noise, uint64_t seed, std::vector<int32_t> *labels);

/* The best of runs from kernel k-means++ seeds 1..tries (kernel_kmeanspp on dev). */
LoopOut		best_of_kmeanspp(pgkm::KernelDevice &dev, pgkm::ThreadPool *pool, int64_t n, int32_t k, int tries,
							 int max_iter);

#endif
