/*
 * engine_file_bench.cpp: the CPU engine on data from a file, for
 * bench/cpu_libs_bench.py (the same rows and the same start as scikit-learn
 * and FAISS get there).
 *
 *   build/bench/engine_file_bench X.f32 n d k threads max_iter tol init [C.f64] [OUT.f64]
 *
 * X.f32: n x d float32 rows; init: given (C.f64 holds k x d fp64 centroids)
 * or pp (k-means++, seed 0). Writes the final centroids to OUT.f64 when named.
 * Prints one JSON object: init and iteration times (seconds, each step; the
 * iterations' process CPU time too), the
 * final assignment's time, iterations, inertia, converged, and the share of
 * row assignments the Lloyd kernels left to fp64 (rows_rechecked).
 */
#include "bench_run.h"
#include "internal_hooks.h"
#include "pgkm_engine.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int
main(int argc, char **argv)
{
	if (argc < 9)
	{
		fprintf(stderr, "usage: %s X.f32 n d k threads max_iter tol given|pp [C.f64] [OUT.f64]\n",
				argv[0]);
		return 2;
	}
	const int64_t n = atoll(argv[2]);
	const int32_t d = atoi(argv[3]), k = atoi(argv[4]), threads = atoi(argv[5]),
				max_iter = atoi(argv[6]);
	const double tol = atof(argv[7]);
	const bool	given = strcmp(argv[8], "given") == 0;
	std::vector<float> x;
	std::vector<double> init;
	if (!read_file(argv[1], x, (size_t) n * d))
	{
		fprintf(stderr, "cannot read %lld x %d floats from %s\n", (long long) n, d, argv[1]);
		return 1;
	}
	if (given && (argc < 10 || !read_file(argv[9], init, (size_t) k * d)))
	{
		fprintf(stderr, "init given needs C.f64 with %d x %d doubles\n", k, d);
		return 1;
	}
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.device = PGKM_DEVICE_CPU;
	o.n_threads = threads;
	o.max_iter = max_iter;
	o.tol = tol;
	o.init = given ? PGKM_INIT_GIVEN : PGKM_INIT_KMEANSPP;
	o.initial_centroids = given ? init.data() : nullptr;
	std::vector<double> stamps, cpu;
	int64_t		seen = 0, rechecked = 0;
	pgkm_internal_label_rechecks(&seen, &rechecked);	/* from here on */
	pgkm_result r;
	pgkm_run   *h = bench_run_to_end(x.data(), n, d, o, stamps, &r, &cpu);
	if (!h)
		return 1;
	pgkm_internal_label_rechecks(&seen, &rechecked);
	bench_print_steps(stamps, &cpu);
	printf(", \"final_s\": %.6f, \"total_s\": %.6f, \"iterations\": %d, \"inertia\": %.17g, "
		   "\"converged\": %d, \"k\": %d, \"rows_rechecked\": %.6f}\n",
		   stamps.back() - stamps[stamps.size() - 2], r.elapsed_s, r.iterations, r.inertia,
		   r.converged, r.k, seen > 0 ? (double) rechecked / seen : 0.0);
	if (argc > 10)
	{
		FILE	   *f = fopen(argv[10], "wb");
		if (!f || fwrite(r.centroids, sizeof(double), (size_t) r.k * d, f) != (size_t) r.k * d)
		{
			fprintf(stderr, "cannot write %s\n", argv[10]);
			pgkm_run_free(h);
			return 1;
		}
		fclose(f);
	}
	pgkm_run_free(h);
	return 0;
}
