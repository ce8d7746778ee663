/*
 * test_plugin_runs.cpp: properties of whole runs through the plugin ABI:
 * determinism, the private sums against the global-atomics reference,
 * streaming against resident, interrupts, out-of-memory, the config's
 * switches, and the probe.
 */
#include "gpu_test_util.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

TEST(GpuPlugin, DeterministicModeIsBitIdentical)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 300000;
	for (int d : {2, 16, 100})
	{
		const int	k = 50;
		auto		x = gpu_blobs(n, d, k, 3 + d);
		PluginRun	a = plugin_run(x, n, d, k, plugin_config(1));
		PluginRun	b = plugin_run(x, n, d, k, plugin_config(1));
		EXPECT_EQ(a.centroids, b.centroids) << "d=" << d;
		EXPECT_EQ(a.inertia, b.inertia) << "d=" << d;
		/* fast (atomic fp64) mode: same clustering up to rounding */
		PluginRun	f = plugin_run(x, n, d, k, plugin_config(0));
		EXPECT_NEAR(f.inertia, a.inertia, 1e-6 * a.inertia) << "d=" << d;
	}
}

/*
 * Private (shared-memory, warp pre-summed) sums against the reference of one
 * global atomic per element (PGKM_CUDA_SUMS_GLOBAL): fixed-point sums are
 * exact integers, so deterministic mode must agree bit for bit; fast mode up
 * to fp64 rounding. Shapes: fused direct (rows in registers and re-read),
 * dot, sorted rows (whole warps on one label: 5 shuffle rounds), odd n (a
 * partial warp), a k too large to privatise, and the GEMM path.
 */
TEST(GpuPlugin, PrivateSumsMatchGlobalAtomics)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; bool sorted; };
	for (P s : {P {300001, 2, 8, false}, P {200000, 2, 8, true}, P {100003, 12, 64, false},
				P {150000, 24, 40, true}, P {50000, 9, 1000, false}, P {60000, 100, 16, false}})
	{
		auto		x = gpu_blobs(s.n, s.d, s.k, 17 + s.d);
		if (s.sorted)			/* long runs of one label: rows sorted by the first column */
		{
			std::vector<int64_t> idx(s.n);
			for (int64_t i = 0; i < s.n; i++)
				idx[i] = i;
			std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
				return x[(size_t) a * s.d] < x[(size_t) b * s.d];
			});
			std::vector<float> y(x.size());
			for (int64_t i = 0; i < s.n; i++)
				std::copy_n(x.begin() + idx[i] * s.d, s.d, y.begin() + i * s.d);
			x.swap(y);
		}
		const auto	init = pgkm_test::pick_rows(x, s.d, s.k, 3);
		pgkm_cuda_config det = plugin_config(1), fast = plugin_config(0);
		PluginRun	priv = plugin_run(x, s.n, s.d, s.k, det, &init);
		PluginRun	fpriv = plugin_run(x, s.n, s.d, s.k, fast, &init);
		det.sums = fast.sums = PGKM_CUDA_SUMS_GLOBAL;
		PluginRun	glob = plugin_run(x, s.n, s.d, s.k, det, &init);
		PluginRun	fglob = plugin_run(x, s.n, s.d, s.k, fast, &init);
		SCOPED_TRACE("n=" + std::to_string(s.n) + " d=" + std::to_string(s.d) + " k=" + std::to_string(s.k));
		EXPECT_EQ(priv.centroids, glob.centroids);
		EXPECT_EQ(priv.inertia, glob.inertia);
		EXPECT_NEAR(fpriv.inertia, fglob.inertia, 1e-9 * fglob.inertia);
		EXPECT_NEAR(fpriv.inertia, priv.inertia, 1e-9 * priv.inertia);
		double		cmax = 0;
		for (size_t i = 0; i < priv.centroids.size(); i++)
			cmax = std::max(cmax, std::fabs(fpriv.centroids[i] - fglob.centroids[i]) / (1.0 + std::fabs(fglob.centroids[i])));
		EXPECT_LT(cmax, 1e-9);
	}
}

/*
 * Streamed chunks give the resident answer from the same initial centroids:
 * labels are exact, so the fixed-point sums and the centroids are
 * bit-identical on every path (the GEMM tiles follow the chunks, which may
 * change cuBLAS's float values but not the labels); inertia to 1e-12 (chunk
 * boundaries move the inertia partials). k-means++ streamed:
 * test_kmeanspp.cpp.
 */
