/*
 * gpu_bench_hamerly.cpp: the bounded methods (hamerly, yinyang, elkan, sort) against 'lloyd' on the GPU, each
 * run to convergence (labels unchanged, tol 0) through the engine's public
 * API from the same k random rows (seed 1): Wu & Hong's generator (n =
 * 245,760, d = 32, k centres U[0,1]^32, N(0, sigma^2)) at k = 32, 256, 1024,
 * and 10M rows at d = 16 and 128, k = 1024 (centres U[-10,10]^d, sigma 0.5
 * and 1: well clustered). Per run: iterations, median ms per iteration,
 * total (create .. result), the fraction of distance computations skipped
 * (1 - computed / n k per pass, the final assignment included), and the
 * final inertia, which must be the same for every method.
 * PGKM_BENCH_METHODS (comma-separated, lloyd first) picks the methods:
 * lloyd,hamerly,yinyang when unset, e.g. lloyd,hamerly,yinyang,auto,elkan,sort.
 * PGKM_BENCH_REPEATS (default 1): runs of each method, taken in turn; the
 * total is their median, the other columns the last run's. Each case starts
 * with an untimed Lloyd run of two iterations, so no method pays the card's
 * warm-up. PGKM_BENCH_TRACE=1 adds, per case, each pass's milliseconds by
 * method (the last run's; '*' marks a pass 'auto' ran with its bounded
 * method) and the rows Lloyd moved.
 */
#include "gpu_bench.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace
{

struct Case
{
	int64_t		n;
	int			d, k;
	double		lo, hi, sigma;
	int			max_iter;
	const char *what;
};

void
line(const char *method, const EngineRun &r, int64_t n, double total_s)
{
	if (!r.ok)
	{
		printf("   %-8s | FAILED: %s\n", method, r.err.c_str());
		return;
	}
	const double skipped = r.distances_lloyd > 0 ? 1.0 - (double) r.distances / (double) r.distances_lloyd : NAN;
	printf("   %-8s | %5d %4d | %9.4f %9.3f %9.3f | %6.1f %% | %-8s | %.15g | create %.1f ms, final %.1f ms\n", method,
		   r.iterations, r.converged, median(r.iter_s) * 1e3, r.iter_s.empty() ? NAN : r.iter_s[0] * 1e3, total_s,
		   100 * skipped, r.method_used.c_str(), r.final_inertia / n, r.create_s * 1e3, r.final_s * 1e3);
}

}							/* namespace */

