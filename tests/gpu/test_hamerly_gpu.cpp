/*
 * test_hamerly_gpu.cpp: method 'hamerly' on the GPU (cuda/hamerly.cu) against
 * 'lloyd' on the GPU and the CPU engine from the same initial centroids, on
 * adversarial data: the same labels and iteration count, centroids
 * bit-identical with GPU Lloyd's and the CPU engine's (the same labels give
 * the same fixed-point sums), inertia to 1e-12 relatively;
 * and on clustered data most distances skipped.
 */
#include "bounded_gpu_util.h"
#include "near_ties.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>

/* Rows near the bisector of two centroids (1e-4 .. 1e-10 of their separation), every path's storage. */
class HamerlyNearTies : public ::testing::TestWithParam<TieShape> {};

TEST_P(HamerlyNearTies, SameRunAsLloyd)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const TieShape s = GetParam();
	pgkm_test::NearTies t = pgkm_test::near_ties(s.n, s.d, s.k, s.offset, 77 + s.d);
	expect_exact_method(PGKM_METHOD_HAMERLY, t.x, s.d, t.c, 25, "near ties");
}

INSTANTIATE_TEST_SUITE_P(Paths, HamerlyNearTies, ::testing::Values(
	TieShape {20000, 2, 16, 0.0},		/* direct */
	TieShape {20000, 16, 40, 100.0},	/* dot, offset data */
	TieShape {20000, 48, 24, 0.0},		/* tiled */
	TieShape {20000, 33, 200, 0.0},		/* tiled, centred level: d and k past a whole step */
	TieShape {20000, 64, 300, 10.0},	/* dot at d = 64 (the centred level's largest d), offset data */
	TieShape {12000, 65, 40, 0.0},		/* tiled at d = 65: the direct float level */
	TieShape {8000, 100, 300, 1000.0},	/* gemm: rows kept shifted */
	TieShape {3000, 520, 512, 10.0}));	/* gemm 3xTF32: rows kept split and shifted */

/* Exact ties (integer grid), duplicate rows, d = 1, k = 1, k = n. */
TEST(HamerlyGpu, TiesDuplicatesAndEdgeShapes)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	expect_exact_edge_shapes(PGKM_METHOD_HAMERLY);
}

/*
 * The centred level (DOT and TILED paths, d <= 64): exact ties on an integer
 * grid, duplicates, k = 1, k = n, and one row per centroid on the bisector of
 * two others.
 */
TEST(HamerlyGpu, CentredLevelEdgeShapes)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const auto	g = integer_grid(4000, 16, 5);
	expect_exact_method(PGKM_METHOD_HAMERLY, g, 16, first_rows(g, 16, 12), 40, "dot, integer ties");

	const auto	dup = repeated_rows(3000, 40, 4, 2, 0.5);
	expect_exact_method(PGKM_METHOD_HAMERLY, dup, 40, first_rows(dup, 40, 6), 30, "tiled, duplicates, k > distinct rows");

	auto		b = gpu_blobs(3000, 32, 3, 13, 1.0);
	expect_exact_method(PGKM_METHOD_HAMERLY, b, 32, pgkm_test::pick_rows(b, 32, 1, 9), 10, "tiled, k = 1");

	auto		small = gpu_blobs(70, 17, 4, 17, 1.0);
	expect_exact_method(PGKM_METHOD_HAMERLY, small, 17, first_rows(small, 17, 70), 10, "dot, k = n");
}

/* Empty clusters (repaired between passes: large centroid jumps) and clusters that merge. */
TEST(HamerlyGpu, EmptyAndMergingClusters)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	expect_exact_empty_and_merging(PGKM_METHOD_HAMERLY);
}

/* Well-clustered data: most rows keep their label without a distance to every centroid. */
TEST(HamerlyGpu, SkipsMostDistancesOnClusteredData)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	for (int d : {16, 64})
	{
		auto		x = gpu_blobs(200000, d, 64, 51 + d, 0.3);
		pgkm_test::EngineResult r = expect_exact_method(PGKM_METHOD_HAMERLY, x, d, pgkm_test::pick_rows(x, d, 64, 5), 100,
												 "clustered d = " + std::to_string(d));
		const double skipped = 1.0 - (double) r.distance_computations / (double) r.distance_computations_lloyd;
		printf("[ hamerly ] clustered n = 200000, d = %d, k = 64: %d iterations, %.1f %% of distances skipped\n", d,
			   r.iterations, 100 * skipped);
		EXPECT_GT(skipped, 0.5) << "d = " << d;
		/* the first pass computes every distance; later ones only the listed rows' and n own ones */
		int64_t		fewest = INT64_MAX, full = 0;
		for (const pgkm_progress &p : r.progress)
			if (p.distance_computations > 0)
			{
				fewest = std::min(fewest, p.distance_computations);
				full += p.distance_computations == (int64_t) 200000 * 64;
			}
		EXPECT_GE(full, 1);
		EXPECT_LT(fewest, (int64_t) 200000 * 64 / 4);
	}
}

