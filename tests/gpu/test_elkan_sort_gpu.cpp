/*
 * test_elkan_sort_gpu.cpp: methods 'elkan' and 'sort' on the GPU
 * (cuda/elkan.cu, cuda/sort.cu) against 'lloyd' on the GPU and the CPU engine
 * from the same initial centroids (bounded_gpu_util.h's check: the same
 * labels, iterations and moves, centroids bit-identical with GPU Lloyd's and
 * the CPU engine's), on near-ties at every path's
 * storage, exact ties, duplicates, d = 1, k = 1, k = n, empty and merging
 * clusters; on clustered data most distances skipped; through the ABI, each
 * pass's method and count; streamed rows run Lloyd's passes.
 */
#include "bounded_gpu_util.h"
#include "near_ties.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <tuple>

namespace
{

std::string
method_param_name(int m)
{
	return pgkm_method_name(m);
}

}							/* namespace */

class ElkanSortNearTies : public ::testing::TestWithParam<std::tuple<int, TieShape>> {};

TEST_P(ElkanSortNearTies, SameRunAsLloyd)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int	m = std::get<0>(GetParam());
	const TieShape s = std::get<1>(GetParam());
	pgkm_test::NearTies t = pgkm_test::near_ties(s.n, s.d, s.k, s.offset, 77 + s.d);
	expect_exact_method(m, t.x, s.d, t.c, 25, "near ties");
}

INSTANTIATE_TEST_SUITE_P(Paths, ElkanSortNearTies, ::testing::Combine(
	::testing::Values(PGKM_METHOD_ELKAN, PGKM_METHOD_SORT),
	::testing::Values(
		TieShape {20000, 2, 16, 0.0},		/* direct */
		TieShape {20000, 16, 40, 100.0},	/* dot, offset data */
		TieShape {20000, 48, 24, 0.0},		/* tiled */
		TieShape {8000, 100, 300, 1000.0},	/* gemm: rows kept shifted */
		TieShape {3000, 520, 512, 10.0})));	/* gemm 3xTF32: rows kept split and shifted */

class ElkanSortGpu : public ::testing::TestWithParam<int> {};

/* Exact ties (integer grid), duplicate rows, d = 1, k = 1, k = n. */
TEST_P(ElkanSortGpu, TiesDuplicatesAndEdgeShapes)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int	m = GetParam();
	expect_exact_edge_shapes(m);

	const auto	g16 = integer_grid(4000, 16, 5);
	expect_exact_method(m, g16, 16, first_rows(g16, 16, 12), 40, "dot, integer ties");

	auto		small40 = gpu_blobs(70, 40, 4, 17, 1.0);
	expect_exact_method(m, small40, 40, first_rows(small40, 40, 70), 10, "tiled, k = n");
}

/* Empty clusters (repaired between passes: large centroid jumps) and clusters that merge. */
TEST_P(ElkanSortGpu, EmptyAndMergingClusters)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	expect_exact_empty_and_merging(GetParam());
}

/*
 * Well-clustered data: most distances are never computed. Elkan's first pass
 * (no bounds) and the final assignment (Lloyd's pass) compute all; sort
 * computes no more than the CPU engine's sort, whose walk stops by the same
 * rule (an entry farther from a than the distances to a and to the best so far).
 */
