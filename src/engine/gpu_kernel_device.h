/*
 * gpu_kernel_device.h: the GPU KernelDevice (kernel_device.h) over the CUDA
 * plugin's kernel entry points (pgkm_cuda_api.h, ABI 3), and the question
 * the step loop asks before making one: would this run fit, and how.
 */
#ifndef PGKM_GPU_KERNEL_DEVICE_H
#define PGKM_GPU_KERNEL_DEVICE_H

#include "kernel_device.h"
#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"

#include <cstdint>
#include <memory>
#include <string>

namespace pgkm
{

struct CudaPlugin;

/* How the GPU holds K; 0 in a switch is the production behaviour. */
struct GpuKernelOptions
{
	int32_t		matrix = PGKM_CUDA_KMATRIX_AUTO;	/* pgkm_cuda_kmatrix */
	int32_t		precision = PGKM_CUDA_KPREC_FP32;	/* pgkm_cuda_kprecision */
	int64_t		memory_limit = 0;	/* bytes; 0 = what the device has free */
	/* measurement and test switches (pgkm_cuda_kernel_config) */
	int32_t		build = 0, product = 0, chunk_rows = 0, tile_mb = 0;
};

/*
 * What the plugin would do for this run, nothing allocated: true and the
 * plan, or false with the plugin's status and message (PGKM_ERR_NOMEM: no
 * mode fits, with the numbers and a hint).
 */
bool		gpu_kernel_plan(const CudaPlugin *plugin, int64_t n, int32_t d, int32_t kmax, const KernelParams &p,
							const GpuKernelOptions &o, pgkm_cuda_kernel_plan *plan, int *status, std::string *why);

/*
 * The GPU kernel device over x (n x d, outliving it) with column means mean,
 * as make_cpu_kernel_device; throws EngineError (the plugin's status) or
 * Interrupted.
 */
std::unique_ptr<KernelDevice> make_gpu_kernel_device(const CudaPlugin *plugin, const float *x, int64_t n, int32_t d,
													 const double *mean, const KernelParams &p,
													 const GpuKernelOptions &o, int32_t kmax,
													 pgkm_interrupt_fn interrupt, void *interrupt_ctx);

/* opt's GPU settings: where K lives (kernel_matrix), the GPU memory limit. */
GpuKernelOptions gpu_kernel_options(const pgkm_options &opt);

/*
 * The step loop's choice for device GPU or AUTO, before the data is read:
 * the plugin when it loads, runs kernel k-means and the run's plan fits the
 * GPU budget (nothing allocated). Otherwise device GPU throws EngineError
 * (PGKM_ERR_NOMEM with the plan's numbers, else PGKM_ERR_GPU_UNAVAILABLE)
 * and AUTO returns nullptr with the reason in *fallback (the CPU runs).
 */
const CudaPlugin *kernel_gpu_plugin(int64_t n, int32_t d, const KernelParams &p, const pgkm_options &opt,
									std::string *fallback);

/*
 * The GPU kernel device on that plugin; a failure throws for device GPU (and
 * for invalid data, which the CPU would refuse too), else returns nullptr
 * with the reason in *fallback.
 */
std::unique_ptr<KernelDevice> open_gpu_kernel_device(const CudaPlugin *plugin, const float *x, int64_t n, int32_t d,
													 const double *mean, const KernelParams &p,
													 const pgkm_options &opt, pgkm_interrupt_fn interrupt,
													 void *interrupt_ctx, std::string *fallback);

/* The last pass's device seconds (CUDA events), for benchmarks; -1 for another device. */
double		gpu_kernel_pass_seconds(const KernelDevice *dev);

}							/* namespace pgkm */

#endif							/* PGKM_GPU_KERNEL_DEVICE_H */