TEST(GpuPlugin, StreamingMatchesResident)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; };
	for (P s : {P {400000, 5, 30}, P {400000, 24, 30}, P {400000, 64, 30}, P {100000, 200, 300}})
	{
		const int64_t n = s.n;
		const int	d = s.d, k = s.k;
		auto		x = gpu_blobs(n, d, k, 11 + d);
		const auto	init = pgkm_test::pick_rows(x, d, k, 3);
		PluginRun	a = plugin_run(x, n, d, k, plugin_config(1), &init);
		PluginRun	b = plugin_run(x, n, d, k, plugin_config(1, 6 << 20), &init);	/* 6 MB: many chunks */
		EXPECT_FALSE(a.streamed) << "d=" << d;
		EXPECT_TRUE(b.streamed) << "d=" << d;
		EXPECT_EQ(a.centroids, b.centroids) << "d=" << d;
		EXPECT_NEAR(a.inertia, b.inertia, 1e-12 * a.inertia) << "d=" << d;
	}
}

static int interrupt_after(void *ctx)
{
	int		   *left = (int *) ctx;
	return --(*left) < 0;
}

TEST(GpuPlugin, InterruptStopsPromptlyAndFreesMemory)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 2000000;
	const int	d = 8, k = 64;
	auto		x = gpu_blobs(n, d, k, 1);
	size_t		free0, tot;
	cudaFree(0);
	cudaMemGetInfo(&free0, &tot);
	int			left = 2;
	pgkm_cuda_config cfg = plugin_config(1, 24 << 20);	/* streamed: several chunks per pass */
	cfg.interrupt = interrupt_after;
	cfg.interrupt_ctx = &left;
	void	   *h = nullptr;
	char		err[512] = "";
	int			rc = api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err));
	if (rc == 0)
	{
		std::vector<double> c = pgkm_test::pick_rows(x, d, k, 1);
		ASSERT_EQ(api()->set_centroids(h, c.data(), err, sizeof(err)), 0);
		std::vector<int64_t> sz(k);
		pgkm_cuda_iter it;
		rc = api()->iterate(h, &it, c.data(), sz.data(), err, sizeof(err));
	}
	EXPECT_EQ(rc, PGKM_INTERRUPTED) << err;
	api()->destroy(h);
	size_t		free1;
	cudaMemGetInfo(&free1, &tot);
	EXPECT_LE((long long) free0 - (long long) free1, 4LL << 20) << "GPU memory not returned";
}

TEST(GpuPlugin, OutOfMemoryIsAnError)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 100000;
	const int	d = 64, k = 4096;
	auto		x = gpu_blobs(n, d, 16, 1);
	pgkm_cuda_config cfg = plugin_config(1, 1 << 20);	/* less than the centroid buffers */
	void	   *h = nullptr;
	char		err[512] = "";
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), PGKM_ERR_NOMEM);
	EXPECT_EQ(h, nullptr);
	EXPECT_NE(std::string(err).find("budget"), std::string::npos) << err;
	EXPECT_NE(std::string(err).find("raise the GPU memory limit"), std::string::npos) << err;
	/* and the device still works afterwards */
	cfg.memory_limit = 0;
	ASSERT_EQ(api()->create(x.data(), n, d, 16, &cfg, &h, err, sizeof(err)), 0) << err;
	api()->destroy(h);
}

TEST(GpuPlugin, ProbeDescribesDevice)
{
	ASSERT_NE(api(), nullptr);
	char		info[256] = "";
	ASSERT_EQ(api()->probe(info, sizeof(info)), 0) << info;
	EXPECT_NE(std::string(info).find("GiB"), std::string::npos) << info;
}

/*
 * The config's measurement switches reach the plan: 0 everywhere is the
 * shape's own path, a forced path is taken, and a value out of range is
 * refused before anything is allocated (every combination: test_plan.cpp).
 */
TEST(GpuPlugin, ConfigSwitchesReachThePlan)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 5000;
	const int	d = 16, k = 8;
	auto		x = gpu_blobs(n, d, k, 2);
	auto		path_of = [&](const pgkm_cuda_config &cfg) {
		void	   *h = nullptr;
		char		err[512] = "";
		int			rc = api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err));
		std::string p = rc == 0 ? debug_path(h) : "error " + std::to_string(rc) + ": " + err;
		EXPECT_EQ(rc == 0, h != nullptr);
		api()->destroy(h);
		return p;
	};
	pgkm_cuda_config cfg = plugin_config();
	EXPECT_EQ(path_of(cfg), "dot");
	cfg.force_path = PGKM_CUDA_PATH_GEMM;
	EXPECT_EQ(path_of(cfg), "gemm");
	cfg.force_path = PGKM_CUDA_PATH_TILED;
	EXPECT_EQ(path_of(cfg), "tiled");
	cfg.force_path = 9;
	EXPECT_EQ(path_of(cfg), "error " + std::to_string(PGKM_ERR_INVALID) + ": unknown GPU path 9");
	cfg = plugin_config();
	cfg.gemm_blocks_per_sm = 9;
	EXPECT_EQ(path_of(cfg).rfind("error " + std::to_string(PGKM_ERR_INVALID), 0), 0u);
}
