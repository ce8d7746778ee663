/*
 * test_yinyang_gpu.cpp: method 'yinyang' on the GPU (cuda/yinyang.cu over
 * hamerly.cu's pass) against 'lloyd' on the GPU and the CPU engine from the
 * same initial centroids (expect_exact_method: the same labels, moves and
 * iterations, bit-identical centroids with GPU Lloyd, inertia to 1e-12), on
 * adversarial data with several groups of centroids (k > 64); and on
 * clustered data most distances skipped, whole groups among them.
 */
#include "bounded_gpu_util.h"
#include "near_ties.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

/* Rows near the bisector of two centroids, every path's storage, one group to eight. */
class YinyangNearTies : public ::testing::TestWithParam<TieShape> {};

TEST_P(YinyangNearTies, SameRunAsLloyd)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const TieShape s = GetParam();
	pgkm_test::NearTies t = pgkm_test::near_ties(s.n, s.d, s.k, s.offset, 91 + s.d);
	expect_exact_method(PGKM_METHOD_YINYANG, t.x, s.d, t.c, 25, "near ties");
}

INSTANTIATE_TEST_SUITE_P(Paths, YinyangNearTies, ::testing::Values(
	TieShape {20000, 2, 130, 0.0},		/* direct, 3 groups, the last of 2 */
	TieShape {20000, 16, 200, 100.0},	/* dot, offset data */
	TieShape {20000, 48, 24, 0.0},		/* tiled, one group */
	TieShape {20000, 33, 257, 0.0},		/* tiled, centred level: a group of 1 */
	TieShape {20000, 64, 300, 10.0},	/* dot at d = 64 (the centred level's largest d), offset data */
	TieShape {12000, 65, 140, 0.0},		/* tiled at d = 65: the direct float level */
	TieShape {8000, 100, 300, 1000.0},	/* gemm: rows kept shifted */
	TieShape {3000, 520, 512, 10.0}));	/* gemm 3xTF32: rows kept split and shifted */

/* Exact ties (integer grid), duplicate rows, d = 1, k = 1, k = n; each with several groups where k allows. */
TEST(YinyangGpu, TiesDuplicatesAndEdgeShapes)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	EdgeShapeKs ks;
	ks.grid = 100;
	ks.dup = 70;
	ks.line_rows = 20000;
	ks.line = 80;
	ks.all = 130;
	expect_exact_edge_shapes(PGKM_METHOD_YINYANG, ks);
}

/* The centred level (DOT and TILED paths, d <= 64): exact ties, duplicates, k = n, with groups. */
TEST(YinyangGpu, CentredLevelEdgeShapes)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int	Y = PGKM_METHOD_YINYANG;
	const auto	g = integer_grid(4000, 16, 5);
	expect_exact_method(Y, g, 16, first_rows(g, 16, 80), 40, "dot, integer ties");

	const auto	dup = repeated_rows(3000, 40, 4, 2, 0.5);
	expect_exact_method(Y, dup, 40, first_rows(dup, 40, 70), 30, "tiled, duplicates, k > distinct rows");

	auto		small = gpu_blobs(150, 17, 4, 17, 1.0);
	expect_exact_method(Y, small, 17, first_rows(small, 17, 150), 10, "dot, k = n");
}

/* Empty clusters (repaired between passes: large centroid jumps) and clusters that merge. */
TEST(YinyangGpu, EmptyAndMergingClusters)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int	d = 24;
	auto		x = gpu_blobs(30000, d, 100, 41, 2.0);
	std::vector<double> init = pgkm_test::pick_rows(x, d, 130, 3);
	for (int c : {4, 70, 129})
		for (int j = 0; j < d; j++)
			init[(size_t) c * d + j] = (c % 2 ? 1e3 : -1e3) + j;	/* far from every row: empty, repaired */
	expect_exact_method(PGKM_METHOD_YINYANG, x, d, init, 40, "empty clusters");

	/* 150 centroids drawn from 3 wide, overlapping blobs: they drift together and clusters merge */
	auto		m = gpu_blobs(40000, 40, 3, 43, 6.0);
	expect_exact_method(PGKM_METHOD_YINYANG, m, 40, pgkm_test::pick_rows(m, 40, 150, 8), 200, "merging clusters");
}

