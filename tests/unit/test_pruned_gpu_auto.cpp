/*
 * test_pruned_gpu_auto.cpp: method => 'auto' on the GPU. The policy
 * (gpu_auto_policy.h) on pass times written out: which method each pass
 * gets, what its tries cost against Lloyd alone; then the GPU device through
 * the fake plugin, whose passes sleep for given times: the switches it
 * makes, the same run as 'lloyd', and no switch where the plan holds no
 * bounds. (That the GPU's methods give one run whatever the switches is
 * tested on the device: tests/gpu/test_auto_gpu.cpp.)
 */
#include "blobs.h"
#include "engine_run.h"

#include "gpu_auto_policy.h"
#include "method_trail.h"
#include "internal_hooks.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;
using pgkm::GpuAutoPolicy;

namespace
{

constexpr int32_t L = PGKM_METHOD_LLOYD, H = PGKM_METHOD_HAMERLY;

/* Seconds of pass p (from 1) run by method m; switched: a bounded pass after Lloyd's (it starts the bounds). */
typedef std::function<double(int p, int32_t m, bool switched)> PassTimes;

/* Rows moved by pass p: a constant unless given. */
typedef std::function<int64_t(int p)> PassMoves;

/*
 * Runs `passes` passes; returns the methods run and, in *slowdown, the
 * time over Lloyd-only passes' (seconds(p, L) for each pass).
 */
std::vector<int32_t>
drive(GpuAutoPolicy &pol, int passes, const PassTimes &seconds, double *slowdown = nullptr,
	  int32_t runs_instead_of_candidate = -1, const PassMoves &moved = [](int) { return (int64_t) 1000; })
{
	std::vector<int32_t> ran;
	double		t = 0, lloyd = 0;
	for (int p = 1; p <= passes; p++)
	{
		int32_t		m = pol.next();
		if (m != L && runs_instead_of_candidate >= 0)
			m = runs_instead_of_candidate;
		const double s = seconds(p, m, m != L && (ran.empty() || ran.back() == L));
		pol.record(m, s, moved(p));
		ran.push_back(m);
		t += s;
		lloyd += seconds(p, L, false);
	}
	if (slowdown)
		*slowdown = t / lloyd;
	return ran;
}

/*
 * Lloyd's passes take `lloyd` (the first, warming up, 3x), the candidate's
 * `bounded(p)`, a switch pass `first` Lloyd passes.
 */
PassTimes
times(double lloyd, const std::function<double(int)> &bounded, double first)
{
	return [=](int p, int32_t m, bool switched) {
		if (p == 1)
			return 3 * lloyd;
		if (m == L)
			return lloyd;
		return switched ? first * lloyd : bounded(p);
	};
}

std::function<double(int)>
always(double s)
{
	return [=](int) { return s; };
}

}							/* namespace */

TEST(GpuAutoPolicy, CandidateByShape)
{
	EXPECT_EQ(pgkm::gpu_auto_candidate(32, 32), L) << "k = 32: every bounded method lost on the H100";
	EXPECT_EQ(pgkm::gpu_auto_candidate(32, 63), L);
	EXPECT_EQ(pgkm::gpu_auto_candidate(32, 64), H);
	EXPECT_EQ(pgkm::gpu_auto_candidate(32, 1024), H);
	EXPECT_EQ(pgkm::gpu_auto_candidate(16, 1024), H);
	EXPECT_EQ(pgkm::gpu_auto_candidate(128, 1024), PGKM_METHOD_YINYANG);
	EXPECT_EQ(pgkm::gpu_auto_candidate(64, 128), PGKM_METHOD_YINYANG);
	EXPECT_EQ(pgkm::gpu_auto_candidate(64, 127), H) << "one group: Hamerly's bound";
}

TEST(GpuAutoPolicy, NoCandidateRunsLloydOnly)
{
	GpuAutoPolicy pol;
	const std::vector<int32_t> ran = drive(pol, 50, times(1e-3, always(1e-4), 1));
	EXPECT_EQ(ran, std::vector<int32_t>(50, L));
	EXPECT_EQ(pol.tries(), 0);
}

