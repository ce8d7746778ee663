/*
 * test_policies.cpp: the documented policies: fewer distinct points than k,
 * unfillable given centroids, empty-cluster repair.
 */
#include "blobs.h"
#include "engine_run.h"

#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

/* ---- policies ---- */
TEST(Policies, FewerDistinctPointsThanK)
{
	/* three distinct points, each repeated */
	std::vector<float> x;
	for (int rep = 0; rep < 4; rep++)
		for (float v : {0.f, 0.f, 5.f, 5.f, -3.f, 2.f})
			x.push_back(v);
	for (int init : {PGKM_INIT_KMEANSPP, PGKM_INIT_RANDOM})
	{
		pgkm_options o = cpu_options(5);
		o.init = init;
		EngineResult r = run_engine(x, 2, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.k, 3);
		EXPECT_EQ(r.k_requested, 5);
		EXPECT_EQ(r.inertia, 0.0);
		ASSERT_EQ(r.sizes.size(), 3u);
		for (int c = 0; c < 3; c++)
			EXPECT_EQ(r.sizes[c], 4);
		for (int32_t l : r.labels)
			EXPECT_LT(l, 3);
	}
	/* all rows equal: one cluster */
	std::vector<float> same(40, 1.5f);
	pgkm_options o = cpu_options(3);
	EngineResult r = run_engine(same, 4, o);
	ASSERT_EQ(r.status, PGKM_DONE);
	EXPECT_EQ(r.k, 1);
	EXPECT_EQ(r.sizes[0], 10);
}

TEST(Policies, GivenCentroidsOnFewerDistinctPointsDropUnfillableClusters)
{
	std::vector<float> x;
	for (int rep = 0; rep < 4; rep++)
		for (float v : {0.f, 0.f, 5.f, 5.f, -3.f, 2.f})
			x.push_back(v);
	/* five given centroids, two of them duplicates: only three clusters can hold points */
	std::vector<double> init = {0, 0, 5, 5, -3, 2, 0, 0, 5, 5};
	for (double tol : {1e-4, 0.0})
	{
		pgkm_options o = cpu_options(5);
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
		o.tol = tol;
		EngineResult r = run_engine(x, 2, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		EXPECT_EQ(r.k, 3);
		EXPECT_EQ(r.k_requested, 5);
		EXPECT_EQ(r.inertia, 0.0);
		EXPECT_EQ(r.sizes, (std::vector<int64_t>{4, 4, 4}));
		EXPECT_EQ(r.centroids, (std::vector<double>{0, 0, 5, 5, -3, 2}));
		EXPECT_EQ(r.init, (std::vector<double>{0, 0, 5, 5, -3, 2}));
		EXPECT_EQ(r.labels[0], 0);
		EXPECT_EQ(r.labels[1], 1);
		EXPECT_EQ(r.labels[2], 2);
		EXPECT_GE(r.repairs, 1);
		EXPECT_LT(r.iterations, 10);
	}
}

TEST(Policies, EmptyClusterIsSplitFromTheLargest)
{
	auto		x = blobs(3000, 2, 3, 31, 1.0);
	/* third centroid far away from all data: it gets no point in iteration 1 */
	std::vector<double> init = {x[0], x[1], x[2], x[3], 1e4, 1e4};
	pgkm_options o = cpu_options(3);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.tol = 0;					/* run to strict convergence */
	EngineResult r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.converged, 1);
	EXPECT_GE(r.repairs, 1);
	EXPECT_EQ(r.k, 3);
	for (int c = 0; c < 3; c++)
		EXPECT_GT(r.sizes[c], 0) << "cluster " << c;
	EXPECT_EQ(r.init, init);
	/* the repaired run ends at a Lloyd fixed point: centroids are the means */
	std::vector<double> m(6, 0.0);
	for (size_t i = 0; i < r.labels.size(); i++)
		for (int j = 0; j < 2; j++)
			m[r.labels[i] * 2 + j] += x[i * 2 + j] / (double) r.sizes[r.labels[i]];
	for (int i = 0; i < 6; i++)
		EXPECT_NEAR(r.centroids[i], m[i], 1e-9);
}
