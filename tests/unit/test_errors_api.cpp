/*
 * test_errors_api.cpp: the C API's contract: interrupts, argument errors
 * with their messages, and the small helpers (nearest, estimate, defaults).
 */
#include "blobs.h"
#include "engine_run.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

/* ---- interrupts ---- */
namespace
{
struct Deadline
{
	std::chrono::steady_clock::time_point at;
	std::atomic<int> calls {0};
	std::chrono::steady_clock::time_point fired {};
};
int
deadline_interrupt(void *ctx)
{
	auto	   *dl = (Deadline *) ctx;
	dl->calls++;
	auto		now = std::chrono::steady_clock::now();
	if (now >= dl->at)
	{
		if (dl->fired == std::chrono::steady_clock::time_point {})
			dl->fired = now;
		return 1;
	}
	return 0;
}
}							/* namespace */

TEST(Interrupts, StopsPromptlyDuringIterations)
{
	const int64_t n = 300000;
	auto		x = blobs(n, 16, 20, 5, 3.0);
	pgkm_options o = cpu_options(64);
	o.tol = 0;
	o.max_iter = 1000;
	o.n_threads = 2;
	Deadline	dl;
	dl.at = std::chrono::steady_clock::now() + std::chrono::hours(1);
	char		err[256];
	pgkm_run   *h = nullptr;
	ASSERT_EQ(pgkm_run_create(x.data(), n, 16, &o, deadline_interrupt, &dl, &h, err, sizeof(err)), PGKM_OK);
	pgkm_progress p;
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* init */
	ASSERT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_OK);	/* iteration 1 */
	/* fire mid-way through a later pass (a pass over 300k x 16 x 64 takes tens of ms) */
	dl.at = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
	int			st;
	while ((st = pgkm_run_step(h, &p, err, sizeof(err))) == PGKM_OK)
		;
	auto		end = std::chrono::steady_clock::now();
	EXPECT_EQ(st, PGKM_INTERRUPTED) << err;
	EXPECT_STREQ(err, "k-means interrupted");
	double		latency = std::chrono::duration<double>(end - dl.fired).count();
	RecordProperty("interrupt_latency_ms", (int) (latency * 1000));
	/* generous bound: the design target is < 100 ms; not a performance assertion */
	EXPECT_LT(latency, 1.0);
	pgkm_run_free(h);
}

TEST(Interrupts, StopsDuringCreateAndInit)
{
	auto		x = blobs(50000, 8, 5, 6);
	pgkm_options o = cpu_options(32);
	Deadline	dl;
	dl.at = std::chrono::steady_clock::now();	/* already due */
	char		err[256];
	pgkm_run   *h = nullptr;
	int			st = pgkm_run_create(x.data(), 50000, 8, &o, deadline_interrupt, &dl, &h, err, sizeof(err));
	EXPECT_EQ(st, PGKM_INTERRUPTED);
	EXPECT_EQ(h, nullptr);
	/* a run interrupted mid-way refuses further steps with a clear error */
	Deadline	later;
	later.at = std::chrono::steady_clock::now() + std::chrono::hours(1);
	ASSERT_EQ(pgkm_run_create(x.data(), 50000, 8, &o, deadline_interrupt, &later, &h, err, sizeof(err)), PGKM_OK);
	later.at = std::chrono::steady_clock::now();
	pgkm_progress p;
	EXPECT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_INTERRUPTED);
	EXPECT_EQ(pgkm_run_step(h, &p, err, sizeof(err)), PGKM_ERR_INVALID);
	pgkm_result res;
	EXPECT_EQ(pgkm_run_result(h, &res), PGKM_ERR_INVALID);
	pgkm_run_free(h);
}

