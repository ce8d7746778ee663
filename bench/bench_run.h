/*
 * bench_run.h: a CPU engine run stepped to its end with the time of each
 * step, shared by the benchmarks that time the engine on rows from a file
 * (engine_file_bench, init_bench). Header-only.
 */
#ifndef PGKM_BENCH_RUN_H
#define PGKM_BENCH_RUN_H

#include "pgkm_engine.h"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

/* The method whose SQL name is name ("lloyd", "auto", ...), -1 if none. */
inline int32_t
method_by_name(const char *name)
{
	for (int32_t m = 0; m < 16; m++)
		if (pgkm_method_name(m) && std::strcmp(name, pgkm_method_name(m)) == 0)
			return m;
	return -1;
}

/* count values of T from a binary file into v. */
template <typename T>
inline bool
read_file(const char *path, std::vector<T> &v, size_t count)
{
	FILE	   *f = fopen(path, "rb");
	if (!f)
		return false;
	v.resize(count);
	size_t		got = fread(v.data(), sizeof(T), count, f);
	fclose(f);
	return got == count;
}

/*
 * Creates the run and steps it to the end; stamps[s] is the elapsed time
 * after step s (step 0: statistics + init; then one per Lloyd iteration; the
 * last: the final assignment); cpu, when given, gets the process's CPU
 * time at the same points (on a shared machine the wall clock counts other
 * processes' time too). Returns the run with its result in *r, or NULL
 * after printing why.
 */
inline double
process_cpu_s()
{
	timespec	t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

inline pgkm_run *
bench_run_to_end(const float *x, int64_t n, int32_t d, const pgkm_options &o,
				 std::vector<double> &stamps, pgkm_result *r, std::vector<double> *cpu = nullptr)
{
	const double cpu0 = process_cpu_s();
	char		err[512];
	pgkm_run   *h = nullptr;
	/* the run rounds x in place to its sums' grid, the same rounding every time: runs on it stay comparable */
	if (pgkm_run_create(const_cast<float *>(x), n, d, &o, nullptr, nullptr, &h, err, sizeof(err)) != PGKM_OK)
	{
		fprintf(stderr, "create: %s\n", err);
		return nullptr;
	}
	for (;;)
	{
		pgkm_progress p;
		int			st = pgkm_run_step(h, &p, err, sizeof(err));
		if (st != PGKM_OK && st != PGKM_DONE)
		{
			fprintf(stderr, "step: %s\n", err);
			pgkm_run_free(h);
			return nullptr;
		}
		stamps.push_back(p.elapsed_s);
		if (cpu)
			cpu->push_back(process_cpu_s() - cpu0);
		if (st == PGKM_DONE)
			break;
	}
	if (pgkm_run_result(h, r) != PGKM_OK)
	{
		fprintf(stderr, "no result\n");
		pgkm_run_free(h);
		return nullptr;
	}
	return h;
}

/* Opens the JSON object: "init_s" and each iteration's "iter_s" (seconds; "iter_cpu_s" with cpu). */
inline void
bench_print_steps(const std::vector<double> &stamps, const std::vector<double> *cpu = nullptr)
{
	printf("{\"init_s\": %.6f, \"iter_s\": [", stamps[0]);
	for (size_t s = 1; s + 1 < stamps.size(); s++)
		printf("%s%.6f", s > 1 ? ", " : "", stamps[s] - stamps[s - 1]);
	printf("]");
	if (cpu)
	{
		printf(", \"iter_cpu_s\": [");
		for (size_t s = 1; s + 1 < cpu->size(); s++)
			printf("%s%.6f", s > 1 ? ", " : "", (*cpu)[s] - (*cpu)[s - 1]);
		printf("]");
	}
}

#endif							/* PGKM_BENCH_RUN_H */
