/*
 * engine_internal.h: the engine internals gpu_bench.cpp drives directly (the
 * CPU device, for exact iteration counts), under the names that file uses.
 * It goes once gpu_bench.cpp includes device.h and thread_pool.h itself.
 */
#ifndef PGKM_BENCH_ENGINE_INTERNAL_H
#define PGKM_BENCH_ENGINE_INTERNAL_H

#include "device.h"
#include "thread_pool.h"

namespace pgkm
{

inline std::unique_ptr<Device>
make_cpu_backend(const float *x, int64_t n, int32_t d, int32_t k, const double *mean,
				 double data_scale, ThreadPool *pool)
{
	(void) data_scale;
	return make_cpu_device(x, n, d, k, mean, pool);
}

}							/* namespace pgkm */

#endif							/* PGKM_BENCH_ENGINE_INTERNAL_H */