/* ---- argument errors ---- */
TEST(Errors, InvalidArgumentsAreRejectedWithAClearMessage)
{
	std::vector<float> x = {0, 0, 1, 1, 2, 2, 3, 3};
	auto		expect = [&](pgkm_options o, int32_t d, const char *fragment, std::vector<float> data) {
		EngineResult r = run_engine(data, d, o);
		EXPECT_EQ(r.status, PGKM_ERR_INVALID) << fragment;
		EXPECT_NE(r.err.find(fragment), std::string::npos) << "message: " << r.err;
	};
	pgkm_options o = cpu_options(2);
	o.k = 0;
	expect(o, 2, "k must be at least 1 (got 0)", x);
	o.k = 5;
	expect(o, 2, "k (5) must not exceed the number of rows (4)", x);
	o = cpu_options(2);
	expect(o, 0, "number of features must be at least 1", x);
	o.max_iter = 0;
	expect(o, 2, "max_iter must be at least 1", x);
	o = cpu_options(2);
	o.tol = -1;
	expect(o, 2, "tol must be a finite number >= 0", x);
	o.tol = NAN;
	expect(o, 2, "tol must be a finite number >= 0", x);
	o = cpu_options(2);
	o.n_init = 0;
	expect(o, 2, "n_init must be at least 1", x);
	o = cpu_options(2);
	o.init = PGKM_INIT_GIVEN;
	expect(o, 2, "initial_centroids", x);
	o = cpu_options(2);
	o.method = 9;
	expect(o, 2, "valid: lloyd", x);
	std::vector<float> bad = x;
	bad[5] = NAN;
	expect(cpu_options(2), 2, "row 2 (0-based) feature 1 (0-based) is NaN", bad);
	bad[5] = -INFINITY;
	expect(cpu_options(2), 2, "is -Infinity", bad);
	/* empty data */
	char		err[128];
	pgkm_run   *h = nullptr;
	pgkm_options ok = cpu_options(1);
	EXPECT_EQ(pgkm_run_create(x.data(), 0, 2, &ok, nullptr, nullptr, &h, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_STREQ(err, "no rows to cluster");
	EXPECT_EQ(pgkm_run_create(x.data(), 4, 2, nullptr, nullptr, nullptr, &h, err, sizeof(err)), PGKM_ERR_INVALID);
	/* a tiny message buffer is still terminated */
	char		tiny[8];
	EXPECT_EQ(pgkm_run_create(x.data(), 0, 2, &ok, nullptr, nullptr, &h, tiny, sizeof(tiny)), PGKM_ERR_INVALID);
	EXPECT_EQ(strlen(tiny), 7u);
}

/* ---- small helpers of the API ---- */
TEST(Api, NearestAndEstimate)
{
	std::vector<double> c = {0, 0, 10, 10, 5, 5};
	double		x[2] = {6, 4.5}, d2v = -1;
	EXPECT_EQ(pgkm_nearest(c.data(), 3, 2, nullptr, nullptr, x, &d2v), 2);
	EXPECT_DOUBLE_EQ(d2v, 1 + 0.25);
	double		tie[2] = {2.5, 2.5};
	EXPECT_EQ(pgkm_nearest(c.data(), 3, 2, nullptr, nullptr, tie, nullptr), 0);	/* lowest index on ties */
	pgkm_options o = cpu_options(64);
	int64_t		small = pgkm_estimate_bytes(1000, 16, &o);
	int64_t		big = pgkm_estimate_bytes(1000000, 16, &o);
	EXPECT_GT(small, 0);
	EXPECT_GE(big, 1000000LL * (4 + 8));	/* at least labels + distances */
	EXPECT_GT(big, small);
	EXPECT_LT(big, 1000000LL * 16 * 4 * 2);	/* well below twice the data itself */
	/*
	 * Per-thread scratch is a fixed tile: 1,270 rows x 100,000 features (508 MB
	 * of data) at 16 and 128 threads needs little beyond the data, and 1M x 2
	 * is not inflated by the thread count either.
	 */
	for (int32_t threads : {1, 16, 128})
	{
		pgkm_options w = cpu_options(8);
		w.n_threads = threads;
		EXPECT_LT(pgkm_estimate_bytes(1270, 100000, &w), 200LL << 20) << threads << " threads";
		EXPECT_LT(pgkm_estimate_bytes(1000000, 2, &w), (60LL << 20) + ((int64_t) threads << 20)) << threads << " threads";
	}
	pgkm_options def;
	pgkm_options_default(&def);
	EXPECT_EQ(def.max_iter, 300);
	EXPECT_EQ(def.tol, 1e-4);
	EXPECT_EQ(def.n_init, 1);
	EXPECT_EQ(def.init, PGKM_INIT_KMEANSPP);
	EXPECT_EQ(def.device, PGKM_DEVICE_AUTO);
	EXPECT_EQ(def.deterministic, 1);
}
