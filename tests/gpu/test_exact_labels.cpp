/*
 * test_exact_labels.cpp: GPU labels are the fp64 argmin of sqdist_exact
 * (lowest index on exact ties), the CPU engine's labels, on every path and
 * product: rows built to be near-ties at the float rounding level
 * (tests/common/near_ties.h, the CPU tests' generator), exact ties, and
 * whole runs against the CPU engine from the same start on such data.
 * Each case checks that the path really decided rows in fp64 (so the data
 * reaches the slow branch); the CPU tests' negative control shows the float
 * argmin alone gets these rows wrong, and ThreeTf32LabelsLikeFp64 shows it
 * for the GPU's one-TF32-product control.
 */
#include "gpu_test_util.h"
#include "near_ties.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

namespace
{
/* A shape, the path it must take, and the config switches that put it there. */
struct Case
{
	int			d, k;
	double		offset;
	const char *path;
	int			force;			/* pgkm_cuda_path */
	int			product;		/* pgkm_cuda_product */
};

const Case	cases[] = {
	{2, 9, 0, "direct", 0, 0}, {3, 33, 1000, "direct", 0, 0}, {5, 4, -40, "direct", 0, 0},
	{9, 700, 0, "direct", 0, 0},	/* centroid tiles: decisions read the global centroids */
	{16, 33, 1000, "dot", 0, 0}, {24, 40, 0, "dot", 0, 0}, {64, 300, 5, "dot", 0, 0},
	{40, 12, 0, "tiled", 0, 0}, {200, 6, 25, "tiled", 0, 0}, {130, 30, 500, "tiled", 0, 0},
	{72, 300, 0, "tiled", PGKM_CUDA_PATH_TILED, 0},	/* k > 256: 64-centroid chunks */
	/* float(c) too large for shared memory: the decisions read c64 (k <= 64: with masks; k > 64: every centroid) */
	{1000, 64, 10, "tiled", 0, 0}, {512, 128, 0, "tiled", 0, 0},
	{200, 300, 1000, "gemm", 0, 0}, {16, 40, 0, "gemm", PGKM_CUDA_PATH_GEMM, 0},
	{1100, 20, 3, "gemm", 0, 0},	/* d > 1024: the argmin kernel adds the rows */
	{520, 600, 100, "gemm-3xtf32", 0, 0}, {128, 64, 0, "gemm-3xtf32", PGKM_CUDA_PATH_GEMM, PGKM_CUDA_PRODUCT_3XTF32},
};

pgkm_cuda_config
case_config(const Case &c, int64_t memory_limit = 0)
{
	pgkm_cuda_config cfg = plugin_config(1, memory_limit);
	cfg.force_path = c.force;
	cfg.gemm_product = c.product;
	return cfg;
}

std::string
case_name(const Case &c)
{
	return std::string(c.path) + " d=" + std::to_string(c.d) + " k=" + std::to_string(c.k) + " offset=" +
		std::to_string((int) c.offset);
}
}							/* namespace */

TEST(GpuPlugin, NearTiesGetTheFp64ArgminOnEveryPath)
{
	ASSERT_NE(api(), nullptr);
	for (const Case &c : cases)
	{
		SCOPED_TRACE(case_name(c));
		pgkm_test::NearTies t = pgkm_test::near_ties(4000, c.d, c.k, c.offset, 300 + c.d * 7 + c.k);
		const int64_t n = (int64_t) t.x.size() / c.d;
		std::string path;
		int64_t		decided = -1;
		auto		lab = gpu_assign_labels(t.x, n, c.d, c.k, t.c, case_config(c), &path, &decided);
		EXPECT_EQ(path, c.path);
		EXPECT_EQ(count_not_fp64_argmin(t.x, c.d, t.c, lab), 0);
		EXPECT_GT(decided, 0) << "no row reached the fp64 decision";
		printf("    %s: %lld of %lld rows decided in fp64\n", case_name(c).c_str(), (long long) decided,
			   (long long) n);
	}
}

