/*
 * test_thread_pool.cpp: the worker pool's hand-off. Thousands of short calls
 * back to back (the pattern of greedy k-means++ and the bounded passes) must
 * run every chunk exactly once, on no more helpers than the call has chunks;
 * errors and interrupts reach the caller and leave the pool usable; a
 * helper that comes late holds no call up; and an idle pool sleeps rather
 * than spins.
 */
#include "errors.h"
#include "internal_hooks.h"
#include "thread_pool.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using pgkm::ThreadPool;

namespace
{

double
process_cpu_seconds()
{
	timespec	ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}							/* namespace */

TEST(ThreadPool, ShortCallsBackToBackRunEveryChunkOnce)
{
	for (int threads : {2, 4, 9})
	{
		ThreadPool	pool(threads, nullptr, nullptr);
		std::vector<std::atomic<int>> runs(16);
		int64_t		expected[16] = {};
		std::atomic<int> bad_worker {0};
		/* more threads than cores sleep between calls: fewer calls */
		const int	calls = threads <= (int) std::thread::hardware_concurrency() ? 20000 : 3000;
		for (int call = 0; call < calls; call++)
		{
			const int64_t nchunks = 1 + call % 11;
			pool.parallel_for(nchunks, [&](int64_t c, int w) {
				runs[c].fetch_add(1, std::memory_order_relaxed);
				/* a call of n chunks has at most n - 1 helpers */
				if (w < 0 || w >= threads || w >= nchunks)
					bad_worker++;
			});
			for (int64_t c = 0; c < nchunks; c++)
				expected[c]++;
			/* every chunk of this call is done when parallel_for returns */
			if (call % 1000 == 999)
			{
				for (int c = 0; c < 16; c++)
					ASSERT_EQ(runs[c].load(), expected[c]) << "threads " << threads << " call " << call;
			}
		}
		EXPECT_EQ(bad_worker.load(), 0) << "threads " << threads;
	}
}

TEST(ThreadPool, HelpersShareTheWork)
{
	ThreadPool	pool(3, nullptr, nullptr);
	std::vector<std::atomic<int>> per_worker(3);
	for (int call = 0; call < 50; call++)
		pool.parallel_for(3, [&](int64_t, int w) {
			per_worker[w]++;
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
		});
	int			helpers_used = 0;
	for (int w = 1; w < 3; w++)
		helpers_used += per_worker[w].load() > 0;
	EXPECT_EQ(helpers_used, 2);
}

TEST(ThreadPool, ErrorsAndInterruptsReachTheCallerAndThePoolGoesOn)
{
	std::atomic<int> stop {0};
	ThreadPool	pool(4, [](void *ctx) { return static_cast<std::atomic<int> *>(ctx)->load(); }, &stop);
	EXPECT_THROW(pool.parallel_for(64, [&](int64_t c, int) {
		if (c == 37)
			throw std::runtime_error("chunk 37");
	}), std::runtime_error);
	std::atomic<int64_t> sum {0};
	pool.parallel_for(100, [&](int64_t c, int) { sum += c; });
	EXPECT_EQ(sum.load(), 4950);

	stop = 1;
	EXPECT_THROW(pool.parallel_for(8, [](int64_t, int) {}), pgkm::Interrupted);
}

/* Spinning is bounded: an idle pool of 4 threads costs no CPU while the caller sleeps. */
TEST(ThreadPool, IdleWorkersSleep)
{
	ThreadPool	pool(4, nullptr, nullptr);
	for (int call = 0; call < 100; call++)
		pool.parallel_for(4, [](int64_t, int) {});
	std::this_thread::sleep_for(std::chrono::milliseconds(20));	/* past the spin */
	const double before = process_cpu_seconds();
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	const double idle = process_cpu_seconds() - before;
	EXPECT_LT(idle, 0.02) << "3 helpers spinning through 200 ms would cost 0.6 s";
}

TEST(ThreadPool, NoSpinningWithMoreThreadsThanCores)
{
	cpu_set_t	set;
	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	const int	cores = CPU_COUNT(&set);	/* the cores this process may use */
	ThreadPool	over(cores + 1, nullptr, nullptr);
	EXPECT_FALSE(over.spins());
	std::atomic<int64_t> sum {0};
	for (int call = 0; call < 200; call++)
		over.parallel_for(cores + 1, [&](int64_t c, int) { sum += c; });
	EXPECT_EQ(sum.load(), 200LL * cores * (cores + 1) / 2);
	ThreadPool	two(2, nullptr, nullptr);
	EXPECT_EQ(two.spins(), cores >= 2);
}

/* Thread count 0 means the cores the affinity mask allows (a cpuset's), not the machine's. */
TEST(ThreadPool, DefaultThreadsAreTheUsableCores)
{
	cpu_set_t	set;
	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	EXPECT_EQ(pgkm::resolve_threads(0), CPU_COUNT(&set));
	EXPECT_EQ(pgkm::resolve_threads(3), 3);
	if (CPU_COUNT(&set) < 2)
		GTEST_SKIP() << "one usable core: no narrower mask to set";
	/* a mask of one core, on this thread only, as a cpuset would set it for the process */
	std::thread probe([] {
		cpu_set_t	one;
		CPU_ZERO(&one);
		cpu_set_t	all;
		sched_getaffinity(0, sizeof(all), &all);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &all))
			{
				CPU_SET(c, &one);
				break;
			}
		ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
		EXPECT_EQ(pgkm::resolve_threads(0), 1);
	});
	probe.join();
}

/*
 * A helper that comes late (pre-empted, or slow to wake) holds no call up:
 * the others take its chunks and the calls go on; when it comes, its call
 * is over and it claims nothing of it, and it takes part in the next ones.
 */
TEST(ThreadPool, ALateHelperHoldsNoCallUp)
{
	pgkm_internal_pool_late_start(3, 0);
	ThreadPool	pool(4, nullptr, nullptr);
	pool.parallel_for(8, [](int64_t, int) {});	/* every worker started and waiting */
	pgkm_internal_pool_late_start(3, 400000);	/* worker 3 sleeps 0.4 s before its next call */
	std::vector<int64_t> hits(64);
	std::atomic<int> late_chunks {0};
	const auto	t0 = std::chrono::steady_clock::now();
	int			calls = 0;
	while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200))
	{
		std::fill(hits.begin(), hits.end(), 0);
		pool.parallel_for(64, [&](int64_t c, int w) {
			hits[c]++;
			late_chunks += w == 3;
		});
		for (int64_t c = 0; c < 64; c++)
			ASSERT_EQ(hits[c], 1) << "call " << calls << ", chunk " << c;
		calls++;
	}
	EXPECT_GE(calls, 2) << "the calls waited for the sleeping helper";
	EXPECT_EQ(late_chunks.load(), 0) << "no chunk ran on the helper while it slept";
	std::this_thread::sleep_for(std::chrono::milliseconds(300));	/* it wakes, finds its call over */
	std::atomic<int> helped {0};
	for (int call = 0; call < 200 && helped.load() == 0; call++)
		pool.parallel_for(8, [&](int64_t, int w) {
			std::this_thread::sleep_for(std::chrono::microseconds(300));
			helped += w == 3;
		});
	EXPECT_GT(helped.load(), 0) << "the late helper takes part again";
}
