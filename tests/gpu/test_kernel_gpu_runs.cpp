/*
 * test_kernel_gpu_runs.cpp: kernel k-means through the engine's public API
 * on the GPU (device gpu and auto): whole runs against the fp64 reference
 * from the same initial labels (tests/unit/kernel_test_util.h: labels,
 * partitions, iterations, repairs exactly; distances, norms and objective
 * within 1e-5 of the kernel's scale), as the CPU engine is tested; empty
 * clusters, k = 1, coinciding points, K recomputed in tiles, the caller's
 * units, device auto's choice and its budget fallback, rings.
 */
#include "blobs.h"
#include "gpu_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace pgkm_test;

namespace
{

pgkm_options
gpu_kernel(pgkm_options o, int device = PGKM_DEVICE_GPU)
{
	o.device = device;
	o.gpu_plugin_path = plugin_path();
	return o;
}

}							/* namespace */

/* Each kernel, K stored and recomputed: the fp64 reference's run from the same labels, on the GPU. */
TEST(KernelGpuRuns, MatchTheFp64Reference)
{
	const int32_t d = 3, k = 5;
	auto		x = blobs(700, d, k, 61, 1.3, 6.0);
	const int64_t n = (int64_t) x.size() / d;
	std::vector<int32_t> init = seeded_labels(n, k, 17);
	for (int kind : KERNEL_KINDS)
		for (int matrix : {PGKM_KMATRIX_STORED, PGKM_KMATRIX_RECOMPUTED})
		{
			pgkm_options o = gpu_kernel(blob_kernel_options(kind, k));
			o.kernel_matrix = matrix;
			EngineResult r = run_from_labels(x, d, o, init);
			const std::string what = "kernel " + std::to_string(kind) + " matrix " + std::to_string(matrix);
			ASSERT_EQ(r.status, PGKM_DONE) << what << ": " << r.err;
			EXPECT_EQ(r.device, "gpu") << what;
			EXPECT_EQ(r.kernel_matrix, matrix == PGKM_KMATRIX_STORED ? "stored" : "recomputed");
			expect_matches_reference(r, x, d, o, init, what);
			/* and the CPU engine's run, bit for bit in the labels */
			o.device = PGKM_DEVICE_CPU;
			EngineResult c = run_from_labels(x, d, o, init);
			ASSERT_EQ(c.status, PGKM_DONE) << c.err;
			EXPECT_EQ(r.labels, c.labels) << what;
			EXPECT_EQ(r.iterations, c.iterations) << what;
			EXPECT_NEAR(r.inertia, c.inertia, 1e-6 * std::max(1.0, c.inertia)) << what;
		}
}

/* A cluster empty from the start and one emptied by a pass: main's policy, on the GPU. */
TEST(KernelGpuRuns, EmptyClustersAndOneCluster)
{
	const int32_t d = 2, k = 4;
	auto		x = blobs(300, d, 4, 12, 0.7, 5.0);
	const int64_t n = (int64_t) x.size() / d;
	std::vector<int32_t> init = seeded_labels(n, 3, 9);	/* cluster 3 gets no row */
	pgkm_options o = gpu_kernel(kernel_options(k, PGKM_KERNEL_RBF, 0.2));
	EngineResult r = run_from_labels(x, d, o, init);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "gpu");
	expect_matches_reference(r, x, d, o, init, "empty from the start");
	EXPECT_GE(r.repairs, 1);
	for (int64_t s : r.sizes)
		EXPECT_GT(s, 0);

	o = gpu_kernel(kernel_options(1, PGKM_KERNEL_RBF, 0.1));
	r = run_from_labels(x, d, o, std::vector<int32_t>(n, 0));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	expect_matches_reference(r, x, d, o, std::vector<int32_t>(n, 0), "k = 1");
	EXPECT_EQ(r.iterations, 1);
}

