/*
 * test_empty_clusters.cpp: k clusters whenever the data has k distinct
 * points (issue 9 section 5). A cluster left empty by the final assignment
 * (or missing after the initialisation) moves to a far row and the rows are
 * assigned again; fewer clusters only when every row coincides with a
 * centroid. The initial centroids stay the true start.
 */
#include "engine_run.h"
#include "reference.h"
#include "relocate.h"

#include <cmath>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

namespace
{
int
distinct_rows(const std::vector<float> &x, int32_t d)
{
	std::set<std::vector<float>> s;
	for (size_t i = 0; i < x.size(); i += d)
		s.insert(std::vector<float>(x.begin() + i, x.begin() + i + d));
	return (int) s.size();
}

/* Every cluster holds a row, labels are the exact argmins, sizes and inertia agree. */
void
expect_consistent(const std::vector<float> &x, int32_t d, const EngineResult &r)
{
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	std::vector<int64_t> sizes(r.k, 0);
	double		inertia = 0;
	for (size_t i = 0; i < r.labels.size(); i++)
	{
		ASSERT_EQ(r.labels[i], nearest_fp64(&x[i * d], r.centroids.data(), r.k, d)) << "row " << i;
		sizes[r.labels[i]]++;
		inertia += sqdist_fp64(&x[i * d], &r.centroids[(size_t) r.labels[i] * d], d);
	}
	for (int c = 0; c < r.k; c++)
	{
		EXPECT_GT(sizes[c], 0) << "cluster " << c;
		EXPECT_EQ(sizes[c], r.sizes[c]);
	}
	EXPECT_NEAR(r.inertia, inertia, 1e-9 * (1 + inertia));
}

/* A converged run is Lloyd's fixed point: each centroid the mean of its rows (to the sums' resolution). */
void
expect_fixed_point(const std::vector<float> &x, int32_t d, const EngineResult &r)
{
	expect_consistent(x, d, r);
	ASSERT_EQ(r.converged, 1);
	std::vector<double> sum((size_t) r.k * d, 0.0);
	std::vector<int64_t> size(r.k, 0);
	for (size_t i = 0; i < r.labels.size(); i++)
	{
		size[r.labels[i]]++;
		for (int32_t j = 0; j < d; j++)
			sum[(size_t) r.labels[i] * d + j] += x[i * d + j];
	}
	for (int c = 0; c < r.k; c++)
		for (int32_t j = 0; j < d; j++)
		{
			const double mean = sum[(size_t) c * d + j] / (double) size[c];
			EXPECT_NEAR(r.centroids[(size_t) c * d + j], mean, 1e-9 * (1 + std::fabs(mean)))
				<< "cluster " << c << " feature " << j;
		}
}
}							/* namespace */

/*
 * The mechanism of the issue, small: one Lloyd update moves centroid 2 next
 * to rows that then leave centroid 0 with none; the final assignment left it
 * empty, and it was dropped with a false "only 2 distinct points".
 */
TEST(EmptyClusters, EmptyAfterTheFinalAssignmentIsRepaired)
{
	const std::vector<float> x = {3, 9, 1, 5, 8, 7, 2, 4, 6, 8};
	const std::vector<double> init = {6.5, 5.5, 1.5, 9.5, 7.5, 9.5};
	pgkm_options o = cpu_options(3);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.max_iter = 1;
	EngineResult r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.k, 3);
	EXPECT_GE(r.repairs, 1);
	EXPECT_EQ(r.init, init);	/* the true start, all k rows */
	expect_consistent(x, 2, r);
}

/*
 * The whole class: small integer data sets (many duplicates and near-ties)
 * with given, random and k-means++ starts and a few Lloyd updates. k
 * clusters whenever the data has k distinct points, else exactly its
 * distinct points (and inertia 0); never an empty cluster.
 */
