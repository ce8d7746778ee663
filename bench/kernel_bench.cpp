/*
 * kernel_bench.cpp: the CPU kernel k-means engine on Popcorn's setups
 * (PPoPP'25, seed 002): the polynomial kernel gamma = 1, coef0 = 1,
 * degree 2, random initial labels, exactly 30 iterations (passes over K),
 * k = 10, 50, 100 on one K. It drives the CPU KernelDevice directly, so
 * every k runs exactly 30 passes whatever the labels do.
 *
 *   build/bench/kernel_bench NAME n d [threads] [iters] [k,k,...] [stored|recomputed]
 *
 * Data: synthetic stand-ins of the data set's shape, rows uniform in
 * [0, 1/sqrt(d)]^d (so <x, y> stays O(1) and the polynomial finite), fixed
 * seed. Prints one line per k: the K build seconds and GFLOP/s (n^2 d
 * multiply-adds of the SYRK half, counted 2 flops each, plus nothing for
 * the map), the median seconds per pass with its K read rate (4 n^2
 * bytes) and Popcorn's per-iteration flop count (2 n^2 + 3 n k), the
 * 30-pass clustering time, and the objective after the last pass. Wall
 * seconds and process CPU seconds (all threads) are both given: on a
 * shared machine the wall time includes waiting for a core.
 */
#include "kernel_device.h"
#include "thread_pool.h"
#include "util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace pgkm;

/* CPU seconds of the whole process (every thread): what the work cost on a shared box. */
static double
cpu_seconds()
{
	timespec	ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	if (argc < 4)
	{
		fprintf(stderr, "usage: %s NAME n d [threads] [iters] [k,k,...] [stored|recomputed]\n", argv[0]);
		return 2;
	}
	const char *name = argv[1];
	const int64_t n = atoll(argv[2]);
	const int32_t d = atoi(argv[3]);
	const int	threads = argc > 4 ? atoi(argv[4]) : 0;
	const int	iters = argc > 5 ? atoi(argv[5]) : 30;
	std::vector<int32_t> ks;
	{
		std::stringstream ss(argc > 6 ? argv[6] : "10,50,100");
		std::string tok;
		while (std::getline(ss, tok, ','))
			ks.push_back(atoi(tok.c_str()));
	}
	const bool	stored = !(argc > 7 && strcmp(argv[7], "recomputed") == 0);
	if (n < 1 || d < 1 || ks.empty())
		return 2;
	const int32_t kmax = *std::max_element(ks.begin(), ks.end());

	std::vector<float> x((size_t) n * d);
	{
		std::mt19937_64 g(20250301);
		std::uniform_real_distribution<float> u(0.0f, 1.0f / std::sqrt((float) d));
		for (float &v : x)
			v = u(g);
	}
	std::vector<double> mean(d, 0.0);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			mean[j] += x[(size_t) i * d + j];
	for (double &m : mean)
		m /= (double) n;

	KernelParams p;
	p.kind = PGKM_KERNEL_POLYNOMIAL;
	p.gamma = 1;
	p.coef0 = 1;
	p.degree = 2;
	ThreadPool	pool(resolve_threads(threads), nullptr, nullptr);
	std::unique_ptr<KernelDevice> dev = make_cpu_kernel_device(x.data(), n, d, mean.data(), p,
															   stored, kmax, &pool);
	Stopwatch	kclock;
	const double kcpu0 = cpu_seconds();
	dev->build();
	const double k_s = kclock.seconds(), k_cpu = cpu_seconds() - kcpu0;
	const double k_gflops = (double) n * (n + 1) / 2 * d * 2 / k_s / 1e9;

	std::vector<int32_t> labels(n), next(n);
	std::vector<double> dist2(n);
	for (int32_t k : ks)
	{
		std::mt19937_64 g(7 + k);
		for (auto &l : labels)
			l = (int32_t) (g() % (uint64_t) k);
		std::vector<int64_t> sizes(k);
		std::vector<double> norms(k), cross(k);
		KernelPass out;
		out.labels = next.data();
		out.dist2 = dist2.data();
		out.norms = norms.data();
		out.cross = cross.data();
		std::vector<double> per, per_cpu;
		double		total = 0;
		for (int it = 0; it < iters; it++)
		{
			std::fill(sizes.begin(), sizes.end(), 0);
			for (int32_t l : labels)
				sizes[l]++;
			Stopwatch	c;
			const double cpu0 = cpu_seconds();
			dev->pass(labels.data(), sizes.data(), k, &out);
			double		s = c.seconds();
			per.push_back(s);
			per_cpu.push_back(cpu_seconds() - cpu0);
			total += s;
			labels.swap(next);
		}
		double		objective = 0;
		for (double v : dist2)
			objective += v;
		std::sort(per.begin(), per.end());
		std::sort(per_cpu.begin(), per_cpu.end());
		const double med = per[per.size() / 2];
		printf("%s n=%lld d=%d k=%d threads=%d K=%s K_s=%.3f K_cpu_s=%.3f K_gflops=%.1f iter_s=%.4f "
			   "iter_cpu_s=%.4f iter_GBps=%.2f iter_gflops=%.2f cluster_s=%.3f iters=%d "
			   "objective=%.10g\n",
			   name, (long long) n, d, k, pool.size(), dev->matrix(), stored ? k_s : 0.0,
			   stored ? k_cpu : 0.0, stored ? k_gflops : 0.0, med, per_cpu[per_cpu.size() / 2],
			   4.0 * n * n / med / 1e9, (2.0 * n * n + 3.0 * n * k) / med / 1e9, total, iters,
			   objective);
		fflush(stdout);
	}
	return 0;
}
