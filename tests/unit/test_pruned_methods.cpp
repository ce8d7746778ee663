/*
 * test_pruned_methods.cpp: the pruned methods (elkan, hamerly, yinyang,
 * sort, auto) through the engine's C API: the same run as the brute-force
 * fp64 reference (labels, centroids, iterations, inertia) on Wu & Hong's
 * data and on adversarial data, the same run as 'lloyd' where the driver
 * repairs empty clusters, the distance computations they report, thread
 * count independence, 'auto''s choice and memory estimate, and the device
 * rules.
 */
#include "blobs.h"
#include "engine_run.h"
#include "reference.h"

#include "auto_assign.h"
#include "cpu_assign.h"
#include "internal_hooks.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

static const int32_t kPruned[] = {PGKM_METHOD_ELKAN, PGKM_METHOD_HAMERLY, PGKM_METHOD_YINYANG,
								  PGKM_METHOD_SORT, PGKM_METHOD_AUTO};

/* The run equals the reference's: labels, centroids bit for bit, iterations, inertia. */
static void
expect_same_as_reference(const std::vector<float> &x, int32_t d, const std::vector<double> &init,
						 int32_t method, int max_iter, double tol, const std::string &what)
{
	const int32_t k = (int32_t) (init.size() / d);
	EngineResult r = run_engine(x, d, given_options(method, init, k, max_iter, tol));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err << " " << what;
	RefResult	ref = ref_lloyd(x, d, init, max_iter, tol);
	ASSERT_EQ(r.k, k) << what;
	EXPECT_EQ(r.iterations, ref.iterations) << what;
	EXPECT_EQ(r.converged, ref.converged ? 1 : 0) << what;
	int64_t		wrong = 0;
	for (size_t i = 0; i < r.labels.size(); i++)
		wrong += r.labels[i] != ref.labels[i];
	EXPECT_EQ(wrong, 0) << what;
	EXPECT_EQ(r.centroids, ref.centers) << what;
	EXPECT_NEAR(r.inertia, ref.inertia, 1e-12 * ref.inertia + 1e-300) << what;
	EXPECT_EQ(r.repairs, 0) << what;
	/* what was reported: one entry per pass, at most Lloyd's n k each */
	int64_t		sum = 0;
	for (const pgkm_progress &p : r.progress)
	{
		sum += p.distance_computations;
		EXPECT_LE(p.distance_computations, (int64_t) (x.size() / d) * k);
	}
	EXPECT_EQ(sum, r.distance_computations) << what;
	EXPECT_EQ(r.distance_computations_lloyd, (int64_t) (x.size() / d) * k * (r.iterations + 1));
}

class PrunedRun : public ::testing::TestWithParam<int32_t>
{
};

/* Wu & Hong's data from separated (sigma^2 = 0.0125) to overlapping (0.3) clusters. */
TEST_P(PrunedRun, SameAsReferenceOnWuHongData)
{
	const int32_t method = GetParam();
	for (double s2 : {0.0125, 0.1, 0.3})
	{
		const int32_t d = 8, k = 48;
		auto		x = wu_hong_blobs(4800, d, k, s2, 3);
		auto		init = pick_rows(x, d, k, 4);
		expect_same_as_reference(x, d, init, method, 300, 0, "sigma2 " + std::to_string(s2));
		if (s2 == 0.0125 && method != PGKM_METHOD_AUTO)
		{
			EngineResult r = run_engine(x, d, given_options(method, init, k, 300, 0));
			EXPECT_LT(r.distance_computations, r.distance_computations_lloyd / 2)
				<< "separated clusters: most distances skipped";
			EXPECT_EQ(r.method_used, pgkm_method_name(method));
		}
	}
}

/*
 * Adversarial shapes: integer data full of exact ties and duplicate rows,
 * d = 1, k = 1, k = n (every row its own centroid), and two centroids
 * started inside one blob (clusters that merge and split points between
 * them), with tol = 0 and with sklearn's default tol.
 */
