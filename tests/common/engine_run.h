/*
 * engine_run.h: drive the engine through its public C API to the end and
 * keep an owned copy of everything it returned. Plain C++ (no test
 * framework): a broken API contract shows as status PGKM_ERR_INTERNAL with
 * the reason in err, which every test's status check then reports.
 */
#ifndef PGKM_TEST_ENGINE_RUN_H
#define PGKM_TEST_ENGINE_RUN_H

#include "pgkm_engine.h"

#include <string>
#include <vector>

namespace pgkm_test
{

struct EngineResult
{
	int			status = -1;	/* PGKM_DONE, or the first status that was not PGKM_OK */
	std::string err;
	int32_t		k = 0, k_requested = 0, iterations = 0, converged = 0, repairs = 0, best_run = 0,
				unfilled = 0;
	double		inertia = 0;
	std::vector<double> centroids, init;
	std::vector<int32_t> labels;
	std::vector<double> dist;
	std::vector<int64_t> sizes;
	std::vector<double> cluster_inertia;
	std::vector<pgkm_progress> progress;	/* one entry per step, the last included */
	std::string device, detail, fallback;
	std::string method_used;
	int64_t		distance_computations = 0, distance_computations_lloyd = 0;
	/* method KERNEL (pgkm_kernel_result), else empty */
	std::vector<int32_t> kernel_init_labels, kernel_members;
	std::vector<int64_t> kernel_member_sizes;
	std::vector<double> kernel_norms;
	double		kernel_gamma = 0;
	std::string kernel_matrix;
};

/* Defaults with k set and device = CPU. */
pgkm_options cpu_options(int32_t k);

/*
 * cpu_options with a method from given initial centroids (k x d, which must
 * outlive the options), max_iter, tol and threads.
 */
pgkm_options given_options(int32_t method, const std::vector<double> &init, int32_t k, int max_iter,
						   double tol, int threads = 2);

/* Runs x (row-major, d columns) to completion, or to the first status other than PGKM_OK. */
EngineResult run_engine(const std::vector<float> &x, int32_t d, const pgkm_options &o,
						pgkm_interrupt_fn intr = nullptr, void *ctx = nullptr);

}							/* namespace pgkm_test */

#endif							/* PGKM_TEST_ENGINE_RUN_H */
