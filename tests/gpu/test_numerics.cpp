/*
 * test_numerics.cpp: issue 9 sections 1 and 5 on the GPU, through the
 * public API. The GPU reads the same shifted and scaled float32 buffer as
 * the CPU, so a power-of-two scale must change none of its results (its
 * float kernels and its fixed-point sums are scale-invariant), a shift must
 * come back added in fp64, and a cluster left empty by the final
 * assignment must be moved to a row like on the CPU.
 */
#include "gpu_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace
{
std::vector<float>
scaled(const std::vector<float> &x, int e)
{
	std::vector<float> y(x.size());
	for (size_t i = 0; i < x.size(); i++)
		y[i] = std::ldexp(x[i], e);
	return y;
}
}							/* namespace */

/* On each assignment path (d = 3 direct, 64 tiled, 300 matrix product). */
TEST(GpuNumerics, PowerOfTwoScaleChangesNothing)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	struct Shape
	{
		int64_t		n;
		int			d, k;
	};
	for (Shape s : {Shape {20000, 3, 8}, Shape {20000, 64, 16}, Shape {8000, 300, 300}})
	{
		auto		x = gpu_blobs(s.n, s.d, s.k, 77 + s.d, 1.5);
		auto		init = pgkm_test::pick_rows(x, s.d, s.k, 3);
		pgkm_options o = gpu_test_options(s.k, &init, PGKM_DEVICE_GPU, 10);
		pgkm_test::EngineResult base = pgkm_test::run_engine(x, s.d, o);
		ASSERT_EQ(base.status, PGKM_DONE) << base.err;
		ASSERT_EQ(base.device, "gpu");
		for (int e : {-30, 30})	/* inside the window the glue keeps: no float underflow */
		{
			auto		y = scaled(x, e);
			std::vector<double> init_y(init);	/* given centroids are in the caller's units */
			pgkm_options oy = gpu_test_options(s.k, &init_y, PGKM_DEVICE_GPU, 10);
			oy.scale_log2 = e;
			pgkm_test::EngineResult r = pgkm_test::run_engine(y, s.d, oy);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			EXPECT_EQ(r.labels, base.labels) << "d " << s.d << " e " << e;
			EXPECT_EQ(r.centroids, base.centroids) << "d " << s.d << " e " << e;
			EXPECT_EQ(r.dist, base.dist) << "d " << s.d << " e " << e;
			EXPECT_EQ(r.inertia, base.inertia) << "d " << s.d << " e " << e;
		}
	}
}

/* Epoch seconds: x = t - shift in float32, groups 30 s apart come back apart, in seconds. */
TEST(GpuNumerics, ShiftComesBackInTheCallersUnits)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int64_t n = 4000;
	const double shift = 1.7e9 + 15;
	std::vector<float> x(n);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float) ((i % 2) * 30.0 + (double) ((i * 7919) % 1000) / 1000.0 - 15.0);
	pgkm_options o = gpu_test_options(2, nullptr, PGKM_DEVICE_GPU, 50, 0, 1);
	o.shift = &shift;
	pgkm_test::EngineResult r = pgkm_test::run_engine(x, 1, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	ASSERT_EQ(r.k, 2);
	for (int64_t i = 2; i < n; i++)
		ASSERT_EQ(r.labels[i], r.labels[i % 2]) << "row " << i;
	for (int c = 0; c < 2; c++)
	{
		double		mean = 0;
		int64_t		cnt = 0;
		for (int64_t i = 0; i < n; i++)
			if (r.labels[i] == c)
			{
				mean += (double) x[i];
				cnt++;
			}
		EXPECT_NEAR(r.centroids[c], mean / (double) cnt + shift, 1e-6);
	}
}

/* The section 5 mechanism: empty after the final assignment, repaired. */
TEST(GpuNumerics, EmptyAfterTheFinalAssignmentIsRepaired)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const std::vector<float> x = {3, 9, 1, 5, 8, 7, 2, 4, 6, 8};
	const std::vector<double> init = {6.5, 5.5, 1.5, 9.5, 7.5, 9.5};
	pgkm_options o = gpu_test_options(3, &init, PGKM_DEVICE_GPU, 1);
	pgkm_test::EngineResult r = pgkm_test::run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.k, 3);
	EXPECT_EQ(r.init, init);
	for (int c = 0; c < r.k; c++)
		EXPECT_GT(r.sizes[c], 0) << "cluster " << c;
	for (size_t i = 0; i < r.labels.size(); i++)
		EXPECT_EQ(r.labels[i], pgkm_test::nearest_fp64(&x[i * 2], r.centroids.data(), r.k, 2));
}