TEST_P(PrunedRun, SameAsReferenceOnAdversarialData)
{
	const int32_t method = GetParam();
	std::mt19937_64 gen(21);
	{
		const int32_t d = 3, k = 12;
		std::vector<float> x(1500 * d);
		for (auto &v : x)
			v = (float) (gen() % 7);
		std::vector<double> init;	/* k distinct integer points */
		for (int c = 0; c < k; c++)
		{
			init.push_back(c % 7);
			init.push_back((3 * c) % 7);
			init.push_back(3 * (c / 7));
		}
		expect_same_as_reference(x, d, init, method, 100, 0, "integer ties");
	}
	{
		auto		x = wu_hong_blobs(2000, 1, 10, 0.001, 6);
		expect_same_as_reference(x, 1, pick_rows(x, 1, 10, 7), method, 300, 0, "d = 1");
	}
	{
		auto		x = blobs(500, 4, 3, 8);
		expect_same_as_reference(x, 4, pick_rows(x, 4, 1, 9), method, 50, 1e-4, "k = 1");
	}
	{
		auto		x = blobs(64, 5, 4, 10);
		std::vector<double> init(x.begin(), x.end());
		expect_same_as_reference(x, 5, init, method, 50, 0, "k = n");
	}
	{
		std::vector<double> centres;
		auto		x = blobs(3000, 6, 4, 11, 1.0, 20.0, &centres);
		std::vector<double> init(centres.begin(), centres.begin() + 6);	/* two in blob 0 */
		init.insert(init.end(), centres.begin(), centres.begin() + 6);
		for (int j = 0; j < 6; j++)
			init[6 + j] += 0.01;
		init.insert(init.end(), centres.begin() + 6, centres.end());
		expect_same_as_reference(x, 6, init, method, 300, 1e-4, "merging");
	}
}

/*
 * Where the reference does not apply (the driver splits empty clusters and
 * drops unfillable ones): every method makes 'lloyd''s run, and every final
 * label is the fp64 argmin of the final centroids. (Splitting a cluster of
 * identical rows puts them at exactly equal distances from the two halves:
 * the lowest index must win there.)
 */
TEST(PrunedRuns, SameRunWithEmptyClustersAndDuplicates)
{
	struct Case
	{
		const char *what;
		std::vector<float> x;
		int32_t		d;
		std::vector<double> init;
	};
	std::vector<Case> cases;
	{
		std::vector<double> centres;
		auto		x = blobs(2000, 3, 5, 12, 0.5, 30.0, &centres);
		std::vector<double> init = centres;
		for (int c = 0; c < 4; c++)	/* four more centroids far from every row: empty */
			for (int j = 0; j < 3; j++)
				init.push_back(1000.0 + 100 * c + j);
		cases.push_back({"empty clusters", x, 3, init});
	}
	{
		std::vector<float> x;
		for (int i = 0; i < 900; i++)	/* three distinct rows, k = 5 */
			for (int j = 0; j < 2; j++)
				x.push_back((float) ((i % 3) * 50 + j));
		std::vector<double> init = {0, 1, 0.5, 1.5, 50, 51, 100, 101, 100.5, 101.5};
		cases.push_back({"fewer distinct rows than k", x, 2, init});
	}
	for (const Case &c : cases)
	{
		const int32_t k = (int32_t) (c.init.size() / c.d);
		const int64_t n = (int64_t) (c.x.size() / c.d);
		EngineResult first;
		for (int32_t method : {PGKM_METHOD_LLOYD, PGKM_METHOD_ELKAN, PGKM_METHOD_HAMERLY,
		PGKM_METHOD_YINYANG, PGKM_METHOD_SORT, PGKM_METHOD_AUTO})
		{
			EngineResult r = run_engine(c.x, c.d, given_options(method, c.init, k, 100, 0));
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			EXPECT_GT(r.repairs, 0) << c.what << ": the case exercises the repair";
			for (int64_t i = 0; i < n; i++)
				ASSERT_EQ(r.labels[i], nearest_fp64(&c.x[i * c.d], r.centroids.data(), r.k, c.d))
					<< c.what << " " << pgkm_method_name(method) << " row " << i;
			if (first.status != PGKM_DONE)
			{
				first = r;
				continue;
			}
			const std::string what = std::string(c.what) + " " + pgkm_method_name(method);
			EXPECT_EQ(r.k, first.k) << what;
			EXPECT_EQ(r.repairs, first.repairs) << what;
			EXPECT_EQ(r.iterations, first.iterations) << what;
			EXPECT_EQ(r.labels, first.labels) << what;
			EXPECT_EQ(r.centroids, first.centroids) << what;
			EXPECT_EQ(r.inertia, first.inertia) << what;
		}
	}
}