void
hamerly_bench(const Plugin &pl, int64_t max_n)
{
	const Case	cases[] = {
		{245760, 32, 32, 0, 1, std::sqrt(0.0125), 1000, "Wu & Hong A, sigma2 0.0125"},
		{245760, 32, 32, 0, 1, std::sqrt(0.05), 1000, "Wu & Hong A, sigma2 0.05"},
		{245760, 32, 32, 0, 1, std::sqrt(0.3), 1000, "Wu & Hong A, sigma2 0.3"},
		{245760, 32, 256, 0, 1, std::sqrt(0.0125), 1000, "Wu & Hong's generator, sigma2 0.0125"},
		{245760, 32, 256, 0, 1, std::sqrt(0.05), 1000, "Wu & Hong's generator, sigma2 0.05"},
		{245760, 32, 256, 0, 1, std::sqrt(0.3), 1000, "Wu & Hong's generator, sigma2 0.3"},
		{245760, 32, 1024, 0, 1, std::sqrt(0.0125), 1000, "Wu & Hong B, sigma2 0.0125"},
		{245760, 32, 1024, 0, 1, std::sqrt(0.05), 1000, "Wu & Hong B, sigma2 0.05"},
		{245760, 32, 1024, 0, 1, std::sqrt(0.3), 1000, "Wu & Hong B, sigma2 0.3"},
		{10000000, 16, 1024, -10, 10, 0.5, 300, "blobs, sigma 0.5"},
		{10000000, 128, 1024, -10, 10, 1.0, 100, "blobs, sigma 1"},
	};
	printf("\n#### --hamerly: the bounded methods vs 'lloyd' on the GPU, engine API (device gpu, init random rows seed 1, tol 0,\n"
		   "#### stop when no label changes or at max_iter); ms/it = median iteration, it1 = the first; total = create..result\n");
	std::vector<int> methods;
	{
		const char *env = getenv("PGKM_BENCH_METHODS");
		std::string list = env ? env : "lloyd,hamerly,yinyang";
		for (size_t p = 0; p <= list.size();)
		{
			const size_t q = std::min(list.find(',', p), list.size());
			const std::string name = list.substr(p, q - p);
			for (int m : {PGKM_METHOD_LLOYD, PGKM_METHOD_HAMERLY, PGKM_METHOD_YINYANG, PGKM_METHOD_AUTO, PGKM_METHOD_ELKAN,
						  PGKM_METHOD_SORT})
				if (name == pgkm_method_name(m))
					methods.push_back(m);
			p = q + 1;
		}
		if (methods.empty() || methods[0] != PGKM_METHOD_LLOYD)
			methods.insert(methods.begin(), PGKM_METHOD_LLOYD);
	}
	const char *rep_env = getenv("PGKM_BENCH_REPEATS");
	const int	repeats = std::max(1, rep_env ? atoi(rep_env) : 1);
	std::vector<float> x;
	/* PGKM_BENCH_HAMERLY_CASES: the case numbers (0-based, comma-separated) to run, for a profiler; all when unset */
	const char *only = getenv("PGKM_BENCH_HAMERLY_CASES");
	int			ci = -1;
	for (const Case &c : cases)
	{
		ci++;
		if (only && *only && !strstr((std::string(",") + only + ",").c_str(), ("," + std::to_string(ci) + ",").c_str()))
			continue;
		const int64_t n = std::min(c.n, max_n);
		make_gauss_blobs(x, n, c.d, c.k, c.lo, c.hi, c.sigma, 2011 + c.k + (uint64_t) (c.sigma * c.sigma * 1e4));
		printf("\n== n = %lld, d = %d, k = %d, %s, max_iter %d ==\n", (long long) n, c.d, c.k, c.what, c.max_iter);
		printf("   %-8s | %5s %4s | %9s %9s %9s | %8s | %-8s | %s | %s\n", "method", "iters", "conv", "ms/it", "it1_ms",
			   "total_s", "skipped", "ran", "inertia/n", "the last run's create and final assignment");
		{
			pgkm_options o = gpu_random_options(c.k, 2, pl.file);
			(void) run_engine(x, n, c.d, o);	/* warm-up */
		}
		std::vector<EngineRun> r(methods.size());
		std::vector<std::vector<double>> totals(methods.size()), pass_totals(methods.size());
		for (int rep = 0; rep < repeats; rep++)
			for (size_t m = 0; m < methods.size(); m++)
			{
				pgkm_options o = gpu_random_options(c.k, c.max_iter, pl.file);
				o.method = methods[m];
				r[m] = run_engine(x, n, c.d, o);
				totals[m].push_back(r[m].total_s);
				pass_totals[m].push_back(std::accumulate(r[m].iter_s.begin(), r[m].iter_s.end(), 0.0));
			}
		std::vector<double> total(methods.size()), passes(methods.size());
		for (size_t m = 0; m < methods.size(); m++)
		{
			total[m] = median(totals[m]);
			passes[m] = median(pass_totals[m]);
			line(pgkm_method_name(methods[m]), r[m], n, total[m]);
		}
		for (size_t m = 1; m < methods.size(); m++)
			if (r[0].ok && r[m].ok)
				printf("   speed-up %s/lloyd: total %.2fx, passes %.2fx, per iteration %.2fx; iterations %s; inertia rel. diff %.2e\n",
					   pgkm_method_name(methods[m]), total[0] / total[m], passes[0] / passes[m],
					   median(r[0].iter_s) / median(r[m].iter_s), r[0].iterations == r[m].iterations ? "equal" : "DIFFER",
					   std::fabs(r[0].final_inertia - r[m].final_inertia) / r[0].final_inertia);
		if (getenv("PGKM_BENCH_TRACE") && r[0].ok)
		{
			printf("   trace | pass | lloyd moved |");
			for (int m : methods)
				printf(" %9s ms", pgkm_method_name(m));
			printf("\n");
			for (size_t p = 0; p < r[0].iter_s.size(); p++)
			{
				printf("   trace | %4zu | %11lld |", p + 1, (long long) r[0].moved[p]);
				for (size_t m = 0; m < methods.size(); m++)
				{
					const bool	has = r[m].ok && p < r[m].iter_s.size();
					const bool	bounded = has && methods[m] == PGKM_METHOD_AUTO && r[m].pass_method[p] != PGKM_METHOD_LLOYD;
					printf(" %11.4f%s", has ? r[m].iter_s[p] * 1e3 : NAN, bounded ? "*" : " ");
				}
				printf("\n");
			}
		}
		fflush(stdout);
	}
}