/* Exact ties (duplicated centroids, grid data) go to the lowest index on every path. */
TEST(GpuPlugin, ExactTiesGoToTheLowestIndexOnEveryPath)
{
	ASSERT_NE(api(), nullptr);
	std::mt19937_64 gen(3);
	for (const Case &c : cases)
	{
		SCOPED_TRACE(case_name(c));
		const int	k = c.k + c.k % 2;	/* even: every centroid has its duplicate */
		std::vector<double> cent((size_t) k * c.d);
		for (int ci = 0; ci < k; ci++)
			for (int j = 0; j < c.d; j++)
				cent[(size_t) ci * c.d + j] = ci % 2 ? cent[(size_t) (ci - 1) * c.d + j] : (double) (gen() % 5);
		const int64_t n = 3000;
		std::vector<float> x((size_t) n * c.d);
		for (auto &v : x)
			v = (float) (gen() % 9) * 0.5f;
		Case		ce = c;
		ce.k = k;
		std::string path;
		auto		lab = gpu_assign_labels(x, n, c.d, k, cent, case_config(ce), &path);
		EXPECT_EQ(path, c.path);
		EXPECT_EQ(count_not_fp64_argmin(x, c.d, cent, lab), 0);
		int64_t		odd = 0;
		for (int32_t l : lab)
			odd += l % 2;
		EXPECT_EQ(odd, 0) << "rows labelled with the duplicate of a lower centroid";
	}
}

/*
 * Whole runs through the engine's public API on near-tie data, GPU against
 * CPU from the same initial centroids (the generator's): the same labels,
 * iterations and centroids, bit for bit; streamed through a small
 * budget, the same as resident.
 */
TEST(GpuEngine, NearTieRunsMatchTheCpuEngine)
{
	ASSERT_NE(api(), nullptr);
	for (const Case &c : cases)
	{
		if (c.force || c.product)
			continue;			/* the engine runs the production choices only */
		SCOPED_TRACE(case_name(c));
		pgkm_test::NearTies t = pgkm_test::near_ties(6000, c.d, c.k, c.offset, 900 + c.d * 7 + c.k);
		auto		run = [&](int device, int64_t mem_limit) {
			pgkm_test::EngineResult r = pgkm_test::run_engine(t.x, c.d, gpu_test_options(c.k, &t.c, device, 10,
																							mem_limit));
			EXPECT_EQ(r.status, PGKM_DONE) << r.err;
			return r;
		};
		pgkm_test::EngineResult cpu = run(PGKM_DEVICE_CPU, 0), gpu = run(PGKM_DEVICE_GPU, 0);
		expect_same_run(gpu, cpu);
		const int64_t n = (int64_t) t.x.size() / c.d;
		pgkm_test::EngineResult st = run(PGKM_DEVICE_GPU, n * 4 + (2 << 20) + (int64_t) c.k * c.d * 32);
		EXPECT_EQ(st.labels, gpu.labels);
		EXPECT_EQ(st.centroids, gpu.centroids);
	}
}

/*
 * bench/gpu_sql_e2e.sh's e2e768 data ((i mod 16) + U[0,1)^d, 4 centroids per
 * cube): the float bound at d = 768 leaves nearly every row open with about
 * 4 candidates, gaps far above float resolution. Every label is the fp64
 * argmin; with k <= 64 (the TILED kernel's candidate masks) and k > 64 (every
 * centroid a candidate).
 */
TEST(GpuPlugin, ManyOpenRowsGetTheFp64Argmin)
{
	ASSERT_NE(api(), nullptr);
	const struct { int d, k; } shapes[] = {{768, 64}, {256, 96}};
	for (const auto &sh : shapes)
	{
		SCOPED_TRACE("d=" + std::to_string(sh.d) + " k=" + std::to_string(sh.k));
		const int64_t n = 20000;
		const std::vector<float> x = pgkm_test::mod16_rows(n, sh.d, 11 + sh.d);
		/* centroids: means of 4 disjoint row groups of each cube, nearly equidistant from its rows */
		std::vector<double> c((size_t) sh.k * sh.d, 0.0);
		std::vector<int> cnt(sh.k, 0);
		for (int64_t i = 0; i < n; i++)
		{
			const int	ci = (int) ((i % 16) + 16 * ((i / 16) % ((sh.k + 15) / 16))) % sh.k;
			cnt[ci]++;
			for (int j = 0; j < sh.d; j++)
				c[(size_t) ci * sh.d + j] += x[(size_t) i * sh.d + j];
		}
		for (int ci = 0; ci < sh.k; ci++)
			for (int j = 0; j < sh.d; j++)
				c[(size_t) ci * sh.d + j] /= cnt[ci];
		std::string path;
		int64_t		decided = -1;
		pgkm_cuda_config cfg = plugin_config(1);
		auto		lab = gpu_assign_labels(x, n, sh.d, sh.k, c, cfg, &path, &decided);
		EXPECT_EQ(path, "tiled");
		EXPECT_EQ(count_not_fp64_argmin(x, sh.d, c, lab), 0);
		EXPECT_GT(decided, n / 2) << "the data no longer leaves most rows open";
		printf("    d=%d k=%d: %lld of %lld rows decided in fp64\n", sh.d, sh.k, (long long) decided, (long long) n);
	}
}
