/*
 * test_update_reuse.cpp: the CPU device's iterations keep a row's fp64
 * distance while its label and centroid stay the same, and a cluster's sums
 * while no row joins or leaves it (cpu_device.cpp). Checked per iteration
 * against a brute-force fp64 replay: every iteration's inertia and moved
 * rows, and the final centroids bit for bit, for Lloyd and the pruned
 * methods at 1, 2 and 3 threads; where the centroids change between passes
 * (the driver's repairs), on the device itself and through a run that
 * repairs one.
 */
#include "blobs.h"
#include "device.h"
#include "engine_run.h"
#include "reference.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

/* Inertia (rows in order) and labels of x against centers, in fp64. */
static double
replay_pass(const std::vector<float> &x, int32_t d, const std::vector<double> &centers,
			std::vector<int32_t> &labels, int64_t *moved)
{
	const int64_t n = (int64_t) (x.size() / d);
	const int32_t k = (int32_t) (centers.size() / d);
	double		inertia = 0;
	*moved = 0;
	for (int64_t i = 0; i < n; i++)
	{
		double		d2;
		const int32_t b = nearest_fp64(&x[(size_t) i * d], centers.data(), k, d, &d2);
		*moved += labels[i] != b;
		labels[i] = b;
		inertia += d2;
	}
	return inertia;
}

/*
 * Separated clusters whose last labels settle over many iterations, each
 * moving a few rows: most clusters and rows are unchanged between passes.
 */
TEST(UpdateReuse, EveryIterationAsTheReplay)
{
	const int32_t d = 8, k = 48;
	const auto	x = wu_hong_blobs(6000, d, k, 0.05, 5);
	const auto	init = pick_rows(x, d, k, 6);
	const int64_t n = (int64_t) (x.size() / d);
	/* the replay: labels, inertia and moved rows of every pass, then the update */
	std::vector<double> inertia, centers = init;
	std::vector<int64_t> moved;
	std::vector<int32_t> labels(n, -1);
	std::vector<int64_t> sizes(k);
	for (int it = 0; it < 300; it++)
	{
		int64_t		mv;
		inertia.push_back(replay_pass(x, d, centers, labels, &mv));
		moved.push_back(mv);
		ref_update(x.data(), n, d, labels.data(), k, centers.data(), sizes.data());
		if (mv == 0)
			break;
	}
	ASSERT_GT(inertia.size(), 10u) << "the data settles over several passes";
	int			few = 0;
	for (int64_t mv : moved)
		few += mv > 0 && mv < n / 100;
	ASSERT_GT(few, 3) << "passes that move few rows";
	for (int32_t method : {PGKM_METHOD_LLOYD, PGKM_METHOD_YINYANG, PGKM_METHOD_AUTO})
		for (int threads : {1, 2, 3})
		{
			const std::string what = std::string(pgkm_method_name(method)) + ", " +
				std::to_string(threads) + " threads";
			EngineResult r = run_engine(x, d, given_options(method, init, k, 300, 0, threads));
			ASSERT_EQ(r.status, PGKM_DONE) << r.err << " " << what;
			ASSERT_EQ((size_t) r.iterations, inertia.size()) << what;
			for (const pgkm_progress &p : r.progress)
			{
				if (p.iteration == 0)
					continue;
				const size_t j = (size_t) p.iteration - 1;
				EXPECT_NEAR(p.inertia, inertia[j], 1e-12 * inertia[j]) << what << ", iteration " << p.iteration;
				EXPECT_EQ(p.moved, moved[j]) << what << ", iteration " << p.iteration;
			}
			EXPECT_EQ(r.centroids, centers) << what;
			EXPECT_EQ(r.labels, labels) << what;
		}
}

/*
 * The driver may change centroids between passes (an empty cluster's
 * repair): a centroid moved while its rows keep their label must not keep
 * their old distances. Straight on the device: settle, shift one
 * centroid a little, iterate once; the pass's inertia and the update are
 * the replay's against the shifted centroids.
 */
