/*
 * test_serial_or_pool.cpp: the pool's inline mode (every chunk on the
 * calling thread, as worker 0) and SerialOrPool's choice between it and the
 * pool, on steps whose cost is set by sleeping: serial where the helpers
 * are what a step waits for, the pool where the chunks' own work is.
 */
#include "serial_or_pool.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using pgkm::SerialOrPool;
using pgkm::ThreadPool;

TEST(SerialOrPool, InlineRunsEveryChunkAsWorkerZero)
{
	ThreadPool	pool(3, nullptr, nullptr);
	std::vector<int> worker(64, -1);
	pool.set_inline(true);
	pool.parallel_for(64, [&](int64_t c, int w) { worker[c] = w; });
	EXPECT_EQ(worker, std::vector<int>(64, 0));
	pool.set_inline(false);
	std::atomic<int> others {0};
	pool.parallel_for(64, [&](int64_t, int w) {
		std::this_thread::sleep_for(std::chrono::microseconds(200));
		others += w != 0;
	});
	EXPECT_GT(others.load(), 0) << "the helpers run again once inline is off";
}

namespace
{

/* Runs `steps` steps of two chunks each; a chunk sleeps serial_us on worker 0, pool_us on a helper. */
int64_t
serial_steps(int steps, int serial_us, int pool_us)
{
	ThreadPool	pool(2, nullptr, nullptr);
	SerialOrPool sp(&pool);
	for (int s = 0; s < steps; s++)
	{
		SerialOrPool::Step step(sp);
		pool.parallel_for(2, [&](int64_t, int w) {
			std::this_thread::sleep_for(std::chrono::microseconds(w == 0 ? serial_us : pool_us));
		});
	}
	return sp.serial_steps();
}

}							/* namespace */

/*
 * One cycle: PROBE steps on the pool, timed against the calling thread's own
 * time per chunk, then EPOCH steps of the faster.
 */
TEST(SerialOrPool, PicksTheFasterByTiming)
{
	const int	cycle = SerialOrPool::PROBE + SerialOrPool::EPOCH;
	/*
	 * A helper's chunk takes 40 ms, worker 0's 5 ms: inline steps take 10 ms, pooled 40. (Worker 0's
	 * chunk is long enough for the helper to wake and take the other one even on a loaded machine.)
	 */
	EXPECT_EQ(serial_steps(cycle, 5000, 40000), SerialOrPool::EPOCH);
	/* every chunk 10 ms: inline 20 ms, pooled 10 */
	EXPECT_EQ(serial_steps(cycle, 10000, 10000), 0);
	/* the next cycle times the pool again: inline steps do not stay for good */
	EXPECT_EQ(serial_steps(2 * cycle, 5000, 40000), 2 * SerialOrPool::EPOCH);
}

/* A pool of one thread has nothing to choose. */
TEST(SerialOrPool, OneThreadIsLeftAlone)
{
	ThreadPool	pool(1, nullptr, nullptr);
	SerialOrPool sp(&pool);
	for (int s = 0; s < 20; s++)
	{
		SerialOrPool::Step step(sp);
		pool.parallel_for(4, [&](int64_t, int) {});
	}
	EXPECT_EQ(sp.serial_steps(), 0);
}

/*
 * Steps that get cheaper (k-means++'s, as more rows are skipped): step s's
 * two chunks sleep 3 (8 - s) ms each, so a pooled step costs half an inline
 * one. Timing pool and inline on different steps could pick inline (the
 * pool timed on the dearest); the estimate comes from the pool's own steps.
 */
TEST(SerialOrPool, StepsThatGetCheaperStayOnThePool)
{
	ThreadPool	pool(2, nullptr, nullptr);
	SerialOrPool sp(&pool);
	for (int s = 0; s < SerialOrPool::PROBE + 8; s++)
	{
		SerialOrPool::Step step(sp);
		const int	us = 3000 * std::max(1, 8 - s);
		pool.parallel_for(2, [&](int64_t, int) { std::this_thread::sleep_for(std::chrono::microseconds(us)); });
	}
	EXPECT_EQ(sp.serial_steps(), 0);
}

/* POOL and SERIAL run every step that way, with no probes. */
TEST(SerialOrPool, ForcedChoices)
{
	ThreadPool	pool(2, nullptr, nullptr);
	for (SerialOrPool::Choice choice : {SerialOrPool::POOL, SerialOrPool::SERIAL})
	{
		SerialOrPool sp(&pool, choice);
		std::atomic<int> helped {0};
		for (int s = 0; s < 20; s++)
		{
			SerialOrPool::Step step(sp);
			pool.parallel_for(2, [&](int64_t, int w) {
				std::this_thread::sleep_for(std::chrono::microseconds(500));
				helped += w != 0;
			});
		}
		EXPECT_EQ(sp.serial_steps(), choice == SerialOrPool::SERIAL ? 20 : 0);
		if (choice == SerialOrPool::SERIAL)
			EXPECT_EQ(helped.load(), 0);
		else
			EXPECT_GT(helped.load(), 0);
	}
}
