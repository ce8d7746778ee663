/*
 * auto_assign.h: method 'auto' on the CPU (auto_assign.cpp).
 */
#ifndef PGKM_AUTO_ASSIGN_H
#define PGKM_AUTO_ASSIGN_H

#include "cpu_assign.h"

namespace pgkm
{

/*
 * The bounded method 'auto' starts with for this shape and host memory
 * budget (opt->memory_limit), or PGKM_METHOD_LLOYD when none can pay or fit.
 */
int32_t		auto_first_method(int64_t n, int32_t d, int32_t k, const pgkm_options *opt);

std::unique_ptr<CpuAssign> make_auto_assign(const pgkm_options *opt, const float *x, int64_t n,
											int32_t d, int32_t kmax, const double *mean,
											ThreadPool *pool);

}							/* namespace pgkm */

#endif							/* PGKM_AUTO_ASSIGN_H */
