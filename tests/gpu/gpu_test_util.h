/*
 * gpu_test_util.h: what the GPU tests share beyond tests/common (data, the
 * fp64 reference, engine runs): the plugin loaded as the engine loads it, its
 * debug exports, plugin runs through the ABI, and the one-iteration check.
 */
#ifndef PGKM_GPU_TEST_UTIL_H
#define PGKM_GPU_TEST_UTIL_H

#include "blobs.h"
#include "engine_run.h"
#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"
#include "plan.h"
#include "reference.h"

#include <cstdint>
#include <string>
#include <vector>

/* Path of the plugin (PGKM_CUDA_PLUGIN, else the one this build made). */
const char *plugin_path();
/* The plugin's ABI, dlopen'ed like the engine does; nullptr if it does not load. */
const pgkm_cuda_api *api();

/* Debug exports (not part of the ABI). */
std::string debug_path(void *h);
int			debug_streamed(void *h);
int64_t		debug_kpp_rows(void *h);
int64_t		debug_decided(void *h);	/* rows the last pass decided in fp64 */
int			debug_hamerly(void *h);	/* 1 when iterate() prunes with Hamerly's bounds */
int64_t		debug_listed(void *h);	/* rows the last Hamerly pass labelled against every centroid */
int			debug_method(void *h);	/* the pgkm_cuda_method iterate() prunes with, 0: Lloyd's passes */

/* A config on the default device with production switches; deterministic unless det = 0. */
pgkm_cuda_config plugin_config(int det = 1, int64_t memory_limit = 0);

/* This device's limits, as the plugin reads them (for plan computations). */
pgkm_cuda::DeviceLimits device_limits();

/*
 * Gaussian blobs (tests/common/blobs.h) around k centres in [-10, 10]^d,
 * every value shifted by offset (the GEMM form's centring matters then).
 */
std::vector<float> gpu_blobs(int64_t n, int d, int k, uint64_t seed, double spread = 1.0, float offset = 0.0f,
							 std::vector<double> *centres = nullptr);

/* Engine options: k-means++ from seed when init is nullptr, else the given centroids; tol 0. */
pgkm_options gpu_test_options(int k, const std::vector<double> *init, int device, int max_iter,
							  int64_t mem_limit = 0, uint64_t seed = 0);

/* Plugin ABI: create with cfg, init (k-means++ from seed 42, or given), 8 iterations. */
struct PluginRun
{
	std::vector<double> init, centroids;
	double		inertia = 0;
	int32_t		k_found = -1;
	bool		streamed = false;
	int64_t		kpp_rows = 0;
};
PluginRun	plugin_run(const std::vector<float> &x, int64_t n, int d, int k, const pgkm_cuda_config &cfg,
					   const std::vector<double> *given = nullptr, int iterations = 8);

/*
 * assign() against c0 through the plugin: the labels, and the path that made
 * them and the rows it decided in fp64 when asked.
 */
std::vector<int32_t> gpu_assign_labels(const std::vector<float> &x, int64_t n, int d, int k,
									   const std::vector<double> &c0, const pgkm_cuda_config &cfg,
									   std::string *path = nullptr, int64_t *decided = nullptr);

/*
 * A GPU engine run against a CPU engine run from the same start: both label
 * by the fp64 argmin and sum the same fixed-point integers per column
 * (centroid_sums.h), so equal labels, iterations and centroids, bit for bit;
 * inertia (fp64 sums in each device's order) to 1e-12 relatively.
 */
void		expect_same_run(const pgkm_test::EngineResult &gpu, const pgkm_test::EngineResult &cpu);

/* Rows whose label differs from the fp64 argmin of sqdist_exact against c (lowest index on ties). */
int64_t		count_not_fp64_argmin(const std::vector<float> &x, int d, const std::vector<double> &c,
								  const std::vector<int32_t> &labels);

/*
 * One iteration of the plugin from c0 against an fp64 brute-force Lloyd
 * step (sizes exact, centroids to 1e-10, inertia to 1e-9), then assign() with
 * every output element checked (outputs pre-filled with sentinels) and every
 * label the fp64 argmin; the run must have taken expect_path
 * (pgkm_cuda_debug_path).
 */
void		check_one_iteration(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c0,
								const pgkm_cuda_config &cfg, const char *expect_path);

#endif
