/*
 * cpu_engine_bench.cpp: times the CPU engine alone (no SQL) through the public
 * API: the k-means++ init step and the Lloyd iterations, on Gaussian blobs.
 *
 *   cpu_engine_bench n d k threads iters [seed] [init: pp|given]
 *
 * Prints one line: init seconds (k-means++ or 0 for given), median seconds per
 * Lloyd iteration, and FNV hashes of the initial centroids and of the final
 * labels so that two builds can be checked for identical output.
 * Build (against any engine archive):
 *   g++ -O2 -std=c++17 -Isrc/engine bench/cpu_engine_bench.cpp build/libpgkm_engine.a \
 *       -lopenblas -lpthread -ldl -o /tmp/cpu_engine_bench
 */
#include "pgkm_engine.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

static uint64_t
fnv(const void *p, size_t len, uint64_t h = 1469598103934665603ULL)
{
	const unsigned char *b = (const unsigned char *) p;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

int
main(int argc, char **argv)
{
	if (argc < 6)
	{
		fprintf(stderr, "usage: %s n d k threads iters [seed] [pp|given]\n", argv[0]);
		return 2;
	}
	int64_t		n = atoll(argv[1]);
	int32_t		d = atoi(argv[2]), k = atoi(argv[3]), threads = atoi(argv[4]),
				iters = atoi(argv[5]);
	uint64_t	seed = argc > 6 ? strtoull(argv[6], nullptr, 10) : 1;
	bool		given = argc > 7 && strcmp(argv[7], "given") == 0;

	/* blobs: k centres uniform in [-10, 10]^d, N(0, 1) around them */
	std::mt19937_64 g(12345 + d * 7 + k);
	std::uniform_real_distribution<double> box(-10, 10);
	std::normal_distribution<double> noise(0, 1);
	std::vector<double> ctr((size_t) k * d);
	for (auto &v : ctr)
		v = box(g);
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		c = (int64_t) (g() % (uint64_t) k);
		for (int32_t j = 0; j < d; j++)
			x[(size_t) i * d + j] = (float) (ctr[(size_t) c * d + j] + noise(g));
	}
	std::vector<double> init;
	for (int32_t c = 0; c < k; c++)
		for (int32_t j = 0; j < d; j++)
			init.push_back(x[(size_t) (c * 7919 % n) * d + j]);

	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.device = PGKM_DEVICE_CPU;
	o.n_threads = threads;
	o.seed = seed;
	o.max_iter = iters;
	o.tol = 0;
	if (given)
	{
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
	}
	char		err[512];
	pgkm_run   *h = nullptr;
	if (pgkm_run_create(x.data(), n, d, &o, nullptr, nullptr, &h, err, sizeof(err)) != PGKM_OK)
	{
		fprintf(stderr, "create: %s\n", err);
		return 1;
	}
	std::vector<double> stamps;
	std::vector<int32_t> its;
	for (;;)
	{
		pgkm_progress p;
		int			st = pgkm_run_step(h, &p, err, sizeof(err));
		if (st != PGKM_OK && st != PGKM_DONE)
		{
			fprintf(stderr, "step: %s\n", err);
			return 1;
		}
		stamps.push_back(p.elapsed_s);
		its.push_back(p.iteration);
		if (st == PGKM_DONE)
			break;
	}
	/* step 0 is the init; steps 1..iters are iterations; the last adds the final assignment */
	double		t_init = stamps[0];
	std::vector<double> per;
	for (size_t s = 1; s + 1 < stamps.size(); s++)
		per.push_back(stamps[s] - stamps[s - 1]);
	std::sort(per.begin(), per.end());
	double		med = per.empty() ? 0 : per[per.size() / 2];
	pgkm_result r;
	pgkm_run_result(h, &r);
	uint64_t	hi = fnv(r.initial_centroids, sizeof(double) * (size_t) r.k * d);
	uint64_t	hl = fnv(r.labels, sizeof(int32_t) * (size_t) n);
	printf("n=%lld d=%d k=%d threads=%d init_s=%.4f iter_s=%.4f iters=%d inertia=%.9g "
		   "init_hash=%016llx labels_hash=%016llx\n",
		   (long long) n, d, k, threads, t_init, med, r.iterations, r.inertia,
		   (unsigned long long) hi, (unsigned long long) hl);
	pgkm_run_free(h);
	return 0;
}
