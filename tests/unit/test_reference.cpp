/*
 * test_reference.cpp: the engine against the brute-force fp64 reference
 * (tests/common/reference.h) on both distance paths, and known answers.
 */
#include "blobs.h"
#include "engine_run.h"
#include "reference.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

/* ---- against the reference, direct (d=2) and GEMM (d=16, 64, 300) distance paths ---- */
class AgainstReference : public ::testing::TestWithParam<std::tuple<int, int, int>>
{
};

TEST_P(AgainstReference, SameLabelsCentroidsInertiaIterations)
{
	auto [d, k, n] = GetParam();
	auto		x = blobs(n, d, k, 1000 + d, d >= 64 ? 4.0 : 1.5);
	auto		init = pick_rows(x, d, k, 7 + d);
	pgkm_options o = cpu_options(k);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.max_iter = 100;
	o.tol = 1e-4;
	o.n_threads = 2;
	EngineResult r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	RefResult	ref = ref_lloyd(x, d, init, o.max_iter, o.tol);
	ASSERT_EQ(r.k, k);
	EXPECT_GT(ref.iterations, 2);	/* the data makes Lloyd work */
	EXPECT_EQ(r.iterations, ref.iterations);
	EXPECT_EQ(r.converged, ref.converged ? 1 : 0);
	int64_t		mismatched = 0;
	for (size_t i = 0; i < r.labels.size(); i++)
		mismatched += r.labels[i] != ref.labels[i];
	EXPECT_EQ(mismatched, 0);
	for (size_t i = 0; i < ref.centers.size(); i++)
		ASSERT_NEAR(r.centroids[i], ref.centers[i], 1e-5) << "centroid value " << i;
	EXPECT_NEAR(r.inertia, ref.inertia, 1e-6 * ref.inertia);
	for (size_t i = 0; i < init.size(); i++)
		ASSERT_EQ(r.init[i], init[i]);
	EXPECT_EQ(r.repairs, 0);
	/* distances are Euclidean to the own centroid, summing to the inertia */
	double		s = 0;
	for (size_t i = 0; i < r.dist.size(); i++)
	{
		double		e = std::sqrt(sqdist_fp64(&x[i * d], &r.centroids[(size_t) r.labels[i] * d], d));
		ASSERT_NEAR(r.dist[i], e, 1e-9 * (1 + e));
		s += r.dist[i] * r.dist[i];
	}
	EXPECT_NEAR(s, r.inertia, 1e-9 * r.inertia);
	int64_t		total = 0;
	for (int c = 0; c < k; c++)
		total += r.sizes[c];
	EXPECT_EQ(total, n);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AgainstReference,
						 ::testing::Values(std::make_tuple(2, 8, 5000),
										   std::make_tuple(5, 12, 4000),
										   std::make_tuple(16, 10, 4000),
										   std::make_tuple(64, 10, 3000),
										   std::make_tuple(300, 6, 1500)));

