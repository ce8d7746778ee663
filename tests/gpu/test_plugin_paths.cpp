/*
 * test_plugin_paths.cpp: each assignment path of the plugin, driven through
 * the ABI, against an fp64 brute-force reference: one Lloyd iteration on the
 * fused paths, the TILED path's corner shapes, and the GEMM path's 3xTF32
 * product (labels like fp64, with a one-TF32-product negative control).
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
 * Nearest centroid of each row in fp64 (lowest index on ties), and the
 * relative gap to the second nearest.
 */
static std::vector<int32_t>
reference_labels(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c,
				 std::vector<double> *gap = nullptr)
{
	std::vector<int32_t> lab(n);
	if (gap)
		gap->assign(n, 0.0);
	for (int64_t i = 0; i < n; i++)
	{
		double		b1 = INFINITY, b2 = INFINITY;
		int			bi = 0;
		for (int j = 0; j < k; j++)
		{
			double		v = pgkm_test::sqdist_fp64(x.data() + (size_t) i * d, c.data() + (size_t) j * d, d);
			if (v < b1)
			{
				b2 = b1;
				b1 = v;
				bi = j;
			}
			else if (v < b2)
				b2 = v;
		}
		lab[i] = bi;
		if (gap)
			(*gap)[i] = (b2 - b1) / (b1 + 1e-300);
	}
	return lab;
}

/* assign() against c0 on the GPU: labels, and the path that made them. */
static std::vector<int32_t>
gpu_labels(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c0,
		   const pgkm_cuda_config &cfg, std::string *path)
{
	void	   *h = nullptr;
	char		err[512];
	std::vector<int32_t> lab(n, -1);
	std::vector<double> d2(n);
	std::vector<int64_t> sz(k);
	double		inertia;
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	if (!h)
		return lab;
	EXPECT_EQ(api()->set_centroids(h, c0.data(), err, sizeof(err)), 0) << err;
	EXPECT_EQ(api()->assign(h, lab.data(), d2.data(), sz.data(), &inertia, err, sizeof(err)), 0) << err;
	*path = debug_path(h);
	api()->destroy(h);
	return lab;
}

/*
 * The GEMM path's 3xTF32 products (x_hi c_hi + x_hi c_lo + x_lo c_hi on the
 * tensor cores) label like fp32 arithmetic. Uniform data with k random rows
 * as centroids has many rows whose two nearest centroids are closer than
 * TF32's own error; rows within 1e-5 (relative, fp64) of a tie are dropped,
 * since there fp32 rounding decides. Negative control: one TF32 product
 * (PGKM_CUDA_PRODUCT_TF32) must get some labels wrong, so the data really tests
 * the split; 3xTF32 (forced: by default only d, k >= 512 use it) must get
 * none wrong, and one iteration must match the fp64 reference. Shapes:
 * k = 1024, k = 300 at d = 300, and d > 1024 (the argmin kernel adds the
 * rows itself).
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
		std::vector<float> x0((size_t) s.n * s.d);
		for (auto &v : x0)
			v = 3.0f + u(g);
		auto		c0 = pgkm_test::pick_rows(x0, s.d, s.k, 5);
		std::vector<double> gap;
		reference_labels(x0, s.n, s.d, s.k, c0, &gap);
		std::vector<float> x;
		int64_t		tight = 0;
		for (int64_t i = 0; i < s.n; i++)
		{
			if (gap[i] < 1e-5)
				continue;
			tight += gap[i] < 1e-3;
			x.insert(x.end(), x0.begin() + i * s.d, x0.begin() + (i + 1) * s.d);
		}
		const int64_t n = (int64_t) x.size() / s.d;
		auto		ref = reference_labels(x, n, s.d, s.k, c0);
		pgkm_cuda_config cfg = plugin_config();
		if (s.force)
			cfg.force_path = PGKM_CUDA_PATH_GEMM;
		std::string path1, path3;
		cfg.gemm_product = PGKM_CUDA_PRODUCT_TF32;
		auto		one = gpu_labels(x, n, s.d, s.k, c0, cfg, &path1);
		cfg.gemm_product = PGKM_CUDA_PRODUCT_3XTF32;
		auto		lab = gpu_labels(x, n, s.d, s.k, c0, cfg, &path3);
		int64_t		wrong1 = 0, wrong3 = 0;
		for (int64_t i = 0; i < n; i++)
		{
			wrong1 += one[i] != ref[i];
			wrong3 += lab[i] != ref[i];
		}
		EXPECT_EQ(path1, "gemm-tf32x1");
		EXPECT_EQ(path3, "gemm-3xtf32");
		EXPECT_GT(wrong1, 0) << "one TF32 product got every label right: the data does not test the split";
		EXPECT_EQ(wrong3, 0) << "of " << n << " rows";
		printf("    d=%d k=%d: %lld rows, %lld within 1e-3 of a tie; wrong labels: one TF32 product %lld, 3xTF32 %lld\n",
			   s.d, s.k, (long long) n, (long long) tight, (long long) wrong1, (long long) wrong3);
		check_one_iteration(x, n, s.d, s.k, c0, cfg, "gemm-3xtf32");
	}
}