/*
 * Well-clustered data at k = 256 (4 groups): most distances skipped, the
 * run GPU Lloyd's and CPU Lloyd's bit for bit over 100 iterations (with the
 * CPU's sums in fp64 row order, a centroid rounded apart and a near-tie
 * flipped within them; now both devices sum the same integers).
 */
TEST(YinyangGpu, SkipsMostDistancesOnClusteredData)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	for (int d : {16, 64})
	{
		const int	k = 256;
		auto		x = gpu_blobs(200000, d, k, 51 + d, 0.3);
		const auto	init = pgkm_test::pick_rows(x, d, k, 5);
		pgkm_test::EngineResult r = run_method(x, d, init, PGKM_METHOD_YINYANG, PGKM_DEVICE_GPU, 100);
		pgkm_test::EngineResult l = run_method(x, d, init, PGKM_METHOD_LLOYD, PGKM_DEVICE_GPU, 100);
		pgkm_test::EngineResult h = run_method(x, d, init, PGKM_METHOD_HAMERLY, PGKM_DEVICE_GPU, 100);
		EXPECT_EQ(r.method_used, "yinyang");
		EXPECT_EQ(r.labels, l.labels);
		EXPECT_EQ(r.iterations, l.iterations);
		EXPECT_EQ(r.centroids, l.centroids);
		EXPECT_EQ(r.labels, h.labels);
		expect_same_run(l, run_method(x, d, init, PGKM_METHOD_LLOYD, PGKM_DEVICE_CPU, 100));
		const double skipped = 1.0 - (double) r.distance_computations / (double) r.distance_computations_lloyd;
		const double ham = 1.0 - (double) h.distance_computations / (double) h.distance_computations_lloyd;
		printf("[ yinyang ] clustered n = 200000, d = %d, k = %d: %d iterations, %.1f %% of distances skipped "
			   "(hamerly %.1f %%)\n", d, k, r.iterations, 100 * skipped, 100 * ham);
		EXPECT_GT(skipped, 0.5) << "d = " << d;
	}
}

/* Streamed rows keep Lloyd's passes (the bounds are only kept beside resident rows): still exact. */
TEST(YinyangGpu, StreamedRunsLloydPasses)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	expect_streamed_runs_lloyd(PGKM_METHOD_YINYANG, 80);
}

/*
 * Through the ABI: the method is taken and reported per pass; the first pass
 * computes every distance, later ones n own distances and those of the
 * groups the listed rows' blocks computed, which on clustered data leaves
 * out whole groups (fewer than n + listed k).
 */
TEST(YinyangGpu, AbiReportsGroupSkips)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int64_t n = 100000;
	const int	d = 20, k = 256;
	auto		x = gpu_blobs(n, d, k, 71, 0.3);
	auto		init = pgkm_test::pick_rows(x, d, k, 4);
	pgkm_cuda_config cfg = plugin_config(1);
	cfg.method = PGKM_CUDA_METHOD_YINYANG;
	void	   *h = nullptr;
	char		err[512] = "";
	ASSERT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	EXPECT_EQ(debug_hamerly(h), 1);
	EXPECT_EQ(debug_method(h), PGKM_CUDA_METHOD_YINYANG);
	ASSERT_EQ(api()->set_centroids(h, init.data(), err, sizeof(err)), 0) << err;
	std::vector<double> c((size_t) k * d);
	std::vector<int64_t> sizes(k);
	int			group_skips = 0;
	for (int it = 0; it < 8; it++)
	{
		pgkm_cuda_iter st {};
		ASSERT_EQ(api()->iterate(h, &st, c.data(), sizes.data(), err, sizeof(err)), 0) << err;
		EXPECT_EQ(st.method, PGKM_CUDA_METHOD_YINYANG);
		if (it == 0)
		{
			EXPECT_EQ(debug_listed(h), n) << "first pass: every row listed";
			EXPECT_EQ(st.distances, n * k);
		}
		else
		{
			EXPECT_LE(st.distances, n + debug_listed(h) * k);
			group_skips += st.distances < n + debug_listed(h) * k;
		}
		EXPECT_LE(debug_decided(h), debug_listed(h));
	}
	EXPECT_LT(debug_listed(h), n / 2) << "a converging run lists fewer rows than it has";
	EXPECT_GE(group_skips, 1) << "blocks of listed rows left out groups";
	api()->destroy(h);
}