/* ---- known answers ---- */
TEST(KnownAnswers, TwoSeparatedGroups)
{
	/* {0,0},{0,1},{1,0},{1,1} and the same shifted by 100 */
	std::vector<float> x = {0, 0, 0, 1, 1, 0, 1, 1, 100, 100, 100, 101, 101, 100, 101, 101};
	/* k-means++ always seeds one center per group here (random init may not: a local optimum) */
	for (int init : {PGKM_INIT_KMEANSPP})
		for (uint64_t seed = 0; seed < 20; seed++)
		{
			pgkm_options o = cpu_options(2);
			o.init = init;
			o.seed = seed;
			EngineResult r = run_engine(x, 2, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			ASSERT_EQ(r.k, 2);
			EXPECT_EQ(r.labels[0], r.labels[3]);
			EXPECT_NE(r.labels[0], r.labels[4]);
			int			lo = r.labels[0], hi = r.labels[4];
			EXPECT_DOUBLE_EQ(r.centroids[lo * 2], 0.5);
			EXPECT_DOUBLE_EQ(r.centroids[lo * 2 + 1], 0.5);
			EXPECT_DOUBLE_EQ(r.centroids[hi * 2], 100.5);
			EXPECT_DOUBLE_EQ(r.centroids[hi * 2 + 1], 100.5);
			EXPECT_DOUBLE_EQ(r.inertia, 4.0);	/* 8 points at squared distance 0.5 */
			EXPECT_EQ(r.sizes[0], 4);
			EXPECT_EQ(r.sizes[1], 4);
			EXPECT_EQ(r.converged, 1);
			for (double v : r.dist)
				EXPECT_DOUBLE_EQ(v, std::sqrt(0.5));
		}
}

TEST(KnownAnswers, KEqualsN)
{
	std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, -1, 0};
	pgkm_options o = cpu_options(5);
	EngineResult r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.k, 5);
	EXPECT_EQ(r.inertia, 0.0);
	std::vector<int32_t> l = r.labels;
	std::sort(l.begin(), l.end());
	EXPECT_EQ(l, (std::vector<int32_t>{0, 1, 2, 3, 4}));
	for (int c = 0; c < 5; c++)
		EXPECT_EQ(r.sizes[c], 1);
}

TEST(KnownAnswers, KEqualsOne)
{
	std::vector<float> x = {1, 10, 3, 20, 5, 30};
	pgkm_options o = cpu_options(1);
	EngineResult r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_DOUBLE_EQ(r.centroids[0], 3.0);
	EXPECT_DOUBLE_EQ(r.centroids[1], 20.0);
	EXPECT_DOUBLE_EQ(r.inertia, 4 + 100 + 4 + 100);
}

/*
 * cluster_inertia: each cluster's own sum of squared distances, against the
 * brute-force fp64 sums; with n_init > 1 (the best run's) and with clusters
 * dropped for lack of distinct points (renumbered labels).
 */
TEST(KnownAnswers, ClusterInertiaIsEachClustersSumOfSquaredDistances)
{
	auto		check = [](const std::vector<float> &x, int32_t d, const EngineResult &r) {
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		ASSERT_EQ(r.cluster_inertia.size(), (size_t) r.k);
		std::vector<double> want(r.k, 0.0);
		for (size_t i = 0; i < r.labels.size(); i++)
			want[r.labels[i]] += sqdist_fp64(&x[i * d], &r.centroids[(size_t) r.labels[i] * d], d);
		double		total = 0;
		for (int c = 0; c < r.k; c++)
		{
			EXPECT_NEAR(r.cluster_inertia[c], want[c], 1e-9 * (1 + want[c])) << "cluster " << c;
			total += r.cluster_inertia[c];
		}
		EXPECT_NEAR(total, r.inertia, 1e-12 * r.inertia);
	};
	auto		x = blobs(5000, 3, 7, 12, 2.0);
	pgkm_options o = cpu_options(7);
	o.n_init = 3;
	o.seed = 4;
	check(x, 3, run_engine(x, 3, o));
	/*
	 * 30 equal rows and a spread group; the second given centroid repeats the
	 * first, so its cluster holds no row during the iterations; after the
	 * final assignment it moves to the spread group's row farthest from its
	 * centroid, so every cluster's inertia is that of a real partition.
	 */
	std::vector<float> few(60, 0.0f);
	for (int i = 0; i < 20; i++)
	{
		few.push_back(10.0f + 0.3f * (float) (i % 5));
		few.push_back(10.0f + 0.2f * (float) (i / 5));
	}
	std::vector<double> init = {0, 0, 0, 0, 10, 10};
	o = cpu_options(3);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	EngineResult r = run_engine(few, 2, o);
	check(few, 2, r);
	EXPECT_EQ(r.k, 3);
	EXPECT_EQ(r.labels[0], 0);
	EXPECT_EQ(r.sizes[0], 30);
	EXPECT_EQ(r.sizes[1] + r.sizes[2], 20);
	EXPECT_GT(r.sizes[1], 0);
	EXPECT_GT(r.cluster_inertia[2], 0.0);
}