/* Streamed rows keep Lloyd's passes (the bounds are only kept beside resident rows): still exact. */
TEST(HamerlyGpu, StreamedRunsLloydPasses)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	expect_streamed_runs_lloyd(PGKM_METHOD_HAMERLY, 16);
}

/* Through the ABI: the method is taken, each pass says what it computed, a bad method is refused. */
TEST(HamerlyGpu, AbiReportsPrunedPasses)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int64_t n = 50000;
	const int	d = 20, k = 32;
	auto		x = gpu_blobs(n, d, k, 71, 0.3);
	auto		init = pgkm_test::pick_rows(x, d, k, 4);
	pgkm_cuda_config cfg = plugin_config(1);
	cfg.method = 7;
	void	   *h = nullptr;
	char		err[512] = "";
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_STREQ(err, "unknown GPU method 7");
	cfg.method = PGKM_CUDA_METHOD_HAMERLY;
	ASSERT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	EXPECT_EQ(debug_hamerly(h), 1);
	ASSERT_EQ(api()->set_centroids(h, init.data(), err, sizeof(err)), 0) << err;
	std::vector<double> c((size_t) k * d);
	std::vector<int64_t> sizes(k);
	for (int it = 0; it < 6; it++)
	{
		pgkm_cuda_iter st {};
		ASSERT_EQ(api()->iterate(h, &st, c.data(), sizes.data(), err, sizeof(err)), 0) << err;
		EXPECT_EQ(st.method, PGKM_CUDA_METHOD_HAMERLY);
		if (it == 0)
		{
			EXPECT_EQ(debug_listed(h), n) << "first pass: every row listed";
		}
		EXPECT_EQ(st.distances, it == 0 ? n * k : n + debug_listed(h) * (k - 1));
		EXPECT_LE(debug_decided(h), debug_listed(h));
	}
	EXPECT_LT(debug_listed(h), n / 2) << "a converging run lists fewer rows than it has";
	EXPECT_LT(debug_decided(h), debug_listed(h) / 10 + 10) << "blobs: the float level decides nearly every listed row";
	api()->destroy(h);

	/* near-ties at the float level's resolution go on to fp64 */
	pgkm_test::NearTies t = pgkm_test::near_ties(20000, 16, 24, 0.0, 5);
	ASSERT_EQ(api()->create(t.x.data(), 20000, 16, 24, &cfg, &h, err, sizeof(err)), 0) << err;
	ASSERT_EQ(api()->set_centroids(h, t.c.data(), err, sizeof(err)), 0) << err;
	c.resize(24 * 16);
	sizes.resize(24);
	pgkm_cuda_iter st {};
	ASSERT_EQ(api()->iterate(h, &st, c.data(), sizes.data(), err, sizeof(err)), 0) << err;
	EXPECT_GT(debug_decided(h), 100);
	api()->destroy(h);
}

/*
 * The fp64 level takes a short list a block per row and a long one in tiles
 * of rows (hamerly_label.cu): near-tie data gives both in one run (thousands
 * of rows left to fp64 in the first pass, few later), and both methods that
 * use it stay Lloyd's run.
 */
TEST(HamerlyGpu, Fp64LevelShortAndLongLists)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int64_t n = 20000;
	const int	d = 16, k = 40;
	pgkm_test::NearTies t = pgkm_test::near_ties(n, d, k, 100.0, 93);
	for (int method : {PGKM_CUDA_METHOD_HAMERLY, PGKM_CUDA_METHOD_YINYANG})
	{
		const char *name = method == PGKM_CUDA_METHOD_HAMERLY ? "hamerly" : "yinyang";
		expect_exact_method(method == PGKM_CUDA_METHOD_HAMERLY ? PGKM_METHOD_HAMERLY : PGKM_METHOD_YINYANG, t.x, d,
							t.c, 25, name);
		pgkm_cuda_config cfg = plugin_config(1);
		cfg.method = method;
		void	   *h = nullptr;
		char		err[512] = "";
		ASSERT_EQ(api()->create(t.x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
		ASSERT_EQ(api()->set_centroids(h, t.c.data(), err, sizeof(err)), 0) << err;
		std::vector<double> c((size_t) k * d);
		std::vector<int64_t> sizes(k);
		int64_t		longest = 0, short_lists = 0;
		for (int it = 0; it < 25; it++)
		{
			pgkm_cuda_iter st {};
			ASSERT_EQ(api()->iterate(h, &st, c.data(), sizes.data(), err, sizeof(err)), 0) << err;
			longest = std::max(longest, debug_decided(h));
			short_lists += debug_decided(h) > 0 && debug_decided(h) <= 1024;
			if (st.moved == 0)
				break;
		}
		api()->destroy(h);
		EXPECT_GT(longest, 1024) << name << ": a list for the tiled fp64 kernel";
		EXPECT_GT(short_lists, 0) << name << ": a list for the block-per-row fp64 kernel";
	}
}
