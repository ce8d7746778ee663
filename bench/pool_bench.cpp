/*
 * pool_bench.cpp: what one parallel_for hand-off costs, the floor of any
 * step built from them (greedy k-means++'s steps are a few each). Times
 * back-to-back calls of `threads` chunks whose bodies do nothing, then of
 * chunks of about work_us microseconds each, at each thread count.
 *
 *   build/bench/pool_bench [calls] [work_us] [threads ...]
 *
 * Prints, per thread count, the median over 5 rounds of microseconds per
 * call, empty and with work (and the work alone, serially, for reference).
 */
#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

static double
now_us()
{
	return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* A body of about us microseconds of arithmetic (not optimised away). */
static volatile double sink;
static void
spin_work(double us, int64_t iters_per_us)
{
	double		a = 1.0;
	const int64_t m = (int64_t) (us * iters_per_us);
	for (int64_t i = 0; i < m; i++)
		a = a * 1.0000001 + 1e-9;
	sink = a;
}

int
main(int argc, char **argv)
{
	const int	calls = argc > 1 ? atoi(argv[1]) : 20000;
	const double work_us = argc > 2 ? atof(argv[2]) : 5.0;
	std::vector<int> threads;
	for (int i = 3; i < argc; i++)
		threads.push_back(atoi(argv[i]));
	if (threads.empty())
		threads = {2, 4, 8, 16};
	/* calibrate the work loop */
	int64_t		per_us = 1;
	{
		const double t0 = now_us();
		spin_work(1e5, 1);
		per_us = (int64_t) (1e5 / std::max(1.0, now_us() - t0));
	}
	printf("threads | empty call us | call of %g us chunks, us | serial work of one chunk us\n", work_us);
	for (int t : threads)
	{
		pgkm::ThreadPool pool(t, nullptr, nullptr);
		std::vector<double> empty, busy;
		for (int round = 0; round < 5; round++)
		{
			double		t0 = now_us();
			for (int c = 0; c < calls; c++)
				pool.parallel_for(t, [](int64_t, int) {});
			empty.push_back((now_us() - t0) / calls);
			t0 = now_us();
			for (int c = 0; c < calls / 4; c++)
				pool.parallel_for(t, [&](int64_t, int) { spin_work(work_us, per_us); });
			busy.push_back((now_us() - t0) / (calls / 4));
		}
		std::sort(empty.begin(), empty.end());
		std::sort(busy.begin(), busy.end());
		const double t0 = now_us();
		for (int c = 0; c < 1000; c++)
			spin_work(work_us, per_us);
		printf("%d | %.2f | %.2f | %.2f\n", t, empty[2], busy[2], (now_us() - t0) / 1000);
	}
	return 0;
}
