/*
 * engine_file_bench.cpp: the CPU engine on data from a file, for
 * bench/cpu_libs_bench.py (the same rows and the same start as scikit-learn
 * and FAISS get there).
 *
 *   build/bench/engine_file_bench X.f32 n d k threads max_iter tol init [C.f64] [OUT.f64]
 *
 * X.f32: n x d float32 rows; init: given (C.f64 holds k x d fp64 centroids)
 * or pp (k-means++, seed 0). Writes the final centroids to OUT.f64 when named.
 * The method is lloyd, or the SQL name in PGKM_BENCH_METHOD (e.g. auto);
 * PGKM_BENCH_AUTO_TRY_BUDGET sets auto's try budget (internal_hooks.h);
 * PGKM_BENCH_DEVICE=gpu runs on the GPU (the CUDA plugin, PGKM_CUDA_PLUGIN).
 * Prints one JSON object: init and iteration times (seconds, each step; the
 * iterations' process CPU time too), the
 * final assignment's time, iterations, inertia, converged, the share of
 * row assignments the Lloyd kernels left to fp64 (rows_rechecked), a hash
 * of the labels and what ran (method_used).
 */
#include "bench_run.h"
#include "blobs.h"
#include "internal_hooks.h"
#include "pgkm_engine.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

/* The method named by PGKM_BENCH_METHOD (lloyd when unset), -1 if unknown. */
static int32_t
bench_method()
{
	const char *name = getenv("PGKM_BENCH_METHOD");
	return !name || !*name ? PGKM_METHOD_LLOYD : method_by_name(name);
}

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
	const int32_t method = bench_method();
	if (method < 0)
	{
		fprintf(stderr, "unknown PGKM_BENCH_METHOD %s\n", getenv("PGKM_BENCH_METHOD"));
		return 2;
	}
	if (const char *b = getenv("PGKM_BENCH_AUTO_TRY_BUDGET"))
		pgkm_internal_set_auto_try_budget(atof(b));
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.method = method;
	const char *device = getenv("PGKM_BENCH_DEVICE");
	o.device = device && strcmp(device, "gpu") == 0 ? PGKM_DEVICE_GPU : PGKM_DEVICE_CPU;
	o.gpu_plugin_path = getenv("PGKM_CUDA_PLUGIN");
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
		   "\"converged\": %d, \"k\": %d, \"rows_rechecked\": %.6f, \"labels_hash\": \"%016llx\", "
		   "\"method_used\": \"%s\"}\n",
		   stamps.back() - stamps[stamps.size() - 2], r.elapsed_s, r.iterations, r.inertia,
		   r.converged, r.k, seen > 0 ? (double) rechecked / seen : 0.0,
		   (unsigned long long) pgkm_test::fnv1a(r.labels, (size_t) n * sizeof(int32_t)), r.method_used);
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
