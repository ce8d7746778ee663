/*
 * test_gpu_vs_cpu.cpp: the GPU engine against the CPU engine through the
 * public API, from the same initial centroids, on every assignment path:
 * equal labels and iterations; and streamed through a small budget against
 * resident.
 */
#include "gpu_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

/* GPU vs CPU engine from the same initial centroids, several paths. */
struct Shape
{
	int64_t		n;
	int			d, k;
	float		offset;
};
class GpuVsCpu : public ::testing::TestWithParam<Shape> {};

TEST_P(GpuVsCpu, SameLabelsAndInertia)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	Shape		s = GetParam();
	auto		x = gpu_blobs(s.n, s.d, s.k, 1000 + s.d * 7 + s.k, 1.5, s.offset);
	auto		init = pgkm_test::pick_rows(x, s.d, s.k, 5);
	auto		run = [&](int device, int max_iter, int64_t mem_limit = 0) {
		pgkm_test::EngineResult r = pgkm_test::run_engine(x, s.d, gpu_test_options(s.k, &init, device, max_iter, mem_limit));
		EXPECT_EQ(r.status, PGKM_DONE) << r.err;
		return r;
	};
	/*
	 * Both engines label by the fp64 argmin of sqdist_exact, so from the same
	 * centroids the labels are equal, and both sum the same fixed-point
	 * integers per column, so the centroids are the same bits: 15 iterations
	 * follow the same path.
	 */
	auto		same = [&](const pgkm_test::EngineResult &gpu, const pgkm_test::EngineResult &cpu) {
		expect_same_run(gpu, cpu);
		double		dsum = 0;
		for (int64_t i = 0; i < s.n; i++)
			dsum += gpu.dist[i] * gpu.dist[i];
		EXPECT_NEAR(dsum, gpu.inertia, 1e-9 * gpu.inertia);
	};
	same(run(PGKM_DEVICE_GPU, 1), run(PGKM_DEVICE_CPU, 1));
	pgkm_test::EngineResult gpu15 = run(PGKM_DEVICE_GPU, 15);
	same(gpu15, run(PGKM_DEVICE_CPU, 15));
	/* streamed through a tiny budget (~4 MB of chunks beside the labels and
	 * centroid copies): the same labels, so the same fixed-point sums */
	pgkm_test::EngineResult st = run(PGKM_DEVICE_GPU, 15, (int64_t) s.n * 4 + (4 << 20) + (int64_t) s.k * s.d * 32);
	EXPECT_EQ(st.labels, gpu15.labels);
	EXPECT_EQ(st.centroids, gpu15.centroids);
	EXPECT_NEAR(st.inertia, gpu15.inertia, 1e-12 * gpu15.inertia);
}

INSTANTIATE_TEST_SUITE_P(Paths, GpuVsCpu, ::testing::Values(
	Shape {200000, 2, 8, 0.0f},		/* direct, private smem sums */
	Shape {100000, 3, 100, 0.0f},	/* direct, padded d */
	Shape {100000, 9, 1000, 0.0f},	/* direct, centroid tiles, global sums */
	Shape {120000, 16, 64, 500.0f},	/* dot form, offset data (centring) */
	Shape {50000, 32, 300, 0.0f},	/* dot form, k tiles */
	Shape {60000, 40, 20, 0.0f},	/* dot form, 32 < d <= 64 */
	Shape {30000, 200, 128, 1000.0f},	/* TILED (k <= 256), offset data */
	Shape {30000, 200, 300, 1000.0f},	/* GEMM (fp32) + sorted update, offset data */
	Shape {12000, 520, 600, 100.0f},	/* GEMM 3xTF32 (d, k >= 512), offset data */
	Shape {40000, 130, 30, 500.0f},	/* TILED, offset data, d % 4 != 0 */
	Shape {20000, 768, 8, 0.0f}));	/* TILED, large d */

/*
 * Columns of very different magnitudes (each scaled by 10^(3 (j mod 5) - 6)):
 * every column's sums have their own fixed-point scale on both devices, so
 * the runs are the same bits on the direct (d = 3), dot (d = 16) and tiled
 * (d = 200) paths.
 */
TEST(GpuVsCpuScales, MixedScaleColumnsSameBits)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	for (int d : {3, 16, 200})
	{
		SCOPED_TRACE("d=" + std::to_string(d));
		const int	k = 24;
		const int64_t n = 40000;
		auto		x = gpu_blobs(n, d, k, 77 + d, 1.5);
		for (int64_t i = 0; i < n; i++)
			for (int j = 0; j < d; j++)
				x[(size_t) i * d + j] *= (float) std::pow(10.0, 3 * (j % 5) - 6);
		auto		init = pgkm_test::pick_rows(x, d, k, 5);
		pgkm_test::EngineResult g = pgkm_test::run_engine(x, d, gpu_test_options(k, &init, PGKM_DEVICE_GPU, 12));
		pgkm_test::EngineResult c = pgkm_test::run_engine(x, d, gpu_test_options(k, &init, PGKM_DEVICE_CPU, 12));
		ASSERT_EQ(g.status, PGKM_DONE) << g.err;
		ASSERT_EQ(c.status, PGKM_DONE) << c.err;
		expect_same_run(g, c);
	}
}
