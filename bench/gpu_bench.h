/*
 * gpu_bench.h: what the parts of the GPU benchmark share (gpu_bench.cpp is
 * the entry point and says what each mode measures): the plugin, seeded data,
 * and timed runs. GPU runs drive the plugin through its C ABI (fixed
 * iteration counts, forced paths); CPU runs and the papers' runs to
 * convergence drive the shipped engine through its public C API.
 */
#ifndef PGKM_GPU_BENCH_H
#define PGKM_GPU_BENCH_H

#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

/* The plugin under test and its debug exports (not part of the ABI). */
struct Plugin
{
	const char *file = nullptr;
	const pgkm_cuda_api *api = nullptr;
	int			(*launches) (void *) = nullptr;
	const char *(*path) (void *) = nullptr;
	int64_t		(*decided) (void *) = nullptr;	/* rows the last pass decided in fp64 */
};

/* Ceilings measured on the card in this process (measure_ceilings). */
struct Ceilings
{
	double		sgemm_tflops = 0;	/* cuBLAS SGEMM 8192^3, fp32 */
	double		tf32_tflops = 0;	/* the same on the TF32 tensor cores */
	double		copy_gbs = 0;	/* device-to-device copy, bytes read + written */
};

double		now();
double		median(std::vector<double> v);
int			hw_threads();

/* Seeded data, generated on all cores (the same bytes for a seed on every run). */
void		make_data(std::vector<float> &x, int64_t n, int d, uint64_t seed);	/* 64 blobs in [-10,10]^d */
void		make_uniform(std::vector<float> &x, int64_t n, int d, uint64_t seed);	/* U[0,1)^d */
void		make_mod16(std::vector<float> &x, int64_t n, int d, uint64_t seed);	/* (i mod 16) + U[0,1)^d */
void		make_gauss_blobs(std::vector<float> &x, int64_t n, int d, int k, double lo, double hi, double sigma,
							 uint64_t seed);
std::vector<double> spaced_rows(const std::vector<float> &x, int64_t n, int d, int k);
std::vector<double> random_rows(const std::vector<float> &x, int64_t n, int d, int k, uint64_t seed);

/* cuBLAS SGEMM (fp32 and TF32) and device copy rates, medians by CUDA events. */
Ceilings	measure_ceilings();
/* max(n k (2d+2) / fp32 rate, (4nd + 8n) / copy bandwidth) */
double		floor_seconds(int64_t n, int d, int k, double tflops, double gbs);

/* How a fixed-count Lloyd run is driven and timed. */
struct LloydPlan
{
	int			warm = 1;		/* untimed iterations first */
	int			reps = 5;		/* timed iterations after them */
	const std::vector<double> *init = nullptr;	/* k x d; nullptr = evenly spaced rows */
	bool		assign = false; /* end with a timed assign (labels + distances to the host) */
};

struct LloydTime
{
	bool		ok = false;
	std::string err;
	double		create_s = NAN; /* GPU: create (allocations + upload); CPU: pgkm_run_create */
	double		loop_s = NAN;	/* the timed iterations back to back */
	double		iter_s = NAN;	/* median timed iteration */
	double		assign_s = NAN;
	double		total_s = NAN;	/* create + init + all iterations + assign */
	double		final_inertia = NAN;	/* from assign */
	std::vector<double> inertia;	/* per iteration, warm-up included (centroids before its update) */
	int			iterations = 0; /* iterations run (CPU: the engine stops when no label changes) */
	int			launches = -1;
	double		decided = NAN;	/* GPU: rows decided in fp64 per iteration, mean (NaN: no such export) */
	std::string path;			/* the plugin's assignment path */
	double		last_inertia() const { return inertia.empty() ? NAN : inertia.back(); }
};

/* A plugin config on the default device with production switches (det = 0: fp64 atomics). */
pgkm_cuda_config plugin_config(int det);

/*
 * GPU through the plugin ABI: create, set_centroids, plan.warm + plan.reps
 * iterate() (synchronous: host wall time is the whole iteration, data
 * resident), optional assign.
 */
LloydTime	time_gpu(const Plugin &pl, const std::vector<float> &x, int64_t n, int d, int k,
					 const pgkm_cuda_config &cfg, const LloydPlan &plan);

/*
 * The shipped CPU engine through its public API (device CPU, init GIVEN, tol
 * 0, max_iter warm + reps; threads 0 = all cores). The engine stops early
 * when no label changes: iter_s is then the median of what ran.
 */
LloydTime	time_cpu(const std::vector<float> &x, int64_t n, int d, int k, int threads, const LloydPlan &plan);

/* The path the plugin picks for (d, k) by default: a run on k rows of x. */
std::string default_path(const Plugin &pl, const std::vector<float> &x, int d, int k);

/* One run through the public engine API to PGKM_DONE (n_init 1). */
struct EngineRun
{
	bool		ok = false;
	std::string err, device;
	double		total_s = NAN;	/* create (setup, upload) + init + iterations + final assignment */
	double		create_s = NAN; /* pgkm_run_create */
	double		final_s = NAN;	/* the final assignment step */
	std::vector<double> iter_s; /* wall time of each Lloyd iteration step */
	std::vector<double> inertia;	/* progress inertia of each iteration */
	std::vector<int64_t> moved;	/* rows that changed label in each iteration */
	std::vector<int32_t> pass_method;	/* the pgkm_method of each iteration's assignment */
	std::vector<double> init;	/* the run's initial centroids (k x d) */
	int			iterations = 0, converged = 0;
	double		final_inertia = NAN;
	int64_t		distances = 0, distances_lloyd = 0;	/* pgkm_result's distance computations */
	std::string method_used;
	double		iter_mean_after_first() const;	/* the first carries start-up work */
};
EngineRun	run_engine(const std::vector<float> &x, int64_t n, int d, const pgkm_options &o);

/* Engine options for a GPU run from k random distinct rows (seed 1), tol 0. */
pgkm_options gpu_random_options(int k, int max_iter, const char *plugin);

/* ms per iteration, or "fail". */
std::string ms(const LloydTime &t);

/* The modes besides the default engine table. */
void		sweep(const Plugin &pl, int64_t n, const Ceilings &c);
void		paths_sweep(const Plugin &pl, int64_t n, const Ceilings &c);
void		papers(const Plugin &pl);
/* Methods 'hamerly' and 'yinyang' against 'lloyd' on the GPU (gpu_bench_hamerly.cpp); max_n cuts the 10M-row shapes. */
void		hamerly_bench(const Plugin &pl, int64_t max_n);
/* Kernel k-means (gpu_bench_kernel.cpp): what = popcorn, build, stream or all; shapes cut to max_n rows. */
void		kernel_bench(const Plugin &pl, const Ceilings &c, const std::string &what, int64_t max_n);

#endif