/* One thread or three: the same result and the same distance computations. */
TEST_P(PrunedRun, ThreadCountIndependent)
{
	const int32_t method = GetParam();
	auto		x = wu_hong_blobs(6000, 16, 40, 0.02, 13);
	auto		init = pick_rows(x, 16, 40, 14);
	pgkm_options o = given_options(method, init, 40, 300, 0);
	o.n_threads = 1;
	EngineResult a = run_engine(x, 16, o);
	o.n_threads = 3;
	EngineResult b = run_engine(x, 16, o);
	ASSERT_EQ(a.status, PGKM_DONE) << a.err;
	ASSERT_EQ(b.status, PGKM_DONE) << b.err;
	EXPECT_EQ(a.labels, b.labels);
	EXPECT_EQ(a.centroids, b.centroids);
	EXPECT_EQ(a.inertia, b.inertia);
	if (method != PGKM_METHOD_AUTO)	/* auto's switches follow the clock */
	{
		EXPECT_EQ(a.distance_computations, b.distance_computations);
	}
}

INSTANTIATE_TEST_SUITE_P(Methods, PrunedRun, ::testing::ValuesIn(kPruned),
						 [](const ::testing::TestParamInfo<int32_t> &p) {
							 return std::string(pgkm_method_name(p.param));
						 });

/* Lloyd reports n k distance computations per pass and its own name. */
TEST(MethodReports, LloydCountsEveryDistance)
{
	auto		x = wu_hong_blobs(1200, 4, 6, 0.01, 15);
	auto		init = pick_rows(x, 4, 6, 16);
	EngineResult r = run_engine(x, 4, given_options(PGKM_METHOD_LLOYD, init, 6, 100, 0));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.method_used, "lloyd");
	EXPECT_EQ(r.distance_computations, r.distance_computations_lloyd);
	for (size_t i = 1; i < r.progress.size(); i++)
	{
		EXPECT_EQ(r.progress[i].distance_computations, 1200 * 6);
		EXPECT_EQ(r.progress[i].method, PGKM_METHOD_LLOYD);
	}
	EXPECT_EQ(r.progress[0].distance_computations, 0) << "the init step assigns nothing";
}

/* 'auto' says what it ran, pass by pass, and the trail names it. */
TEST(MethodReports, AutoNamesWhatItRan)
{
	const double old = pgkm_internal_set_auto_counted_seconds(1.0);	/* the same choices on any machine */
	auto		x = wu_hong_blobs(20000, 8, 64, 0.01, 17);
	auto		init = pick_rows(x, 8, 64, 18);
	EngineResult r = run_engine(x, 8, given_options(PGKM_METHOD_AUTO, init, 64, 300, 0));
	pgkm_internal_set_auto_counted_seconds(old);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	/* dense passes (reported as lloyd) until the counts say pruning pays, then yinyang */
	EXPECT_NE(r.method_used.find("yinyang"), std::string::npos) << r.method_used;
	std::string trail;
	int32_t		last = -1;
	for (size_t i = 1; i < r.progress.size(); i++)
		if (r.progress[i].method != last)
		{
			last = r.progress[i].method;
			trail += trail.empty() ? "" : ", then ";
			trail += pgkm_method_name(last);
			if (i > 1)
				trail += " from iteration " + std::to_string(r.progress[i].iteration);
		}
	EXPECT_EQ(r.method_used, trail);
}

/* The first choice: by k, within the memory budget; Lloyd when nothing can pay or fit. */
TEST(AutoMethod, FirstChoiceFollowsShapeAndMemory)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.n_threads = 2;
	EXPECT_EQ(pgkm::auto_first_method(100000, 8, 2, &o), PGKM_METHOD_LLOYD);
	EXPECT_EQ(pgkm::auto_first_method(100000, 8, 8, &o), PGKM_METHOD_HAMERLY);
	EXPECT_EQ(pgkm::auto_first_method(100000, 8, 32, &o), PGKM_METHOD_YINYANG);
	EXPECT_EQ(pgkm::auto_first_method(100000, 8, 256, &o), PGKM_METHOD_YINYANG);
	o.k = 256;
	o.method = PGKM_METHOD_LLOYD;
	/* memory_limit is the engine's own budget: the caller's data buffer is not in it */
	const int64_t lloyd = pgkm_estimate_bytes(100000, 8, &o);
	o.memory_limit = lloyd + 100000LL * 24 + (1 << 20);	/* room for Hamerly's bounds and scratch, not Yinyang's */
	EXPECT_EQ(pgkm::auto_first_method(100000, 8, 256, &o), PGKM_METHOD_HAMERLY);
	o.memory_limit = lloyd;	/* no room for bounds */
	EXPECT_EQ(pgkm::auto_first_method(100000, 8, 256, &o), PGKM_METHOD_LLOYD);
}