TEST_P(ElkanSortGpu, SkipsMostDistancesOnClusteredData)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int	m = GetParam();
	const int64_t n = 100000;
	for (int d : {16, 64})
	{
		auto		x = gpu_blobs(n, d, 64, 51 + d, 0.3);
		const auto	init = pgkm_test::pick_rows(x, d, 64, 5);
		pgkm_test::EngineResult r = expect_exact_method(m, x, d, init, 100, "clustered d = " + std::to_string(d));
		const double skipped = 1.0 - (double) r.distance_computations / (double) r.distance_computations_lloyd;
		printf("[ %s ] clustered n = 100000, d = %d, k = 64: %d iterations, %.1f %% of distances skipped\n",
			   pgkm_method_name(m), d, r.iterations, 100 * skipped);
		EXPECT_GT(skipped, 0.5) << "d = " << d;
		int64_t		fewest = INT64_MAX, full = 0;
		for (const pgkm_progress &p : r.progress)
			if (p.distance_computations > 0)
			{
				fewest = std::min(fewest, p.distance_computations);
				full += p.distance_computations == n * 64;
				EXPECT_GE(p.distance_computations, n) << "every row computes its own distance";
			}
		if (m == PGKM_METHOD_ELKAN)
		{
			EXPECT_EQ(full, 2) << "Elkan's first pass and the final assignment";
			EXPECT_LT(fewest, n * 64 / 8);
		}
		else
		{
			pgkm_test::EngineResult cpu = run_method(x, d, init, m, PGKM_DEVICE_CPU, 100);
			printf("[ %s ] the CPU engine's sort: %lld distances, the GPU's %lld\n", pgkm_method_name(m),
				   (long long) cpu.distance_computations, (long long) r.distance_computations);
			EXPECT_LE(r.distance_computations, cpu.distance_computations * 5 / 4);
		}
	}
}

/* Streamed rows keep Lloyd's passes (the state is only kept beside resident rows): still exact. */
TEST_P(ElkanSortGpu, StreamedRunsLloydPasses)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	expect_streamed_runs_lloyd(GetParam(), 16);
}

/* Through the ABI: the method is taken, each pass says what it ran and computed. */
TEST_P(ElkanSortGpu, AbiReportsPrunedPasses)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int	m = GetParam();
	const int32_t cm = m == PGKM_METHOD_ELKAN ? PGKM_CUDA_METHOD_ELKAN : PGKM_CUDA_METHOD_SORT;
	const int64_t n = 50000;
	const int	d = 20, k = 32;
	auto		x = gpu_blobs(n, d, k, 71, 0.3);
	auto		init = pgkm_test::pick_rows(x, d, k, 4);
	pgkm_cuda_config cfg = plugin_config(1);
	cfg.method = cm;
	void	   *h = nullptr;
	char		err[512] = "";
	ASSERT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	EXPECT_EQ(debug_method(h), cm);
	EXPECT_EQ(debug_hamerly(h), 0);
	ASSERT_EQ(api()->set_centroids(h, init.data(), err, sizeof(err)), 0) << err;
	std::vector<double> c((size_t) k * d);
	std::vector<int64_t> sizes(k);
	int64_t		last = 0;
	for (int it = 0; it < 6; it++)
	{
		pgkm_cuda_iter st {};
		ASSERT_EQ(api()->iterate(h, &st, c.data(), sizes.data(), err, sizeof(err)), 0) << err;
		EXPECT_EQ(st.method, cm);
		if (it == 0 && m == PGKM_METHOD_ELKAN)
		{
			EXPECT_EQ(st.distances, n * k) << "first pass: no bounds";
		}
		EXPECT_GE(st.distances, n);
		EXPECT_LE(st.distances, n * k);
		last = st.distances;
	}
	EXPECT_LT(last, n * k / 4) << "a converging run computes few distances";
	/* assign() is Lloyd's pass; the labels it leaves are the same, the next pass is still this method */
	std::vector<int32_t> labels(n);
	std::vector<double> dist2(n);
	double		inertia = 0;
	ASSERT_EQ(api()->assign(h, labels.data(), dist2.data(), sizes.data(), &inertia, err, sizeof(err)), 0) << err;
	EXPECT_EQ(count_not_fp64_argmin(x, d, c, labels), 0);
	pgkm_cuda_iter st {};
	ASSERT_EQ(api()->iterate(h, &st, c.data(), sizes.data(), err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.method, cm);
	EXPECT_EQ(st.moved, 0) << "the labels assign() left are already the argmin";
	api()->destroy(h);
}

INSTANTIATE_TEST_SUITE_P(Methods, ElkanSortGpu, ::testing::Values(PGKM_METHOD_ELKAN, PGKM_METHOD_SORT),
						 [](const ::testing::TestParamInfo<int> &i) { return method_param_name(i.param); });