/* Lloyd's passes 2 and 3 are timed (the first warms up), pass 4 switches, and a faster candidate stays. */
TEST(GpuAutoPolicy, FasterCandidateIsKept)
{
	GpuAutoPolicy pol(H);
	const std::vector<int32_t> ran = drive(pol, 100, times(1e-3, always(0.4e-3), 1.5));
	std::vector<int32_t> want(100, H);
	want[0] = want[1] = want[2] = L;
	EXPECT_EQ(ran, want);
	EXPECT_EQ(pol.tries(), 1);
	EXPECT_DOUBLE_EQ(pol.lloyd_seconds(), 1e-3);
	EXPECT_NEAR(pol.excess(), 0.5e-3 - 96 * 0.6e-3, 1e-12);
}

/*
 * Where the candidate loses every pass (Hamerly's 0.68-0.84x at sigma^2 =
 * 0.3 on the H100, a switch pass of 1.5 Lloyd passes), tries cost at most
 * 5 % over Lloyd alone in a run of 40 passes or more (100 for a candidate
 * 3x slower), and about TRY_BUDGET in long runs.
 */
TEST(GpuAutoPolicy, SlowerCandidateCostsLittle)
{
	for (double bounded : {1.05, 1.15, 1.25, 1.5, 3.0})
		for (int passes : {40, 100, 300, 1000})
		{
			if (bounded > 2 && passes < 100)
				continue;		/* its one try (2.5 Lloyd passes' excess) is 6 % of 40 passes */
			GpuAutoPolicy pol(H);
			double		slowdown = 0;
			const std::vector<int32_t> ran = drive(pol, passes, times(1.0, always(bounded), 1.5), &slowdown);
			/* with the moving rows halving every pass, tries close to Lloyd's get their improving passes */
			GpuAutoPolicy pol2(H);
			double		slowdown2 = 0;
			drive(pol2, passes, times(1.0, always(bounded), 1.5), &slowdown2, -1,
				  [](int p) { return (int64_t) (1e12 / (1LL << std::min(p, 40))); });
			const std::string what = "bounded " + std::to_string(bounded) + ", passes " + std::to_string(passes);
			EXPECT_LE(slowdown, 1.05) << what;
			EXPECT_LE(slowdown2, 1.05) << what << ", moves halving";
			if (passes >= 300)
			{
				EXPECT_LE(slowdown, 1 + GpuAutoPolicy::TRY_BUDGET + 0.005) << what;
			}
			EXPECT_GE(pol.tries(), 1) << what;
			EXPECT_EQ(ran[3], H) << what;
			EXPECT_EQ(ran[5], L) << what << ": a try is judged by its first bounded pass";
		}
}

/* A candidate that loses early and wins later (the centroids settle) is taken up by a later try. */
TEST(GpuAutoPolicy, LaterTryWinsWhenPruningStartsToPay)
{
	GpuAutoPolicy pol(H);
	double		slowdown = 0;
	const std::vector<int32_t> ran = drive(pol, 600, times(1.0, [](int p) { return p < 150 ? 1.3 : 0.4; }, 1.5),
										   &slowdown);
	EXPECT_EQ(ran.back(), H);
	EXPECT_GE(pol.tries(), 2);
	EXPECT_LT(slowdown, 0.7) << "the candidate ran most of the passes after pass 150";
	int			last_lloyd = 0;
	for (int p = 0; p < (int) ran.size(); p++)
		if (ran[p] == L)
			last_lloyd = p + 1;
	EXPECT_LT(last_lloyd, 300) << "taken up within the tries' budget of its first loss";
}