/* Three distinct points asked for five clusters: the same result as the CPU engine. */
TEST(KernelGpuRuns, FewerDistinctPointsThanK)
{
	std::vector<float> x;
	for (int rep = 0; rep < 40; rep++)
		for (float v : {0.0f, 0.0f, 5.0f, 5.0f, 9.0f, 1.0f})
			x.push_back(v);
	pgkm_options o = gpu_kernel(kernel_options(5, PGKM_KERNEL_RBF, 0.3));
	o.seed = 4;
	EngineResult g = run_engine(x, 2, o);
	o.device = PGKM_DEVICE_CPU;
	EngineResult c = run_engine(x, 2, o);
	ASSERT_EQ(g.status, PGKM_DONE) << g.err;
	ASSERT_EQ(c.status, PGKM_DONE) << c.err;
	EXPECT_EQ(g.device, "gpu");
	EXPECT_EQ(g.k, c.k);
	EXPECT_EQ(g.labels, c.labels);
	EXPECT_EQ(g.kernel_members, c.kernel_members);
	EXPECT_NEAR(g.inertia, c.inertia, 1e-9);
}

/* The caller's units: a power-of-two scale and (RBF, linear) a shift change nothing on the GPU either. */
TEST(KernelGpuRuns, CallersUnits)
{
	const int32_t d = 3, k = 4;
	auto		x = blobs(500, d, k, 47, 1.0, 5.0);
	const std::vector<double> shift = {1.7e9, -3.25e5, 0.0};
	for (int kind : {PGKM_KERNEL_RBF, PGKM_KERNEL_LINEAR})
	{
		pgkm_options o = gpu_kernel(blob_kernel_options(kind, k));
		o.seed = 3;
		EngineResult base = run_engine(x, d, o);
		ASSERT_EQ(base.status, PGKM_DONE) << base.err;
		o.shift = shift.data();
		expect_same_run(run_engine(x, d, o), base, "shift, kernel " + std::to_string(kind));
		o.shift = nullptr;
		o.scale_log2 = 70;
		if (kind == PGKM_KERNEL_RBF)
			o.gamma = std::ldexp(o.gamma, 140);
		EngineResult s = run_engine(x, d, o);
		ASSERT_EQ(s.status, PGKM_DONE) << s.err;
		EXPECT_EQ(s.labels, base.labels);
		EXPECT_EQ(s.iterations, base.iterations);
		EXPECT_EQ(s.kernel_norms, base.kernel_norms);
	}
}

/* device auto takes the GPU when its plan fits, else the CPU with the plan's reason; gpu is refused then. */
TEST(KernelGpuRuns, AutoChoosesTheGpuWhenItHasRoom)
{
	const int32_t d = 4;
	auto		x = blobs(3000, d, 3, 5, 1.0, 4.0);
	pgkm_options o = gpu_kernel(kernel_options(3, PGKM_KERNEL_RBF, 0.2), PGKM_DEVICE_AUTO);
	EngineResult r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "gpu");
	EXPECT_EQ(r.fallback, "");
	EXPECT_NE(r.detail.find("K stored (float32"), std::string::npos) << r.detail;
	o.gpu_memory_limit = 1 << 20;	/* K alone is 36 MB */
	EngineResult c = run_engine(x, d, o);
	ASSERT_EQ(c.status, PGKM_DONE) << c.err;
	EXPECT_EQ(c.device, "cpu");
	EXPECT_EQ(c.fallback.rfind("GPU kernel plan: kernel k-means of 3000 rows", 0), 0u) << c.fallback;
	EXPECT_EQ(c.labels, r.labels);
	o.device = PGKM_DEVICE_GPU;
	EngineResult g = run_engine(x, d, o);
	EXPECT_EQ(g.status, PGKM_ERR_NOMEM);
	EXPECT_NE(g.err.find("more than the GPU budget of 0.00 GB"), std::string::npos) << g.err;
}

/* What kernel k-means is for, through the API on the GPU: RBF recovers the rings (ARI 1). */
TEST(KernelGpuRuns, RbfRecoversRings)
{
	std::vector<int32_t> truth;
	auto		x = rings(500, 0.3, 0.05, 17, &truth);
	pgkm_options o = gpu_kernel(kernel_options(2, PGKM_KERNEL_RBF, 5.0));
	o.n_init = 10;
	o.seed = 1;
	EngineResult r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "gpu");
	EXPECT_GE(adjusted_rand_index(r.labels, truth), 0.99);
}
