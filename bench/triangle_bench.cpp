/*
 * triangle_bench.cpp: the pruned assignment methods against Lloyd on Wu &
 * Hong's data (seed 003, section 4), through the engine's public API, from
 * the same initial centroids (k random rows), to convergence (tol = 0:
 * labels unchanged), on the CPU.
 *
 *   triangle_bench n d k sigma2 threads methods [repeats] [seed] [dump_prefix]
 *
 * methods: comma-separated SQL names (lloyd,elkan,hamerly,yinyang,sort,auto).
 * Prints one JSON object per method and repeat: iterations, total seconds,
 * seconds in the iterations, CPU seconds of the run (all threads: the work,
 * less sensitive than wall time to other load on the machine), distance computations and the fraction skipped
 * (against n k per pass), fp64 rechecks aside, inertia, a hash of the labels
 * (equal hashes = equal labels) and what ran (method_used). dump_prefix
 * writes the data (.x.f32), the initial centroids (.init.f64) and the
 * labels of yinyang (exact, .labels.i32) for the scikit-learn anchor in
 * run_triangle_bench.py. With TRIANGLE_TRACE set in the environment, every
 * iteration's wall time, computed fraction and method go to stderr.
 * Built by bench/CMakeLists.txt (cmake -DPGKM_BUILD_BENCH=ON).
 */
#include "bench_run.h"
#include "blobs.h"
#include "pgkm_engine.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static double
seconds(const timeval &t)
{
	return (double) t.tv_sec + 1e-6 * (double) t.tv_usec;
}

static int32_t
method_of(const std::string &name)
{
	const int32_t m = method_by_name(name.c_str());
	if (m < 0)
	{
		fprintf(stderr, "unknown method %s\n", name.c_str());
		exit(2);
	}
	return m;
}

static void
dump(const std::string &path, const void *p, size_t bytes)
{
	FILE	   *f = fopen(path.c_str(), "wb");
	if (!f || fwrite(p, 1, bytes, f) != bytes)
	{
		fprintf(stderr, "cannot write %s\n", path.c_str());
		exit(1);
	}
	fclose(f);
}

int
main(int argc, char **argv)
{
	if (argc < 7)
	{
		fprintf(stderr, "usage: %s n d k sigma2 threads methods [repeats] [seed] [dump_prefix]\n",
				argv[0]);
		return 2;
	}
	const int64_t n = atoll(argv[1]);
	const int32_t d = atoi(argv[2]), k = atoi(argv[3]);
	const double sigma2 = atof(argv[4]);
	const int32_t threads = atoi(argv[5]);
	const std::string methods = argv[6];
	const int	repeats = argc > 7 ? atoi(argv[7]) : 1;
	const uint64_t seed = argc > 8 ? strtoull(argv[8], nullptr, 10) : 1;
	const std::string prefix = argc > 9 ? argv[9] : "";
	const bool	trace = getenv("TRIANGLE_TRACE") != nullptr;

	std::vector<float> x = pgkm_test::wu_hong_blobs(n, d, k, sigma2, seed);
	std::vector<double> init = pgkm_test::pick_rows(x, d, k, seed + 1);
	if (!prefix.empty())
	{
		dump(prefix + ".x.f32", x.data(), x.size() * sizeof(float));
		dump(prefix + ".init.f64", init.data(), init.size() * sizeof(double));
	}
	size_t		pos = 0;
	while (pos <= methods.size())
	{
		size_t		comma = methods.find(',', pos);
		std::string name = methods.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		pos = comma == std::string::npos ? methods.size() + 1 : comma + 1;
		for (int rep = 0; rep < repeats; rep++)
		{
			pgkm_options o;
			pgkm_options_default(&o);
			o.k = k;
			o.device = PGKM_DEVICE_CPU;
			o.n_threads = threads;
			o.init = PGKM_INIT_GIVEN;
			o.initial_centroids = init.data();
			o.max_iter = 1000;
			o.tol = 0;
			o.method = method_of(name);
			char		err[512];
			pgkm_run   *h = nullptr;
			if (pgkm_run_create(x.data(), n, d, &o, nullptr, nullptr, &h, err, sizeof(err)) != PGKM_OK)
			{
				fprintf(stderr, "create: %s\n", err);
				return 1;
			}
			struct rusage ru0, ru1;
			getrusage(RUSAGE_SELF, &ru0);
			pgkm_progress p;
			double		t_init = 0, t_last_iter = 0;
			int			st;
			double		t_prev = 0;
			while ((st = pgkm_run_step(h, &p, err, sizeof(err))) == PGKM_OK)
			{
				if (p.iteration == 0)
					t_init = p.elapsed_s;
				else
					t_last_iter = p.elapsed_s;
				if (trace && p.iteration > 0)
					fprintf(stderr, "%s it %d: %.1f ms, %.1f%% of n k computed, %lld moved, %s\n",
							name.c_str(), p.iteration, (p.elapsed_s - t_prev) * 1e3,
							100.0 * (double) p.distance_computations / ((double) n * k),
							(long long) p.moved, pgkm_method_name(p.method));
				t_prev = p.elapsed_s;
			}
			if (st != PGKM_DONE)
			{
				fprintf(stderr, "step: %s\n", err);
				return 1;
			}
			getrusage(RUSAGE_SELF, &ru1);
			const double cpu_s = seconds(ru1.ru_utime) + seconds(ru1.ru_stime) -
				seconds(ru0.ru_utime) - seconds(ru0.ru_stime);
			pgkm_result r;
			pgkm_run_result(h, &r);
			if (!prefix.empty() && name == "yinyang" && rep == 0)
				dump(prefix + ".labels.i32", r.labels, (size_t) n * sizeof(int32_t));
			printf("{\"n\": %lld, \"d\": %d, \"k\": %d, \"sigma2\": %g, \"threads\": %d, "
				   "\"method\": \"%s\", \"repeat\": %d, \"iterations\": %d, \"converged\": %d, "
				   "\"total_s\": %.4f, \"iter_s\": %.4f, \"cpu_s\": %.4f, \"distances\": %lld, "
				   "\"distances_lloyd\": %lld, \"skipped\": %.4f, \"inertia\": %.10g, "
				   "\"labels_hash\": \"%016llx\", \"method_used\": \"%s\"}\n",
				   (long long) n, d, k, sigma2, threads, name.c_str(), rep, r.iterations,
				   r.converged, r.elapsed_s, t_last_iter - t_init, cpu_s,
				   (long long) r.distance_computations, (long long) r.distance_computations_lloyd,
				   1.0 - (double) r.distance_computations / (double) r.distance_computations_lloyd,
				   r.inertia, (unsigned long long) pgkm_test::fnv1a(r.labels, (size_t) n * sizeof(int32_t)),
				   r.method_used);
			fflush(stdout);
			pgkm_run_free(h);
		}
	}
	return 0;
}
