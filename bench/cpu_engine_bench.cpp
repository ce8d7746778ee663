/*
 * cpu_engine_bench.cpp: times the CPU engine alone (no SQL) through the public
 * C API: the init step and the Lloyd iterations, on Gaussian blobs
 * (tests/common/blobs.h: k centres in [-10, 10]^d, unit spread).
 *
 *   build/bench/cpu_engine_bench n d k threads iters [seed] [init: pp|random|given]
 *                                [data: blobs|uniform]
 *
 * tol = 0, so a run stops when no label changes or after iters iterations.
 * Prints one line: init seconds, median seconds per Lloyd iteration,
 * iterations, inertia to the last bit, and FNV hashes of the initial
 * centroids, labels, centroids, distances and per-cluster inertia, so that
 * two builds can be checked for identical output; and the share of row
 * assignments the CPU decided in fp64 (near-ties of the float argmin).
 * uniform data (each feature uniform in [-10, 10]) has cluster boundaries
 * everywhere, the worst case for those rechecks.
 */
#include "blobs.h"
#include "internal_hooks.h"
#include "pgkm_engine.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int
main(int argc, char **argv)
{
	if (argc < 6)
	{
		fprintf(stderr, "usage: %s n d k threads iters [seed] [pp|random|given]\n", argv[0]);
		return 2;
	}
	int64_t		n = atoll(argv[1]);
	int32_t		d = atoi(argv[2]), k = atoi(argv[3]), threads = atoi(argv[4]),
				iters = atoi(argv[5]);
	uint64_t	seed = argc > 6 ? strtoull(argv[6], nullptr, 10) : 1;
	const char *init_name = argc > 7 ? argv[7] : "pp";
	const char *data_name = argc > 8 ? argv[8] : "blobs";
	if (n < 1 || d < 1 || k < 1)
	{
		fprintf(stderr, "n, d and k must be positive\n");
		return 2;
	}

	std::vector<float> x = pgkm_test::blobs(n, d, k, 12345 + d * 7 + k, 1.0, 10.0);
	if (strcmp(data_name, "uniform") == 0)
	{
		uint64_t	s = 12345 + d * 7 + k;
		for (auto &v : x)
		{
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			v = (float) ((double) (s >> 11) * 0x1p-53 * 20.0 - 10.0);
		}
	}
	else if (strcmp(data_name, "blobs") != 0)
	{
		fprintf(stderr, "data must be blobs or uniform\n");
		return 2;
	}
	std::vector<double> init;	/* for given: k rows spread over the data */
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
	if (strcmp(init_name, "given") == 0)
	{
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
	}
	else if (strcmp(init_name, "random") == 0)
		o.init = PGKM_INIT_RANDOM;
	else if (strcmp(init_name, "pp") != 0)
	{
		fprintf(stderr, "init must be pp, random or given\n");
		return 2;
	}
	char		err[512];
	pgkm_run   *h = nullptr;
	if (pgkm_run_create(x.data(), n, d, &o, nullptr, nullptr, &h, err, sizeof(err)) != PGKM_OK)
	{
		fprintf(stderr, "create: %s\n", err);
		return 1;
	}
	int64_t		rows_seen = 0, rows_rechecked = 0;
	pgkm_internal_label_rechecks(&rows_seen, &rows_rechecked);	/* from here on */
	std::vector<double> stamps;
	for (;;)
	{
		pgkm_progress p;
		int			st = pgkm_run_step(h, &p, err, sizeof(err));
		if (st != PGKM_OK && st != PGKM_DONE)
		{
			fprintf(stderr, "step: %s\n", err);
			pgkm_run_free(h);
			return 1;
		}
		stamps.push_back(p.elapsed_s);
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
	if (pgkm_run_result(h, &r) != PGKM_OK)
	{
		fprintf(stderr, "no result after the run finished\n");
		pgkm_run_free(h);
		return 1;
	}
	const size_t kd = (size_t) r.k * d;
	pgkm_internal_label_rechecks(&rows_seen, &rows_rechecked);
	printf("n=%lld d=%d k=%d threads=%d init_s=%.4f iter_s=%.4f iters=%d inertia=%.17g "
		   "fp64_rows=%.2e init_hash=%016llx labels_hash=%016llx cent_hash=%016llx "
		   "dist_hash=%016llx cluster_inertia_hash=%016llx\n",
		   (long long) n, d, k, threads, t_init, med, r.iterations, r.inertia,
		   rows_seen > 0 ? (double) rows_rechecked / (double) rows_seen : 0.0,
		   (unsigned long long) pgkm_test::fnv1a(r.initial_centroids, sizeof(double) * kd),
		   (unsigned long long) pgkm_test::fnv1a(r.labels, sizeof(int32_t) * (size_t) n),
		   (unsigned long long) pgkm_test::fnv1a(r.centroids, sizeof(double) * kd),
		   (unsigned long long) pgkm_test::fnv1a(r.distances, sizeof(double) * (size_t) n),
		   (unsigned long long) pgkm_test::fnv1a(r.cluster_inertia, sizeof(double) * (size_t) r.k));
	pgkm_run_free(h);
	return 0;
}