TEST(EmptyClusters, KClustersWheneverTheDataHasKDistinctPoints)
{
	std::mt19937_64 gen(77);
	int			repaired_runs = 0, fewer_runs = 0;
	for (int rep = 0; rep < 600; rep++)
	{
		const int32_t d = 1 + (int32_t) (gen() % 3), k = 2 + (int32_t) (gen() % 5);
		const int64_t n = k + (int64_t) (gen() % 12);
		std::vector<float> x((size_t) n * d);
		for (auto &v : x)
			v = (float) (gen() % 6);
		std::vector<double> init((size_t) k * d);
		for (auto &v : init)
			v = (double) (gen() % 12) * 0.5;
		pgkm_options o = cpu_options(k);
		o.init = rep % 3 == 0 ? PGKM_INIT_GIVEN : rep % 3 == 1 ? PGKM_INIT_RANDOM : PGKM_INIT_KMEANSPP;
		o.initial_centroids = init.data();
		o.max_iter = 1 + (int32_t) (gen() % 3);
		o.seed = gen();
		EngineResult r = run_engine(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		const int	distinct = distinct_rows(x, d);
		ASSERT_EQ(r.k, std::min(k, distinct)) << "case " << rep;
		EXPECT_EQ(r.k_requested, k);
		expect_consistent(x, d, r);
		if (r.k < k)
		{
			EXPECT_EQ(r.inertia, 0.0) << "case " << rep;	/* every row on a centroid */
			fewer_runs++;
		}
		if (o.init == PGKM_INIT_GIVEN)
		{
			EXPECT_EQ(r.init.size(), (size_t) r.k * d);
		}
		repaired_runs += r.repairs > 0;
	}
	EXPECT_GT(repaired_runs, 20);	/* the cases do exercise the repair */
	EXPECT_GT(fewer_runs, 20);
}

/* k-means++ that runs out of distinct points returns exactly them, its start included. */
TEST(EmptyClusters, FewerDistinctPointsGiveExactlyThem)
{
	std::vector<float> x;
	for (int rep = 0; rep < 30; rep++)
		for (float v : {0.f, 1.f, 4.f, 9.f})
			x.push_back(v);
	pgkm_options o = cpu_options(6);
	EngineResult r = run_engine(x, 1, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.k, 4);
	EXPECT_EQ(r.init.size(), 4u);
	EXPECT_EQ(r.inertia, 0.0);
	expect_consistent(x, 1, r);
}

TEST(EmptyClusters, FarthestDistinctRows)
{
	/* rows 0..5 in 1-d with their squared distances to their own centroid */
	const std::vector<float> x = {5, 7, 7, -0.0f, 0.0f, 3};
	const std::vector<double> dist2 = {0, 4, 4, 1, 1, 9};
	using pgkm::farthest_distinct_rows;
	EXPECT_EQ(farthest_distinct_rows(x.data(), 6, 1, dist2.data(), 1), (std::vector<int64_t>{5}));
	/* ties by row index; row 2 repeats row 1's value; -0 equals 0; row 0 is on its centroid */
	EXPECT_EQ(farthest_distinct_rows(x.data(), 6, 1, dist2.data(), 4), (std::vector<int64_t>{5, 1, 3}));
	EXPECT_TRUE(farthest_distinct_rows(x.data(), 1, 1, dist2.data(), 3).empty());
}

/*
 * Rows on the line x = y (an audit's data, values / 64; sklearn from this
 * start ends at inertia 57.338): the split of the first empty cluster moved
 * its halves by (+delta, -delta), across the line, so every row tied between
 * them and the split was given up; the final assignment then moved the
 * empty cluster onto a row and the run was reported converged at inertia
 * 333 with centroids that were not their rows' means. Now the next split
 * direction separates them and the run ends at a fixed point.
 */
TEST(EmptyClusters, SplitsSeparateRowsOnADiagonal)
{
	const int	v[] = {538, 545, 543, 542, 543, 539, 542, 538, 542, 538, 540, 542, 540, 543, 542, 542, 545,
		536, 536, 543, 544, 547, 543, 543, 538, 543, 543, 537, 538, 143, 133, 142, 143, 142, 143, 144, 139,
		143, 141, 139, 143, 147, 137, 137, 137, 148, 141, 142, 140, 139, 136, 143, 143, 136, 139, 140, 142,
		143, 146, 146, 146, 146, 138, 348, 345, 345, 338, 339, 347, 346, 344, 343, 339, 346, 348, 350, 345,
		344, 341, 348, 350, 343, 345, 345, 343, 336, 343, 346, 340, 342, 334, 349, 346, 345, 344, 342, 344,
		343, 344, 344, 588, 396, 506, 449, 416, 337, 528, 425, 440, 518, 419, 490, 483, 539, 553, 433, 547,
		482, 496, 475, 538, 411, 505, 563, 470, 618, 441, 502, 457, 449, 417, 454, 485, 437, 545, 585, 390,
		542, 500};
	std::vector<float> x;
	for (int q : v)
		x.insert(x.end(), {q / 64.0f, q / 64.0f});
	const std::vector<double> init = {8.40625, 8.40625, 2.21875, 2.21875, 2.234375, 2.234375};
	const EngineResult r = run_engine(x, 2, given_options(PGKM_METHOD_LLOYD, init, 3, 300, 0.0));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.k, 3);
	EXPECT_GE(r.repairs, 1);
	expect_fixed_point(x, 2, r);
	EXPECT_LT(r.inertia, 60.0);
}