/* The estimate counts each method's bounds: Elkan's n k floats dominate. */
TEST(AutoMethod, EstimateCountsTheBounds)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = 512;
	o.n_threads = 2;
	const int64_t n = 200000;
	auto		est = [&](int32_t m) {
		o.method = m;
		return pgkm_estimate_bytes(n, 16, &o);
	};
	const int64_t lloyd = est(PGKM_METHOD_LLOYD);
	EXPECT_GE(est(PGKM_METHOD_ELKAN), lloyd + n * 512 * 4);
	EXPECT_GE(est(PGKM_METHOD_YINYANG), lloyd + n * 32 * 4);
	EXPECT_LT(est(PGKM_METHOD_YINYANG), est(PGKM_METHOD_ELKAN));
	EXPECT_GE(est(PGKM_METHOD_HAMERLY), lloyd + n * 16);
	EXPECT_LT(est(PGKM_METHOD_HAMERLY), est(PGKM_METHOD_YINYANG));
	EXPECT_GE(est(PGKM_METHOD_SORT), lloyd + 512LL * 511 * 12);
	EXPECT_EQ(est(PGKM_METHOD_AUTO), est(PGKM_METHOD_YINYANG));
	o.memory_limit = (int64_t) n * (16 * 4 + 6) + est(PGKM_METHOD_HAMERLY) + (1 << 20);
	EXPECT_EQ(est(PGKM_METHOD_AUTO), est(PGKM_METHOD_HAMERLY)) << "auto estimates what it will choose";
}

/*
 * The GPU centroid device takes Lloyd, AUTO and every pruned method;
 * kernel k-means (its own GPU path) is refused with the list it runs.
 */
TEST(PrunedDevice, MethodOnGpu)
{
	std::string why;
	for (int32_t m : {PGKM_METHOD_LLOYD, PGKM_METHOD_AUTO, PGKM_METHOD_HAMERLY, PGKM_METHOD_YINYANG,
					  PGKM_METHOD_ELKAN, PGKM_METHOD_SORT})
		EXPECT_TRUE(pgkm::method_on_gpu(m, &why)) << pgkm_method_name(m);
	EXPECT_EQ(why, "");
	EXPECT_FALSE(pgkm::method_on_gpu(PGKM_METHOD_KERNEL, &why));
	EXPECT_EQ(why, "method \"kernel\" has no GPU centroid pass; the GPU engine runs \"lloyd\", \"hamerly\", "
			  "\"yinyang\", \"elkan\", \"sort\" and \"auto\"");
}

/*
 * Every pruned method runs on the GPU: device 'gpu' and 'auto' ask the
 * plugin for it (the fake plugin echoes the method it was asked for) and
 * AUTO runs Lloyd's passes there.
 */
#ifdef PGKM_FAKE_CUDA_PLUGIN
TEST(PrunedDevice, GpuRunsEveryPrunedMethod)
{
	const std::string saved = pgkm_internal_set_driver_library("");
	std::vector<float> x = {0, 0, 0, 1, 10, 10, 10, 11};
	pgkm_options o = cpu_options(2);
	o.gpu_plugin_path = PGKM_FAKE_CUDA_PLUGIN;
	o.method = PGKM_METHOD_AUTO;
	o.device = PGKM_DEVICE_GPU;
	EngineResult r = run_engine(x, 2, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "gpu");
	EXPECT_EQ(r.method_used, "lloyd");
	for (int dev : {PGKM_DEVICE_GPU, PGKM_DEVICE_AUTO})
		for (int32_t m : {PGKM_METHOD_HAMERLY, PGKM_METHOD_YINYANG, PGKM_METHOD_ELKAN, PGKM_METHOD_SORT})
		{
			o.method = m;
			o.device = dev;
			r = run_engine(x, 2, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			EXPECT_EQ(r.device, "gpu");
			EXPECT_EQ(r.fallback, "");
			EXPECT_EQ(r.method_used, pgkm_method_name(m)) << "the fake plugin echoes the method it was asked for";
		}
	pgkm_internal_set_driver_library(saved.c_str());
}
#endif