/* A kept candidate that becomes slower than Lloyd's passes is left after two slower passes. */
TEST(GpuAutoPolicy, WinningCandidateLeftWhenItLoses)
{
	GpuAutoPolicy pol(H);
	const std::vector<int32_t> ran = drive(pol, 24, times(1.0, [](int p) { return p < 20 ? 0.5 : 1.2; }, 1.5));
	std::vector<int32_t> want(24, H);
	want[0] = want[1] = want[2] = L;
	want[21] = want[22] = want[23] = L;	/* passes 20 and 21 slower: Lloyd from pass 22 */
	EXPECT_EQ(ran, want);
}

/*
 * A candidate a little slower than Lloyd's (1.1x) while the rows that move
 * halve each pass is given up to IMPROVING_PASSES more passes; when it then
 * wins it is kept (10M x 16, k = 1024 on the H200: Hamerly's passes 5-7 at
 * 1.06, 0.96, 0.61 of Lloyd's), when it does not the try ends.
 */
TEST(GpuAutoPolicy, ImprovingCandidateGetsMorePasses)
{
	const auto	halving = [](int p) { return (int64_t) (1e7 / (1LL << std::min(p, 40))); };
	{
		GpuAutoPolicy pol(H);
		const std::vector<int32_t> ran = drive(pol, 40, times(1.0, [](int p) { return p < 8 ? 1.1 : 0.5; }, 1.5),
											   nullptr, -1, halving);
		EXPECT_EQ(std::count(ran.begin(), ran.end(), L), 3) << "passes 5-7 improving, 8 on faster";
		EXPECT_EQ(pol.tries(), 1);
	}
	{
		GpuAutoPolicy pol(H);
		const std::vector<int32_t> ran = drive(pol, 12, times(1.0, always(1.1), 1.5), nullptr, -1, halving);
		std::vector<int32_t> want(12, L);
		for (int p = 3; p < 3 + 2 + GpuAutoPolicy::IMPROVING_PASSES; p++)
			want[p] = H;		/* the switch, then three improving passes, then the fourth ends it */
		EXPECT_EQ(ran, want);
	}
	{
		GpuAutoPolicy pol(H);
		const std::vector<int32_t> ran = drive(pol, 12, times(1.0, always(1.3), 1.5), nullptr, -1, halving);
		EXPECT_EQ(ran[3], H);
		EXPECT_EQ(ran[5], L) << "1.3x Lloyd's is not close enough to wait for";
	}
}

/* The plugin ran Lloyd's pass when asked for the candidate (its plan holds no bounds): no more tries. */
TEST(GpuAutoPolicy, CandidateWithoutBoundsIsDropped)
{
	GpuAutoPolicy pol(H);
	const std::vector<int32_t> ran = drive(pol, 30, times(1.0, always(0.1), 1.0), nullptr, L);
	EXPECT_EQ(ran, std::vector<int32_t>(30, L));
	EXPECT_EQ(pol.tries(), 1);
	EXPECT_EQ(pol.next(), L);
}

/* The trail names NAMED_SWITCHES switches, then counts the rest and names the last. */
TEST(GpuAutoPolicy, LongTrailsAreSummarized)
{
	pgkm::MethodTrail t;
	t.start();
	for (int it = 1; it <= 4; it++)
		t.pass(it, it < 3 ? L : H, -1, 10, 2);
	EXPECT_EQ(t.trail(), "lloyd, then hamerly from iteration 3");
	t.start();
	int			switches = 0;
	for (int it = 1; it <= 40; it++)
	{
		const int32_t m = (it / 2) % 2 ? H : L;	/* a switch every second pass from pass 2 */
		t.pass(it, m, -1, 10, 2);
		if (it == 17)
		{
			EXPECT_EQ(t.trail(), "lloyd, then hamerly from iteration 2, then lloyd from iteration 4, then hamerly from "
					  "iteration 6, then lloyd from iteration 8, then hamerly from iteration 10, then lloyd from "
					  "iteration 12, then hamerly from iteration 14, then lloyd from iteration 16");
		}
		switches += it >= 2 && it % 2 == 0;
	}
	EXPECT_EQ(switches, 20);
	EXPECT_EQ(t.trail(), "lloyd, then hamerly from iteration 2, then lloyd from iteration 4, then hamerly from "
			  "iteration 6, then lloyd from iteration 8, then hamerly from iteration 10, then lloyd from "
			  "iteration 12, then hamerly from iteration 14, then lloyd from iteration 16, then 12 more switches, "
			  "the last to lloyd from iteration 40");
}

