/*
 * init_bench.cpp: the CPU engine's initialisation against its Lloyd
 * iteration, for bench/init_bench.py (which adds scikit-learn's k-means++
 * on the same rows and the fp64 potentials).
 *
 *   build/bench/init_bench X.f32 n d k threads max_iter init seed [C.f64] [INIT.f64] [FINAL.f64]
 *
 * X.f32: n x d float32 rows; init: pp (k-means++; its sample from
 * PGKM_BENCH_KPP_SAMPLE="rows_per_center,min_rows" when set), ppfull
 * (greedy k-means++ on every row), par (k-means||; its
 * rounds and oversampling factor from PGKM_BENCH_KPAR="rounds,factor" when
 * set), random, or given (C.f64 holds k x d fp64 centroids; pass "-" otherwise). Lloyd runs max_iter
 * iterations (tol 0 unless PGKM_BENCH_TOL is set, method lloyd, so every pass costs the same). Writes the
 * initial and the final centroids when named. Prints one JSON object: the
 * init time, each iteration's time (seconds), greedy k-means++'s time per
 * step phase (ms, internal_hooks.h's order) and its grouped and undecided
 * steps, the Lloyd iterations' time per phase (ms: assignment pass, update,
 * rest), iterations, inertia, k.
 */
#include "internal_hooks.h"
#include "bench_run.h"
#include "pgkm_engine.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static bool
write_doubles(const char *path, const double *v, size_t count)
{
	FILE	   *f = fopen(path, "wb");
	if (!f)
		return false;
	bool		ok = fwrite(v, sizeof(double), count, f) == count;
	return fclose(f) == 0 && ok;
}

/* , "name": [ms, ...] from count nanosecond totals */
static void
print_ms(const char *name, const int64_t *ns, int count)
{
	printf(", \"%s\": [", name);
	for (int p = 0; p < count; p++)
		printf("%s%.3f", p ? ", " : "", ns[p] * 1e-6);
	printf("]");
}

int
main(int argc, char **argv)
{
	if (argc < 9)
	{
		fprintf(stderr, "usage: %s X.f32 n d k threads max_iter pp|ppfull|par|random|given seed "
				"[C.f64|-] [INIT.f64] [FINAL.f64]\n", argv[0]);
		return 2;
	}
	const int64_t n = atoll(argv[2]);
	const int32_t d = atoi(argv[3]), k = atoi(argv[4]), threads = atoi(argv[5]),
				max_iter = atoi(argv[6]);
	const char *init = argv[7];
	const uint64_t seed = strtoull(argv[8], nullptr, 10);
	std::vector<float> x;
	if (!read_file(argv[1], x, (size_t) n * d))
	{
		fprintf(stderr, "cannot read %lld x %d floats from %s\n", (long long) n, d, argv[1]);
		return 1;
	}
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.device = PGKM_DEVICE_CPU;
	o.method = PGKM_METHOD_LLOYD;
	o.n_threads = threads;
	o.max_iter = max_iter;
	o.tol = getenv("PGKM_BENCH_TOL") ? atof(getenv("PGKM_BENCH_TOL")) : 0;
	o.seed = seed;
	std::vector<double> given;
	if (strcmp(init, "given") == 0)
	{
		if (argc < 10 || !read_file(argv[9], given, (size_t) k * d))
		{
			fprintf(stderr, "init given needs C.f64 with %d x %d doubles\n", k, d);
			return 1;
		}
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = given.data();
	}
	else if (strcmp(init, "random") == 0)
		o.init = PGKM_INIT_RANDOM;
	else if (strcmp(init, "pp") == 0)
	{
		o.init = PGKM_INIT_KMEANSPP;
		const char *sample = getenv("PGKM_BENCH_KPP_SAMPLE");
		if (sample)
			pgkm_internal_set_kpp_sample(atoll(sample), strchr(sample, ',') ? atoll(strchr(sample, ',') + 1) : 0);
	}
	else if (strcmp(init, "ppfull") == 0)
	{
		o.init = PGKM_INIT_KMEANSPP;
		pgkm_internal_set_kpp_sample(0, 0);
	}
	else if (strcmp(init, "par") == 0)
	{
		o.init = PGKM_INIT_KMEANS_PARALLEL;
		const char *kpar = getenv("PGKM_BENCH_KPAR");
		if (kpar)
			pgkm_internal_set_kmeans_parallel(atoi(kpar), strchr(kpar, ',') ? atof(strchr(kpar, ',') + 1) : 0);
	}
	else
	{
		fprintf(stderr, "unknown init %s\n", init);
		return 2;
	}
	if (getenv("PGKM_BENCH_KPP_STEPS"))
		pgkm_internal_set_kpp_step_choice(atoi(getenv("PGKM_BENCH_KPP_STEPS")));
	std::vector<double> stamps;
	pgkm_result r;
	pgkm_run   *h = bench_run_to_end(x.data(), n, d, o, stamps, &r);
	if (!h)
		return 1;
	bench_print_steps(stamps);
	int64_t		phase_ns[PGKM_KPP_PHASES];
	pgkm_internal_kpp_phase_ns(phase_ns);
	print_ms("kpp_phase_ms", phase_ns, PGKM_KPP_PHASES);
	int64_t		iter_ns[PGKM_ITER_PHASES];
	pgkm_internal_iter_phase_ns(iter_ns);
	print_ms("iter_phase_ms", iter_ns, PGKM_ITER_PHASES);
	int64_t		grouped_steps, undecided_steps;
	pgkm_internal_kpp_steps(&grouped_steps, &undecided_steps);
	printf(", \"kpp_grouped_steps\": %lld, \"kpp_undecided_steps\": %lld", (long long) grouped_steps,
		   (long long) undecided_steps);
	printf(", \"kpp_serial_steps\": %lld", (long long) pgkm_internal_kpp_serial_steps());
	printf(", \"iterations\": %d, \"inertia\": %.17g, \"k\": %d}\n", r.iterations, r.inertia, r.k);
	const size_t kd = (size_t) r.k * d;
	if ((argc > 10 && !write_doubles(argv[10], r.initial_centroids, kd)) ||
		(argc > 11 && !write_doubles(argv[11], r.centroids, kd)))
	{
		fprintf(stderr, "cannot write the centroids\n");
		pgkm_run_free(h);
		return 1;
	}
	pgkm_run_free(h);
	return 0;
}