/*
 * The class: rows whose features are all equal (a column given twice or
 * four times), random starts that leave clusters empty mid-run; every
 * converged run is a fixed point, and the runs did repair clusters.
 */
TEST(EmptyClusters, RepeatedColumnsEndAtAFixedPoint)
{
	std::mt19937 gen(17);
	int			repaired = 0;
	for (int32_t d : {2, 4})
		for (int t = 0; t < 80; t++)
		{
			const int	n = 40 + (int) (gen() % 120), groups = 2 + (int) (gen() % 4);
			std::vector<float> x;
			for (int i = 0; i < n; i++)
			{
				/* groups far apart, a few distinct values each; the start: rows at random */
				const float u = (float) (640 * (int) (gen() % groups) + (int) (gen() % 24)) / 64.0f;
				for (int32_t j = 0; j < d; j++)
					x.push_back(u);
			}
			pgkm_options o = cpu_options(groups + 1 + (int32_t) (gen() % 3));	/* more than the groups */
			o.init = PGKM_INIT_RANDOM;
			o.seed = gen();
			o.tol = 0;
			const EngineResult r = run_engine(x, d, o);
			SCOPED_TRACE("d " + std::to_string(d) + ", case " + std::to_string(t));
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			repaired += r.repairs > 0;
			if (r.converged)
				expect_fixed_point(x, d, r);
		}
	EXPECT_GE(repaired, 5) << "the cases must leave clusters empty mid-run";
}

/*
 * A run from random rows (tol 0) that leaves clusters empty: it converges at
 * a fixed point of the data on its sums' grid, and no iteration's inertia
 * exceeds the first one's (a split may add a little, never send halves out
 * of their cluster).
 */
static EngineResult
run_with_splits(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed)
{
	pgkm_options o = cpu_options(k);
	o.init = PGKM_INIT_RANDOM;
	o.seed = seed;
	o.tol = 0;
	EngineResult r = run_engine(x, d, o);
	EXPECT_EQ(r.status, PGKM_DONE) << r.err;
	if (r.status != PGKM_DONE)
		return r;
	EXPECT_TRUE(r.converged);
	EXPECT_GE(r.repairs, 1);
	double		first = -1;
	for (const pgkm_progress &p : r.progress)
		if (p.iteration >= 1)
		{
			if (first < 0)
				first = p.inertia;
			EXPECT_LE(p.inertia, first) << "iteration " << p.iteration;
		}
	expect_fixed_point(ref_on_sum_grid(x, d), d, r);	/* the data the run clustered */
	return r;
}

/*
 * A split's push follows the data's robust spread and stops a quarter of the
 * way to the nearest other centroid, not a variance that a few far rows
 * inflate, nor 2^-10 of a large coordinate. Audits' tables:
 * - 1,800 rows of 2 sin(i), every 50th one replaced by +-1e3..1e7, k = 900:
 *   halves were pushed about 1e3 away and left their cluster; the inertia
 *   rose from 0.0012 at iteration 2 to 1.14 at 14, and the run converged
 *   after 185 iterations at 23 times its low;
 * - a column of zeros but one 1e16 (its spread is 0: the other column's is
 *   used): 25 -> 366 -> 4463 -> 8e25;
 * - one column, mostly zeros, and one 1e6 (spread 0, no other column: the
 *   data's scale, 1.9e5, pushed halves 190 away in a cluster 10 wide):
 *   2.1 -> 54 -> 442 -> 856,895.
 */
TEST(EmptyClusters, SplitsIgnoreFarRowsScale)
{
	std::vector<float> x;
	for (int i = 1; i <= 1800; i++)
	{
		double		v = std::sin((double) i) * 2;
		if (i % 50 == 0)
			v = (i % 100 == 0 ? -1 : 1) * std::pow(10.0, 3 + (i / 50) % 5);
		x.push_back((float) v);
	}
	EXPECT_LT(run_with_splits(x, 1, 900, 1).iterations, 40);

	const std::vector<float> y = {10.8f, 0, 20.6f, 0, 10.2f, 0, 30.1f, 0, 0.7f, 0, 20.2f, 0, 20.5f, 0,
		30.2f, 0, 20.8f, 0, 10.0f, 0, 30.9f, 0, 0.6f, 0, 20.4f, 1e16f, 10.1f, 0, 1.0f, 0};
	run_with_splits(y, 2, 10, 97);

	const std::vector<float> z = {0, 9.3f, 0, 2.5f, 8.5f, 0, 0, 0, 1e6f, 0, 0, 0, 8.5f, 2.0f, 9.8f, 7.7f,
		1.2f, 0, 1.8f, 0, 0, 0, 4.8f, 0, 0, 5.5f, 0};
	run_with_splits(z, 1, 7, 2);
}
