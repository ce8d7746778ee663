/*
 * test_plugin_paths.cpp: each assignment path of the plugin, driven through
 * the ABI, against an fp64 brute-force reference: one Lloyd iteration on the
 * fused paths, the TILED path's corner shapes, and the GEMM path's products
 * (labels the fp64 argmin, with a one-TF32-product negative control).
 */
#include "gpu_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

/*
 * Fused paths: dot (d = 24, rows re-read in the epilogue) and direct (d = 3,
 * rows and old labels kept in registers); run under compute-sanitizer too.
 */
TEST(GpuPlugin, OneIterationMatchesFp64Reference)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 50000;
	struct P { int d, k; const char *path; };
	for (P s : {P {24, 40, "dot"}, P {3, 8, "direct"}})
	{
		auto		x = gpu_blobs(n, s.d, s.k, 77 + s.d);
		check_one_iteration(x, n, s.d, s.k, pgkm_test::pick_rows(x, s.d, s.k, 9), plugin_config(), s.path);
	}
}

/*
 * The TILED path (32 <= d <= 1024, k <= 256): padded k (k < 8, 8 < k < 16),
 * d not a multiple of 4 (scalar loads) or of 32 (partial chunks), private
 * sums and global flushes (768 x 64 does not fit shared memory), several
 * 1024-row sort tiles and a partial one, k > 64 (the assign kernel's loop
 * over 64-centroid chunks), and k = 300 forced onto the path (default <= 256).
 * Starting centroids are the blob centres moved by 0.5, so no row is near a
 * tie and sizes are exact.
 */
TEST(GpuPlugin, OneIterationTiledMatchesFp64Reference)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; bool force; };
	for (P s : {P {5000, 65, 5, false}, P {7001, 130, 12, false}, P {6000, 200, 64, false},
				P {3000, 768, 64, false}, P {5000, 33, 150, false}, P {4000, 72, 300, true}})
	{
		std::vector<double> centres;
		auto		x = gpu_blobs(s.n, s.d, s.k, 500 + s.d, 1.0, 3.0f, &centres);
		std::vector<double> c0((size_t) s.k * s.d);
		for (size_t i = 0; i < c0.size(); i++)
			c0[i] = 3.0 + centres[i] + 0.5;
		pgkm_cuda_config cfg = plugin_config();
		if (s.force)
			cfg.force_path = PGKM_CUDA_PATH_TILED;
		check_one_iteration(x, s.n, s.d, s.k, c0, cfg, "tiled");
	}
}

/*
 * The GEMM path's products against fp64 on uniform data with k random rows
 * as centroids, where many rows have two centroids closer than TF32's own
 * error (rows within 1e-3 relative of a tie are counted): fp32 SGEMM and
 * 3xTF32 (forced: by default only d, k >= 512 use it) give the fp64 argmin on
 * every row (the label bound and the fp64 decision, label_bound.h), and one
 * iteration matches the fp64 reference. Negative control: one TF32 product
 * (PGKM_CUDA_PRODUCT_TF32, whose labels are never decided) gets some wrong,
 * so the data really tests the split. Shapes: k = 1024, k = 300 at d = 300,
 * and d > 1024 (the argmin kernel adds the rows itself).
 */
TEST(GpuPlugin, ThreeTf32LabelsLikeFp64)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; bool force; };
	for (P s : {P {20000, 128, 1024, false}, P {20000, 300, 300, false}, P {20000, 1100, 120, true}})
	{
		SCOPED_TRACE("d=" + std::to_string(s.d) + " k=" + std::to_string(s.k));
		std::mt19937_64 g(900 + s.d);
		std::uniform_real_distribution<float> u(0.0f, 1.0f);
		std::vector<float> x((size_t) s.n * s.d);
		for (auto &v : x)
			v = 3.0f + u(g);
		auto		c0 = pgkm_test::pick_rows(x, s.d, s.k, 5);
		/* the fp64 argmin (lowest index on ties) and the rows near a tie */
		std::vector<int32_t> ref(s.n);
		int64_t		tight = 0;
		for (int64_t i = 0; i < s.n; i++)
		{
			double		b1 = INFINITY, b2 = INFINITY;
			for (int c = 0; c < s.k; c++)
			{
				double		v = pgkm_test::sqdist_fp64(x.data() + (size_t) i * s.d, c0.data() + (size_t) c * s.d, s.d);
				if (v < b1)
					ref[i] = c;
				b2 = std::min(b2, std::max(b1, v));
				b1 = std::min(b1, v);
			}
			tight += (b2 - b1) < 1e-3 * b1;
		}
		auto		wrong = [&](const std::vector<int32_t> &lab) {
			int64_t		w = 0;
			for (int64_t i = 0; i < s.n; i++)
				w += lab[i] != ref[i];
			return w;
		};
		pgkm_cuda_config cfg = plugin_config();
		cfg.force_path = PGKM_CUDA_PATH_GEMM;
		std::string path1, path3, path32;
		int64_t		dec3 = -1, dec32 = -1;
		cfg.gemm_product = PGKM_CUDA_PRODUCT_TF32;
		const int64_t wrong1 = wrong(gpu_assign_labels(x, s.n, s.d, s.k, c0, cfg, &path1));
		cfg.gemm_product = PGKM_CUDA_PRODUCT_FP32;
		const int64_t wrong32 = wrong(gpu_assign_labels(x, s.n, s.d, s.k, c0, cfg, &path32, &dec32));
		cfg.gemm_product = PGKM_CUDA_PRODUCT_3XTF32;
		const int64_t wrong3 = wrong(gpu_assign_labels(x, s.n, s.d, s.k, c0, cfg, &path3, &dec3));
		EXPECT_EQ(path1, "gemm-tf32x1");
		EXPECT_EQ(path32, "gemm");
		EXPECT_EQ(path3, "gemm-3xtf32");
		EXPECT_GT(wrong1, 0) << "one TF32 product got every label right: the data does not test the split";
		EXPECT_EQ(wrong32, 0) << "of " << s.n << " rows";
		EXPECT_EQ(wrong3, 0) << "of " << s.n << " rows";
		printf("    d=%d k=%d: %lld rows, %lld within 1e-3 of a tie; not the fp64 argmin: one TF32 product %lld, "
			   "fp32 %lld, 3xTF32 %lld; decided in fp64: fp32 %lld, 3xTF32 %lld\n",
			   s.d, s.k, (long long) s.n, (long long) tight, (long long) wrong1, (long long) wrong32,
			   (long long) wrong3, (long long) dec32, (long long) dec3);
		check_one_iteration(x, s.n, s.d, s.k, c0, cfg, "gemm-3xtf32");
	}
}