TEST(UpdateReuse, CentroidMovedBetweenPasses)
{
	const int32_t d = 4, k = 12;
	const auto	x = wu_hong_blobs(2400, d, k, 0.02, 8);
	const auto	init = pick_rows(x, d, k, 9);
	const int64_t n = (int64_t) (x.size() / d);
	std::vector<double> mean(d, 0.0);
	std::vector<float> maxabs(d, 0.0f);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
		{
			mean[j] += x[(size_t) i * d + j] / (double) n;
			maxabs[j] = std::max(maxabs[j], std::fabs(x[(size_t) i * d + j]));
		}
	for (int32_t method : {PGKM_METHOD_LLOYD, PGKM_METHOD_YINYANG})
		for (int threads : {1, 2})
		{
			const std::string what = std::string(pgkm_method_name(method)) + ", " +
				std::to_string(threads) + " threads";
			pgkm_options o = given_options(method, init, k, 100, 0, threads);
			pgkm::ThreadPool pool(threads, nullptr, nullptr);
			auto		dev = pgkm::make_cpu_device(x.data(), n, d, k, mean.data(), maxabs.data(), &pool, &o);
			std::vector<double> c = init;
			std::vector<int64_t> sizes(k);
			dev->set_centroids(c.data(), k);
			pgkm::IterStats st;
			for (int it = 0; it < 30; it++)
				dev->iterate(&st, c.data(), sizes.data());
			ASSERT_EQ(st.moved, 0) << what << ": settled";
			for (int32_t j = 0; j < d; j++)
				c[(size_t) 3 * d + j] += 1e-3;
			dev->set_centroids(c.data(), k);
			std::vector<int32_t> labels(n, -1);
			int64_t		mv;
			const double want = replay_pass(x, d, c, labels, &mv);
			std::vector<double> next = c;
			ref_update(x.data(), n, d, labels.data(), k, next.data(), sizes.data());
			dev->iterate(&st, c.data(), sizes.data());
			EXPECT_NEAR(st.inertia, want, 1e-12 * want) << what;
			EXPECT_EQ(c, next) << what;
		}
}

/*
 * Two equal starting centroids: the first pass leaves one cluster empty and
 * the driver splits another between passes. Iteration j's inertia is the
 * fp64 inertia against the centroids a run stopped after j - 1 iterations
 * returns.
 */
TEST(UpdateReuse, RunWithARepair)
{
	const int32_t d = 4, k = 12;
	const auto	x = wu_hong_blobs(2400, d, k, 0.02, 8);
	auto		init = pick_rows(x, d, k, 9);
	for (int32_t j = 0; j < d; j++)
		init[(size_t) (k - 1) * d + j] = init[j];
	const int64_t n = (int64_t) (x.size() / d);
	for (int threads : {1, 2})
	{
		EngineResult full = run_engine(x, d, given_options(PGKM_METHOD_LLOYD, init, k, 12, 0, threads));
		ASSERT_EQ(full.status, PGKM_DONE) << full.err;
		ASSERT_GT(full.repairs, 0) << "the driver repaired a cluster";
		ASSERT_GE(full.iterations, 6);
		for (int it = 2; it <= 6; it++)
		{
			EngineResult before = run_engine(x, d, given_options(PGKM_METHOD_LLOYD, init, k, it - 1, 0, threads));
			ASSERT_EQ(before.status, PGKM_DONE) << before.err;
			std::vector<int32_t> labels(n, -1);
			int64_t		mv;
			const double want = replay_pass(x, d, before.centroids, labels, &mv);
			int			found = 0;
			for (const pgkm_progress &p : full.progress)
			{
				if (p.iteration == it)
				{
					found++;
					EXPECT_NEAR(p.inertia, want, 1e-12 * want) << threads << " threads, iteration " << it;
				}
			}
			EXPECT_EQ(found, 1) << threads << " threads, iteration " << it << " reported once";
		}
	}
}
