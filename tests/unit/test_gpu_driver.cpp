/*
 * test_gpu_driver.cpp: the GPU path without a GPU: plugin loading failures,
 * and the shared driver through a CPU stand-in plugin
 * (tests/unit/fake_cuda_plugin).
 */
#include "blobs.h"
#include "engine_run.h"
#include "reference.h"
#include "internal_hooks.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

/* ---- GPU plugin failure paths (no GPU here) ---- */
TEST(GpuPlugin, MissingPluginAutoFallsBackGpuFails)
{
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	pgkm_options o = cpu_options(2);
	o.device = PGKM_DEVICE_AUTO;
	o.gpu_plugin_path = "/nonexistent/pg_kmeans_cuda.so";
	EngineResult r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "cpu");
	EXPECT_NE(r.fallback.find("/nonexistent/pg_kmeans_cuda.so"), std::string::npos) << r.fallback;
	o.device = PGKM_DEVICE_GPU;
	r = run_engine(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_NE(r.err.find("cannot load GPU engine plugin"), std::string::npos) << r.err;
	o.gpu_plugin_path = nullptr;
	r = run_engine(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_NE(r.err.find("no GPU engine plugin path"), std::string::npos) << r.err;
	o.device = PGKM_DEVICE_CPU;
	o.gpu_plugin_path = "/nonexistent/pg_kmeans_cuda.so";
	r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_EQ(r.fallback, "");	/* device=cpu is not a fallback */
	char		info[256];
	EXPECT_EQ(pgkm_gpu_available("/nonexistent/pg_kmeans_cuda.so", info, sizeof(info)), 0);
	EXPECT_NE(std::string(info).find("cannot load"), std::string::npos);
	EXPECT_EQ(pgkm_gpu_available(nullptr, info, sizeof(info)), 0);
}

TEST(GpuPlugin, LibraryWithoutEntryPointIsRefused)
{
	/*
	 * a real shared library that is not our plugin: the C library this test
	 * runs with (under an emulator, inside the sysroot it names in
	 * PGKM_TEST_SYSROOT: tests/arm/qemu_check.sh)
	 */
	Dl_info		where;
	ASSERT_NE(dladdr(reinterpret_cast<void *>(&fopen), &where), 0);
	ASSERT_NE(where.dli_fname, nullptr);
	const std::string libpath = std::string(getenv("PGKM_TEST_SYSROOT") ? getenv("PGKM_TEST_SYSROOT") : "") +
		where.dli_fname;
	const char *lib = libpath.c_str();
	char		info[256];
	EXPECT_EQ(pgkm_gpu_available(lib, info, sizeof(info)), 0);
	EXPECT_NE(std::string(info).find("does not export pgkm_cuda_get_api"), std::string::npos) << info;
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	pgkm_options o = cpu_options(2);
	o.device = PGKM_DEVICE_GPU;
	o.gpu_plugin_path = lib;
	EngineResult r = run_engine(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_NE(r.err.find("does not export"), std::string::npos);
}

/* ---- the GPU driver path, through a CPU stand-in plugin (tests/unit/fake_cuda_plugin) ---- */
#ifdef PGKM_FAKE_CUDA_PLUGIN
namespace
{
/* Sets an environment switch of the fake plugin for the scope. */
struct EnvSwitch
{
	const char *name;
	explicit EnvSwitch(const char *n) : name(n) { setenv(n, "1", 1); }
	~EnvSwitch() { unsetenv(name); }
};

pgkm_options
gpu_options(int32_t k, int32_t device = PGKM_DEVICE_GPU)
{
	pgkm_options o = cpu_options(k);
	o.device = device;
	o.gpu_plugin_path = PGKM_FAKE_CUDA_PLUGIN;
	return o;
}

/* The stand-in needs no NVIDIA driver: skip the loader's driver check in this binary. */
const std::string driver_check_saved = pgkm_internal_set_driver_library("");
}							/* namespace */

/* With no driver the plugin (and the cuBLAS it links) is never loaded. */
TEST(GpuDriver, NoDriverMeansNoPluginLoad)
{
	pgkm_internal_set_driver_library("libpgkm-no-such-driver.so.1");
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	EngineResult r = run_engine(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "cpu");
	EXPECT_EQ(r.fallback, "no NVIDIA driver (libpgkm-no-such-driver.so.1 cannot be loaded)");
	r = run_engine(x, 2, gpu_options(2));
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_EQ(dlopen(PGKM_FAKE_CUDA_PLUGIN, RTLD_NOW | RTLD_NOLOAD), nullptr);
	pgkm_internal_set_driver_library("");
}

/* Runs first in this group: the loader caches a plugin only once its probe succeeded. */
TEST(GpuDriver, ProbeAndSetupFailures)
{
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	{
		EnvSwitch	fail("PGKM_FAKE_PROBE_FAIL");
		EngineResult r = run_engine(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.device, "cpu");
		EXPECT_EQ(r.fallback, "no usable GPU: fake: no CUDA device");
		r = run_engine(x, 2, gpu_options(2));
		EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
		EXPECT_EQ(r.err, "no usable GPU: fake: no CUDA device");
		char		info[256];
		EXPECT_EQ(pgkm_gpu_available(PGKM_FAKE_CUDA_PLUGIN, info, sizeof(info)), 0);
		EXPECT_STREQ(info, "no usable GPU: fake: no CUDA device");
	}
	char		info[256];
	EXPECT_EQ(pgkm_gpu_available(PGKM_FAKE_CUDA_PLUGIN, info, sizeof(info)), 1);
	EXPECT_STREQ(info, "Fake GPU (CPU stand-in), 1 GiB");
	{
		EnvSwitch	fail("PGKM_FAKE_CREATE_FAIL");
		EngineResult r = run_engine(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.device, "cpu");
		EXPECT_NE(r.fallback.find("fake: out of device memory"), std::string::npos) << r.fallback;
		r = run_engine(x, 2, gpu_options(2));
		EXPECT_EQ(r.status, PGKM_ERR_NOMEM);
		EXPECT_NE(r.err.find("fake: out of device memory"), std::string::npos) << r.err;
	}
	EngineResult r = run_engine(x, 2, gpu_options(2, PGKM_DEVICE_AUTO));
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_EQ(r.device, "gpu");
	EXPECT_EQ(r.detail, "Fake GPU (CPU stand-in), 1 GiB");
	EXPECT_EQ(r.fallback, "");
}

/*
 * A plugin without kernel k-means (the stand-in's kernel entry points are
 * NULL, which the loader accepts): device GPU is refused, AUTO runs on the
 * CPU and says why.
 */
TEST(GpuDriver, KernelKMeansWithoutThePluginsKernelRunsOnTheCpu)
{
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	pgkm_options o = gpu_options(2);
	o.method = PGKM_METHOD_KERNEL;
	EngineResult r = run_engine(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_GPU_UNAVAILABLE);
	EXPECT_EQ(r.err, "the GPU engine plugin does not run kernel k-means");
	o.device = PGKM_DEVICE_AUTO;
	r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "cpu");
	EXPECT_EQ(r.fallback, "the GPU engine plugin does not run kernel k-means");
	EXPECT_EQ(r.labels[0], r.labels[1]);
	EXPECT_NE(r.labels[0], r.labels[2]);
}

TEST(GpuDriver, SameResultAsCpuFromTheSameInitialCentroids)
{
	const int	d = 5, k = 8;
	auto		x = blobs(3000, d, k, 404, 1.5);
	auto		init = pick_rows(x, d, k, 5);
	pgkm_options o = gpu_options(k);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	EngineResult g = run_engine(x, d, o);
	o.device = PGKM_DEVICE_CPU;
	EngineResult c = run_engine(x, d, o);
	ASSERT_EQ(g.status, PGKM_DONE) << g.err;
	ASSERT_EQ(c.status, PGKM_DONE) << c.err;
	EXPECT_EQ(g.device, "gpu");
	EXPECT_EQ(c.device, "cpu");
	EXPECT_GT(g.iterations, 2);
	EXPECT_EQ(g.iterations, c.iterations);
	EXPECT_EQ(g.converged, c.converged);
	EXPECT_EQ(g.labels, c.labels);
	EXPECT_EQ(g.sizes, c.sizes);
	for (size_t i = 0; i < c.centroids.size(); i++)
		ASSERT_NEAR(g.centroids[i], c.centroids[i], 1e-9);
	EXPECT_NEAR(g.inertia, c.inertia, 1e-9 * c.inertia);
	for (int i = 0; i < k; i++)
		EXPECT_NEAR(g.cluster_inertia[i], c.cluster_inertia[i], 1e-9 * c.cluster_inertia[i]);
	RefResult	ref = ref_lloyd(x, d, init, o.max_iter, o.tol);
	EXPECT_NEAR(g.inertia, ref.inertia, 1e-9 * ref.inertia);
	/* progress reports the plugin's per-iteration numbers */
	ASSERT_EQ(g.progress.size(), c.progress.size());
	for (size_t i = 1; i + 1 < g.progress.size(); i++)
	{
		EXPECT_EQ(g.progress[i].moved, c.progress[i].moved);
		EXPECT_NEAR(g.progress[i].inertia, c.progress[i].inertia, 1e-9 * c.progress[i].inertia);
	}
}

TEST(GpuDriver, EmptyClusterRepairIsTheSameOnBothEngines)
{
	auto		x = blobs(2000, 2, 3, 31, 1.0);
	std::vector<double> init = {x[0], x[1], x[2], x[3], 1e4, 1e4};
	pgkm_options o = gpu_options(3);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.tol = 0;
	EngineResult g = run_engine(x, 2, o);
	o.device = PGKM_DEVICE_CPU;
	EngineResult c = run_engine(x, 2, o);
	ASSERT_EQ(g.status, PGKM_DONE) << g.err;
	ASSERT_EQ(c.status, PGKM_DONE);
	EXPECT_GE(g.repairs, 1);
	EXPECT_EQ(g.repairs, c.repairs);
	EXPECT_EQ(g.labels, c.labels);
	for (int i = 0; i < 6; i++)
		EXPECT_NEAR(g.centroids[i], c.centroids[i], 1e-9);
	for (int64_t s : g.sizes)
		EXPECT_GT(s, 0);
}

TEST(GpuDriver, FewerDistinctPointsShrinksK)
{
	std::vector<float> x;
	for (int rep = 0; rep < 5; rep++)
		for (float v : {0.f, 0.f, 5.f, 5.f, -3.f, 2.f})
			x.push_back(v);
	EngineResult r = run_engine(x, 2, gpu_options(6));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "gpu");
	EXPECT_EQ(r.k, 3);
	EXPECT_EQ(r.k_requested, 6);
	EXPECT_EQ(r.inertia, 0.0);
	for (int64_t s : r.sizes)
		EXPECT_EQ(s, 5);
}

namespace
{
int
flag_interrupt(void *ctx)
{
	return ((std::atomic<int> *) ctx)->load();
}
}							/* namespace */

/* The engine polls nothing itself between plugin calls: only the plugin can see this flag. */
TEST(GpuDriver, InterruptReachesThePlugin)
{
	auto		x = blobs(20000, 4, 8, 3);
	pgkm_options o = gpu_options(8);
	std::atomic<int> flag {0};
	char		err[256];
	pgkm_run   *h = nullptr;
	ASSERT_EQ(pgkm_run_create(x.data(), 20000, 4, &o, flag_interrupt, &flag, &h, err, sizeof(err)), PGKM_OK) << err;
	pgkm_progress p;
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* init */
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* iteration 1 */
	EXPECT_EQ(p.iteration, 1);
	EXPECT_EQ(p.moved, 20000);
	flag = 1;
	EXPECT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_INTERRUPTED);
	pgkm_run_free(h);
}
#endif
