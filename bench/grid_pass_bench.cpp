/*
 * grid_pass_bench.cpp: what putting the data on the centroid sums' grid
 * (put_on_sum_grid, centroid_sums.h) adds to a run's set-up, against the
 * statistics pass every run makes (stats.h), on N(0, 10) data (a few values
 * in a million are below a column's 2^24 grid steps at 1M rows).
 *
 *   build/bench/grid_pass_bench n d threads
 *
 * Nine rounds alternated; the first round's grid pass rounds the small
 * values, the later ones only test them. Prints the medians in ms.
 */
#include "centroid_sums.h"
#include "stats.h"
#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

static double
now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int
main(int argc, char **argv)
{
	if (argc < 4)
	{
		fprintf(stderr, "usage: %s n d threads\n", argv[0]);
		return 2;
	}
	const int64_t n = atoll(argv[1]);
	const int32_t d = atoi(argv[2]);
	const int	threads = atoi(argv[3]);
	std::vector<float> x((size_t) n * d);
	std::mt19937 g(1);
	std::normal_distribution<float> nd(0, 1);
	for (float &v : x)
		v = nd(g) * 10;
	pgkm::ThreadPool pool(threads, nullptr, nullptr);
	std::vector<double> stats_s, grid_s;
	double		first_grid_s = 0;
	bool		changed = false;
	for (int r = 0; r < 9; r++)
	{
		const double a = now();
		pgkm::DataStats s = pgkm::data_statistics(x.data(), n, d, &pool);
		const double b = now();
		changed |= pgkm::put_on_sum_grid(x.data(), n, d, s.maxabs.data(), &pool);
		grid_s.push_back(now() - b);
		stats_s.push_back(b - a);
		if (r == 0)
			first_grid_s = grid_s[0];
	}
	std::sort(stats_s.begin(), stats_s.end());
	std::sort(grid_s.begin(), grid_s.end());
	printf("{\"n\": %lld, \"d\": %d, \"threads\": %d, \"statistics_ms\": %.3f, \"grid_ms\": %.3f, "
		   "\"first_grid_ms\": %.3f, \"rounded_any\": %s}\n",
		   (long long) n, d, threads, stats_s[4] * 1e3, grid_s[4] * 1e3, first_grid_s * 1e3,
		   changed ? "true" : "false");
	return 0;
}