#ifdef PGKM_FAKE_CUDA_PLUGIN
namespace
{

/* Sets an environment variable for a scope (value nullptr: leaves it unset). */
struct ScopedEnv
{
	ScopedEnv(const char *name, const char *value) : name_(name)
	{
		if (value)
			setenv(name, value, 1);
	}
	~ScopedEnv() { unsetenv(name_); }
	const char *name_;
};

/* 2000 rows of 64 blobs in 2-D, k = 64 from 64 of its rows: Hamerly is AUTO's candidate. */
struct AutoCase
{
	std::vector<float> x = blobs(2000, 2, 64, 11, 1.5);
	std::vector<double> init = pick_rows(x, 2, 64, 5);

	EngineResult run(int32_t method)
	{
		pgkm_options o = given_options(method, init, 64, 12, 0);
		o.gpu_plugin_path = PGKM_FAKE_CUDA_PLUGIN;
		o.device = PGKM_DEVICE_GPU;
		return run_engine(x, 2, o);
	}
};

void
expect_same_run(const EngineResult &a, const EngineResult &lloyd)
{
	ASSERT_EQ(a.status, PGKM_DONE) << a.err;
	ASSERT_EQ(lloyd.status, PGKM_DONE) << lloyd.err;
	EXPECT_EQ(a.device, "gpu");
	EXPECT_EQ(a.iterations, lloyd.iterations);
	EXPECT_EQ(a.labels, lloyd.labels);
	EXPECT_EQ(a.centroids, lloyd.centroids);
	EXPECT_EQ(a.inertia, lloyd.inertia);
}

/*
 * AutoCase's 'auto' with the fake plugin's passes timed as pass_ms ("L,B"
 * ms), its plan holding no bounds when asked: lloyd's run, at least
 * min_iterations of it, and the methods it ran.
 */
void
expect_auto_trail(const char *pass_ms, bool no_bounds, int min_iterations, const std::string &trail)
{
	SCOPED_TRACE(std::string("passes ") + pass_ms + (no_bounds ? ", no bounds" : ""));
	const std::string saved = pgkm_internal_set_driver_library("");
	AutoCase	c;
	const EngineResult lloyd = c.run(PGKM_METHOD_LLOYD);
	{
		ScopedEnv	t("PGKM_FAKE_PASS_MS", pass_ms);
		ScopedEnv	nb("PGKM_FAKE_NO_BOUNDS", no_bounds ? "1" : nullptr);
		const EngineResult a = c.run(PGKM_METHOD_AUTO);
		expect_same_run(a, lloyd);
		EXPECT_GE(a.iterations, min_iterations);
		EXPECT_EQ(a.method_used, trail);
	}
	pgkm_internal_set_driver_library(saved.c_str());
}

}							/* namespace */

/* Bounded passes 5x faster than Lloyd's: Lloyd's passes 1-3, then Hamerly's from pass 4 on. */
TEST(GpuAuto, FakePluginSwitchesToTheFasterMethod)
{
	expect_auto_trail("20,4", false, 6, "lloyd, then hamerly from iteration 4");
}

/* Bounded passes 5x slower: one try (passes 4 and 5), Lloyd's passes again from pass 6. */
TEST(GpuAuto, FakePluginLeavesASlowerMethod)
{
	expect_auto_trail("4,20", false, 7, "lloyd, then hamerly from iteration 4, then lloyd from iteration 6");
}

/* No room for the bounds: every pass Lloyd's, reported as such. */
TEST(GpuAuto, FakePluginWithoutBoundsRunsLloyd)
{
	expect_auto_trail("20,4", true, 1, "lloyd");
}
#endif
