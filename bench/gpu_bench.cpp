/*
 * gpu_bench.cpp: per-iteration time of the CUDA plugin vs the hardware floor,
 * with the CPU engine on the same data.
 *
 * Ceilings are measured here first: cuBLAS SGEMM 8192^3 (fp32, no TF32) and a
 * 4 GiB device-to-device copy (bytes read + written), both timed with CUDA
 * events, median of 5 after warm-up. Per shape: floor = max(n k (2d+2) /
 * sgemm_rate, (n d 4 + 8 n) / copy_bw); iterate() is synchronous (it ends with
 * the D2H of sums/counts and the host-side centroid update), so host wall
 * time around it is the full iteration with data resident (no data transfer).
 * Usage: gpu_bench PLUGIN [--quick] [--cpu-iters N] [--shapes n:d:k,...] [--sweep|--paths [--sweep-n N]] [--papers]
 *
 * --paths: the assignment paths side by side at n = --sweep-n (fused vs TILED
 * for d <= 64, TILED vs cuBLAS for d > 64, the cuBLAS path's knobs at k = 1024).
 *
 * --sweep (one process, env vars switched between runs; the plugin reads them
 * at create): (1) per-iteration cost of deterministic (fixed-point) vs fast
 * (fp64 atomics) sums, each with the private shared-memory sums and with the
 * v1 path of one global atomic per element (PGKM_CUDA_SUMS=global), at
 * n x {2,16,128,768} x {8,64}; (2) the fused vs GEMM crossover
 * (PGKM_CUDA_PATH=fused|gemm) for d in {16,24,32,48,64}, k in {64,1024},
 * deterministic. GEMM-path shapes also run with the argmin kernel at 4 blocks
 * per SM (PGKM_CUDA_GEMM_BPS=4). Prints each row as measured and compact
 * tables at the end.
 *
 * --papers: the setups of four seed papers (shared/notes/seeds.md section H,
 * B1 B2 B5 B6) in one process, our numbers printed beside theirs:
 *   B1 Zechner & Granitzer 2009: uniform data, n x d x k grid, per-iteration
 *      time, GFLOP/s on their count nk(3d+2)+d(n+k), GB/s on their kernel's
 *      bytes 4ndk; GPU vs CPU engine (all cores; 1 thread at the headline).
 *   B2 Goldsborough 2017: blobs d=2 k=5, exactly 300 iterations (plugin ABI and
 *      CPU backend driven directly: the engine stops once labels are unchanged),
 *      random init, mean of 5 runs, the iteration loop timed.
 *   B5 Wu & Hong: Gaussian blobs n=245,760 d=32, k in {32,1024}, three sigma^2,
 *      engine API to convergence (labels unchanged); CPU 1 thread per iteration.
 *   B6 Cao et al. 2006: d=8 k=8, n 10k..10M, 20 iterations: total (upload +
 *      iterations + labels back) vs clustering vs per iteration, GPU vs CPU.
 * GPU runs use the plugin defaults (deterministic sums); CPU runs are the
 * engine's CPU backend, fixed-count ones driven directly (engine_internal.h).
 */
#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"
#include "engine_internal.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

static double
now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double
median(std::vector<double> v)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

static int
hw_threads()
{
	return (int) std::max(1u, std::thread::hardware_concurrency());
}

static uint64_t
xorshift(uint64_t &s)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

/* uniform in [0, 1) with 53 bits */
static double
unit(uint64_t &s)
{
	return (double) (xorshift(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* body(t, i0, i1) over rows [0, n) split across all cores: the generators and column means. */
static void
parallel_rows(int64_t n, const std::function<void(int, int64_t, int64_t)> &body)
{
	int			T = hw_threads();
	std::vector<std::thread> th;
	for (int t = 0; t < T; t++)
		th.emplace_back([&, t] { body(t, (int64_t) t * n / T, (int64_t) (t + 1) * n / T); });
	for (auto &t : th)
		t.join();
}

/* Blobs: 64 random centres in [-10,10]^d, N(0,1)-ish noise (sum of 4 uniforms), parallel. */
static void
make_data(std::vector<float> &x, int64_t n, int d, uint64_t seed)
{
	x.resize((size_t) n * d);
	std::vector<float> cen(64 * (size_t) d);
	uint64_t	s = seed;
	for (auto &c : cen)
		c = (float) (unit(s) * 20.0 - 10.0);
	parallel_rows(n, [&](int t, int64_t i0, int64_t i1) {
		uint64_t	s = seed * 7919 + t * 104729 + 1;
		for (int64_t i = i0; i < i1; i++)
		{
			int			b = (int) (xorshift(s) % 64);
			for (int j = 0; j < d; j++)
			{
				float		u = 0;
				for (int q = 0; q < 4; q++)
					u += (float) ((xorshift(s) >> 40) * (1.0 / 16777216.0));
				x[(size_t) i * d + j] = cen[(size_t) b * d + j] + (u - 2.0f) * 1.7320508f;
			}
		}
	});
}

/* Uniform in [0,1)^d (B1: "randomly placed data points"). */
static void
make_uniform(std::vector<float> &x, int64_t n, int d, uint64_t seed)
{
	x.resize((size_t) n * d);
	parallel_rows(n, [&](int t, int64_t i0, int64_t i1) {
		uint64_t	s = seed * 7919 + t * 104729 + 1;
		for (size_t e = (size_t) i0 * d; e < (size_t) i1 * d; e++)
			x[e] = (float) unit(s);
	});
}

/*
 * Gaussian blobs: k centres uniform in [lo,hi]^d, row i drawn around centre
 * i mod k (n/k rows each, interleaved like a shuffled make_blobs) with
 * N(0, sigma^2) per coordinate (Box-Muller). B2: [-10,10], sigma 1 (sklearn's
 * make_blobs defaults); B5: [0,1], sigma^2 given; B6: as B2.
 */
static void
make_gauss_blobs(std::vector<float> &x, int64_t n, int d, int k, double lo, double hi, double sigma, uint64_t seed)
{
	x.resize((size_t) n * d);
	std::vector<double> cen((size_t) k * d);
	uint64_t	s = seed | 1;
	for (auto &c : cen)
		c = lo + (hi - lo) * unit(s);
	parallel_rows(n, [&](int t, int64_t i0, int64_t i1) {
		uint64_t	s = seed * 7919 + t * 104729 + 1;
		double		spare = 0;
		bool		have = false;
		auto		gauss = [&]() {
			if (have)
			{
				have = false;
				return spare;
			}
			double		u1 = 1.0 - unit(s), u2 = unit(s);	/* u1 in (0, 1] */
			double		r = std::sqrt(-2.0 * std::log(u1));
			spare = r * std::sin(2.0 * M_PI * u2);
			have = true;
			return r * std::cos(2.0 * M_PI * u2);
		};
		for (int64_t i = i0; i < i1; i++)
		{
			const double *c = &cen[(size_t) (i % k) * d];
			for (int j = 0; j < d; j++)
				x[(size_t) i * d + j] = (float) (c[j] + sigma * gauss());
		}
	});
}

/* Evenly spaced rows as initial centroids: the same start for every engine. */
static std::vector<double>
spaced_rows(const std::vector<float> &x, int64_t n, int d, int k)
{
	std::vector<double> c((size_t) k * d);
	for (int i = 0; i < k; i++)
		for (int j = 0; j < d; j++)
			c[(size_t) i * d + j] = x[(size_t) (i * (n / k)) * d + j];
	return c;
}

/* k distinct rows chosen uniformly (partial Fisher-Yates), seeded: random init. */
static std::vector<double>
random_rows(const std::vector<float> &x, int64_t n, int d, int k, uint64_t seed)
{
	std::vector<int64_t> idx(n);
	for (int64_t i = 0; i < n; i++)
		idx[i] = i;
	uint64_t	s = seed * 2654435761ULL + 12345;
	std::vector<double> c((size_t) k * d);
	for (int i = 0; i < k; i++)
	{
		int64_t		j = i + (int64_t) (xorshift(s) % (uint64_t) (n - i));
		std::swap(idx[i], idx[j]);
		for (int q = 0; q < d; q++)
			c[(size_t) i * d + q] = x[(size_t) idx[i] * d + q];
	}
	return c;
}

/* Per-feature means in fp64 (the CPU backend centres its GEMM form on them). */
static std::vector<double>
column_means(const std::vector<float> &x, int64_t n, int d)
{
	int			T = hw_threads();
	std::vector<double> part((size_t) T * d, 0.0), mean(d, 0.0);
	parallel_rows(n, [&](int t, int64_t i0, int64_t i1) {
		double	   *p = &part[(size_t) t * d];
		for (int64_t i = i0; i < i1; i++)
			for (int j = 0; j < d; j++)
				p[j] += x[(size_t) i * d + j];
	});
	for (int t = 0; t < T; t++)
		for (int j = 0; j < d; j++)
			mean[j] += part[(size_t) t * d + j];
	for (auto &m : mean)
		m /= (double) n;
	return mean;
}

/* Median seconds of op() over 5 timed runs after 3 warm-ups, by CUDA events. */
template <class Op>
static double
event_median_seconds(Op op)
{
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	std::vector<double> ts;
	for (int r = 0; r < 8; r++)
	{
		cudaEventRecord(e0);
		op();
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float		ms;
		cudaEventElapsedTime(&ms, e0, e1);
		if (r >= 3)
			ts.push_back(ms / 1e3);
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	return median(ts);
}

static void
measure_ceilings(double *sgemm_tflops, double *tf32_tflops, double *copy_gbs)
{
	const int	N = 8192;
	float	   *a, *b, *c;
	cudaMalloc(&a, (size_t) N * N * 4);
	cudaMalloc(&b, (size_t) N * N * 4);
	cudaMalloc(&c, (size_t) N * N * 4);
	std::vector<float> h((size_t) N * N);
	uint64_t	s = 1;
	for (auto &v : h)
	{
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		v = (float) ((s >> 40) * (1.0 / 16777216.0)) - 0.5f;
	}
	cudaMemcpy(a, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
	cudaMemcpy(b, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
	cublasHandle_t hb;
	cublasCreate(&hb);
	cublasSetMathMode(hb, CUBLAS_DEFAULT_MATH);
	const float one = 1, zero = 0;
	double		t = event_median_seconds([&] {
		cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
	});
	*sgemm_tflops = 2.0 * N * N * (double) N / t / 1e12;
	cublasSetMathMode(hb, CUBLAS_TF32_TENSOR_OP_MATH);	/* the GEMM path's default */
	t = event_median_seconds([&] {
		cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
	});
	*tf32_tflops = 2.0 * N * N * (double) N / t / 1e12;
	cublasDestroy(hb);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	size_t		bytes = 4ULL << 30;
	void	   *p, *q;
	cudaMalloc(&p, bytes);
	cudaMalloc(&q, bytes);
	cudaMemset(p, 1, bytes);
	t = event_median_seconds([&] { cudaMemcpy(q, p, bytes, cudaMemcpyDeviceToDevice); });
	*copy_gbs = 2.0 * bytes / t / 1e9;
	cudaFree(p);
	cudaFree(q);
}


/* Sets (nullptr: unsets) an environment variable for one scope, then restores it. */
struct EnvOverride
{
	std::string name, old;
	bool		had;
	EnvOverride(const char *n, const char *value) : name(n)
	{
		const char *o = getenv(n);
		had = o != nullptr;
		if (had)
			old = o;
		std::string v = value ? value : "";	/* value may point into the environment itself */
		put(n, value ? v.c_str() : nullptr);
	}
	~EnvOverride() { put(name.c_str(), had ? old.c_str() : nullptr); }
	static void put(const char *n, const char *v)
	{
		if (v)
			setenv(n, v, 1);
		else
			unsetenv(n);
	}
};

/* How a fixed-count Lloyd run is driven and timed (both engines). */
struct LloydPlan
{
	int			warm = 1;		/* untimed iterations first */
	int			reps = 5;		/* timed iterations after them */
	const std::vector<double> *init = nullptr;	/* k x d; nullptr = evenly spaced rows */
	bool		assign = false; /* end with a timed assign (labels + distances to the host) */
};

/* One fixed-count Lloyd run: setup, iterations, optional final assignment. */
struct LloydTime
{
	bool		ok = false;
	std::string err;
	double		create_s = NAN;	/* GPU: create (allocations + upload); CPU: pool, means, backend */
	double		loop_s = NAN;	/* the timed iterations back to back */
	double		iter_s = NAN;	/* median timed iteration */
	double		assign_s = NAN;
	double		total_s = NAN;	/* create + set_centroids + all iterations + assign */
	double		final_inertia = NAN;	/* from assign */
	std::vector<double> inertia;	/* per iteration, warm-up included (centroids before its update) */
	int			launches = -1;
	std::string path;			/* the plugin's assignment path (pgkm_cuda_debug_path) */
	double		last_inertia() const { return inertia.empty() ? NAN : inertia.back(); }
};

/*
 * The shared timing core: warm + reps calls of step(&inertia), each timed,
 * the timed ones also as one loop. step returns false on failure (it sets
 * out->err).
 */
template <class Step>
static bool
timed_iterations(Step step, const LloydPlan &plan, LloydTime *out)
{
	std::vector<double> ts;
	double		loop0 = now();
	for (int i = 0; i < plan.warm + plan.reps; i++)
	{
		if (i == plan.warm)
			loop0 = now();
		double		inertia = NAN, a = now();
		if (!step(&inertia))
			return false;
		double		b = now();
		out->inertia.push_back(inertia);
		if (i >= plan.warm)
			ts.push_back(b - a);
	}
	out->loop_s = now() - loop0;
	out->iter_s = median(ts);
	return true;
}

/* A plugin config on the default device, resident unless the budget says otherwise. */
static pgkm_cuda_config
plugin_config(int det)
{
	pgkm_cuda_config cfg {};
	cfg.deterministic = det;
	cfg.device_ordinal = -1;
	return cfg;
}

/* The plugin's debug exports (not part of the ABI), looked up in main. */
static const char *(*g_debug_path) (void *) = nullptr;

/* The path the plugin picks for (d, k) by default: a run on k rows of x. */
static std::string
default_path(const pgkm_cuda_api *api, const std::vector<float> &x, int d, int k)
{
	pgkm_cuda_config cfg = plugin_config(1);
	void	   *r = nullptr;
	char		err[256];
	std::string p = "?";
	if (api->create(x.data(), k, d, k, &cfg, &r, err, sizeof(err)) == 0 && g_debug_path)
		p = g_debug_path(r);
	if (r)
		api->destroy(r);
	return p;
}

/*
 * GPU through the plugin ABI: create, set_centroids, plan.warm + plan.reps
 * iterate() (synchronous: host wall time is the whole iteration, data
 * resident), optional assign. path/sums/gemm_bps set the plugin's env knobs
 * (nullptr = default) for this run only.
 */
static LloydTime
time_gpu(const pgkm_cuda_api *api, int (*launches)(void *), const std::vector<float> &x, int64_t n, int d, int k,
		 int det, const char *path, const char *sums, const char *gemm_bps, const LloydPlan &plan)
{
	LloydTime	out;
	EnvOverride e1("PGKM_CUDA_PATH", path), e2("PGKM_CUDA_SUMS", sums), e3("PGKM_CUDA_GEMM_BPS", gemm_bps);
	std::vector<double> c = plan.init ? *plan.init : spaced_rows(x, n, d, k);
	std::vector<int64_t> sz(k);
	std::vector<int32_t> labels(plan.assign ? n : 0);
	std::vector<double> dist2(plan.assign ? n : 0);
	pgkm_cuda_config cfg = plugin_config(det);
	void	   *r = nullptr;
	char		err[512] = "";
	double		t0 = now();
	int			rc = api->create(x.data(), n, d, k, &cfg, &r, err, sizeof(err));
	out.create_s = now() - t0;
	if (rc == 0)
		rc = api->set_centroids(r, c.data(), err, sizeof(err));
	bool		ok = rc == 0 && timed_iterations([&](double *inertia) {
		pgkm_cuda_iter it {};
		if (api->iterate(r, &it, c.data(), sz.data(), err, sizeof(err)) != 0)
			return false;
		*inertia = it.inertia;
		return true;
	}, plan, &out);
	if (ok && plan.assign)
	{
		double		a = now();
		ok = api->assign(r, labels.data(), dist2.data(), sz.data(), &out.final_inertia, err, sizeof(err)) == 0;
		out.assign_s = now() - a;
	}
	out.total_s = now() - t0;
	if (ok)
	{
		out.ok = true;
		out.launches = launches && r ? launches(r) : -1;
		out.path = g_debug_path ? g_debug_path(r) : "?";
	}
	else
		out.err = err;
	if (r)
		api->destroy(r);
	return out;
}

/*
 * CPU engine backend (engine_internal.h) driven like time_gpu: exactly the
 * iterations asked for (the engine's driver would stop once labels are
 * unchanged). threads 0 = all cores. create_s covers what the engine's run
 * setup does for it: thread pool, column means, backend buffers.
 */
static LloydTime
time_cpu(const std::vector<float> &x, int64_t n, int d, int k, int threads, const LloydPlan &plan)
{
	LloydTime	out;
	std::vector<double> c = plan.init ? *plan.init : spaced_rows(x, n, d, k);
	std::vector<int64_t> sz(k);
	std::vector<int32_t> labels(plan.assign ? n : 0);
	std::vector<double> dist2(plan.assign ? n : 0);
	try
	{
		double		t0 = now();
		pgkm::ThreadPool pool(threads > 0 ? threads : hw_threads(), nullptr, nullptr);
		std::vector<double> mean = column_means(x, n, d);
		auto		be = pgkm::make_cpu_backend(x.data(), n, d, k, mean.data(), 1.0, &pool);
		out.create_s = now() - t0;
		be->set_centroids(c.data(), k);
		timed_iterations([&](double *inertia) {
			pgkm::IterStats st;
			be->iterate(&st, c.data(), sz.data());
			*inertia = st.inertia;
			return true;
		}, plan, &out);
		if (plan.assign)
		{
			double		a = now();
			be->assign(labels.data(), dist2.data(), sz.data(), &out.final_inertia);
			out.assign_s = now() - a;
		}
		out.total_s = now() - t0;
		out.ok = true;
	}
	catch (const std::exception &e)
	{
		out.err = e.what();
	}
	return out;
}

/* One run through the public engine API (pgkm_run_create .. PGKM_DONE), n_init must be 1. */
struct EngineRun
{
	bool		ok = false;
	std::string err, device;
	double		total_s = NAN;	/* create (setup, upload) + init + iterations + final assignment */
	std::vector<double> iter_s;	/* wall time of each Lloyd iteration step */
	std::vector<double> inertia;	/* progress inertia of each iteration */
	std::vector<double> init;	/* the run's initial centroids (k x d) */
	int			iterations = 0, converged = 0;
	double		final_inertia = NAN;
	/* mean iteration time from the 2nd on (the first carries start-up work) */
	double		iter_mean_after_first() const
	{
		if (iter_s.size() < 2)
			return NAN;
		double		s = 0;
		for (size_t i = 1; i < iter_s.size(); i++)
			s += iter_s[i];
		return s / (iter_s.size() - 1);
	}
};

static EngineRun
run_engine(const std::vector<float> &x, int64_t n, int d, const pgkm_options &o)
{
	EngineRun	out;
	char		err[512] = "";
	pgkm_run   *run = nullptr;
	double		t0 = now();
	if (pgkm_run_create(x.data(), n, d, &o, nullptr, nullptr, &run, err, sizeof(err)) != PGKM_OK)
	{
		out.err = err;
		return out;
	}
	pgkm_progress pr;
	int			st, last_iter = 0;
	double		a = now();
	while ((st = pgkm_run_step(run, &pr, err, sizeof(err))) == PGKM_OK || st == PGKM_DONE)
	{
		double		b = now();
		if (st == PGKM_OK && pr.iteration == last_iter + 1)	/* an iteration step (init is 0, final repeats) */
		{
			out.iter_s.push_back(b - a);
			out.inertia.push_back(pr.inertia);
			last_iter = pr.iteration;
		}
		a = b;
		if (st == PGKM_DONE)
			break;
	}
	out.total_s = now() - t0;
	pgkm_result res;
	if (st == PGKM_DONE && pgkm_run_result(run, &res) == PGKM_OK)
	{
		out.ok = true;
		out.device = res.device;
		out.iterations = res.iterations;
		out.converged = res.converged;
		out.final_inertia = res.inertia;
		out.init.assign(res.initial_centroids, res.initial_centroids + (size_t) res.k * d);
	}
	else
		out.err = err;
	pgkm_run_free(run);
	return out;
}

static double
floor_seconds(int64_t n, int d, int k, double tf, double bw)
{
	double		flops = (double) n * k * (2.0 * d + 2.0);
	double		bytes = (double) n * d * 4 + 8.0 * n;
	return std::max(flops / (tf * 1e12), bytes / (bw * 1e9));
}

static std::string
ms(const LloydTime &t)
{
	char		b[32];
	if (!t.ok)
		return "fail";
	snprintf(b, sizeof(b), "%.3f", t.iter_s * 1e3);
	return b;
}

/* --sweep: sums modes and the fused/GEMM crossover, compact tables at the end. */
static void
sweep(const pgkm_cuda_api *api, int (*launches)(void *), int64_t n, double tf, double bw)
{
	struct ModeRow { int d, k; LloydTime det, fast, det_v1, fast_v1, det_bps4; };
	struct PathRow { int d, k; LloydTime fused, gemm; };
	std::vector<ModeRow> modes;
	std::vector<PathRow> paths;
	std::vector<float> x;
	LloydPlan	plan;				/* 1 warm-up, median of 5 */
	auto		report = [](const char *what, int d, int k, const LloydTime &t) {
		if (t.ok)
			printf("  %-22s d=%4d k=%5d  %10.3f ms  launches %4d  upload %.2f s  inertia %.9g\n", what, d, k,
				   t.iter_s * 1e3, t.launches, t.create_s, t.last_inertia());
		else
			printf("  %-22s d=%4d k=%5d  FAILED: %s\n", what, d, k, t.err.c_str());
		fflush(stdout);
	};
	printf("\n== sweep 1: sums, deterministic vs fast, private vs v1 global atomics (n=%lld) ==\n", (long long) n);
	for (int d : {2, 16, 128, 768})
	{
		make_data(x, n, d, 12345 + d);
		for (int k : {8, 64})
		{
			ModeRow		m {d, k, {}, {}, {}, {}, {}};
			m.det = time_gpu(api, launches, x, n, d, k, 1, nullptr, nullptr, nullptr, plan);
			report("det private", d, k, m.det);
			m.fast = time_gpu(api, launches, x, n, d, k, 0, nullptr, nullptr, nullptr, plan);
			report("fast private", d, k, m.fast);
			m.det_v1 = time_gpu(api, launches, x, n, d, k, 1, nullptr, "global", nullptr, plan);
			report("det v1-global", d, k, m.det_v1);
			m.fast_v1 = time_gpu(api, launches, x, n, d, k, 0, nullptr, "global", nullptr, plan);
			report("fast v1-global", d, k, m.fast_v1);
			if (d > 32)			/* GEMM path: argmin kernel at 4 blocks/SM instead of 2 */
			{
				m.det_bps4 = time_gpu(api, launches, x, n, d, k, 1, nullptr, nullptr, "4", plan);
				report("det private gemm_bps=4", d, k, m.det_bps4);
			}
			modes.push_back(m);
		}
	}
	printf("\n== sweep 2: fused vs GEMM path, deterministic (n=%lld) ==\n", (long long) n);
	for (int d : {16, 24, 32, 48, 64})
	{
		make_data(x, n, d, 12345 + d);
		for (int k : {64, 1024})
		{
			PathRow		p {d, k, {}, {}};
			p.fused = time_gpu(api, launches, x, n, d, k, 1, "fused", nullptr, nullptr, plan);
			report("fused", d, k, p.fused);
			p.gemm = time_gpu(api, launches, x, n, d, k, 1, "gemm", nullptr, nullptr, plan);
			report("gemm", d, k, p.gemm);
			paths.push_back(p);
		}
	}
	printf("\n== summary 1: ms per iteration, n=%lld (private = this version; v1 = PGKM_CUDA_SUMS=global) ==\n",
		   (long long) n);
	printf("%4s %5s | %9s | %9s %9s %9s | %9s %9s | %9s %9s | %9s\n", "d", "k", "floor", "det", "fast", "fast/det",
		   "det v1", "fast v1", "v1/det", "det/floor", "det bps4");
	for (auto &m : modes)
	{
		double		fl = floor_seconds(n, m.d, m.k, tf, bw);
		auto		ratio = [](const LloydTime &a, const LloydTime &b) { return a.ok && b.ok ? a.iter_s / b.iter_s : NAN; };
		printf("%4d %5d | %9.3f | %9s %9s %9.2f | %9s %9s | %9.2f %9.2f | %9s\n", m.d, m.k, fl * 1e3, ms(m.det).c_str(),
			   ms(m.fast).c_str(), ratio(m.fast, m.det), ms(m.det_v1).c_str(), ms(m.fast_v1).c_str(),
			   ratio(m.det_v1, m.det), m.det.ok ? m.det.iter_s / fl : NAN, m.d > 32 ? ms(m.det_bps4).c_str() : "-");
	}
	printf("\n== summary 2: fused vs GEMM, ms per iteration, n=%lld, deterministic (default split: fused for d <= 64) ==\n",
		   (long long) n);
	printf("%4s %5s | %9s %9s %10s | %s\n", "d", "k", "fused", "gemm", "gemm/fused", "faster");
	for (auto &p : paths)
		printf("%4d %5d | %9s %9s %10.2f | %s\n", p.d, p.k, ms(p.fused).c_str(), ms(p.gemm).c_str(),
			   p.fused.ok && p.gemm.ok ? p.gemm.iter_s / p.fused.iter_s : NAN,
			   !(p.fused.ok && p.gemm.ok) ? "?" : (p.fused.iter_s <= p.gemm.iter_s ? "fused" : "gemm"));
	fflush(stdout);
}

/*
 * --paths: the assignment paths side by side per shape, same data and start
 * (where the crossovers in pick_path come from). Variants: the fused kernel
 * (d <= 64), TILED (forced beyond its default k <= 64), cuBLAS + argmin, and
 * for the GEMM path at large k its knobs: argmin blocks per SM and tile size.
 */
static void
paths_sweep(const pgkm_cuda_api *api, int (*launches)(void *), int64_t n, double tf, double bw)
{
	struct V { const char *name, *path, *bps, *tile_mb, *tf32; };
	struct Row { int d, k; std::string def; std::vector<std::pair<std::string, LloydTime>> t; };
	const V		fused {"fused", "fused", nullptr, nullptr, nullptr}, tiled {"tiled", "tiled", nullptr, nullptr, nullptr},
				gemm {"gemm", "gemm", nullptr, nullptr, nullptr}, fp32 {"gemm fp32", "gemm", nullptr, nullptr, "0"},
				x3 {"gemm 3xtf32", "gemm", nullptr, nullptr, "3"}, gemm32 {"gemm 32MB", "gemm", nullptr, "32", nullptr};
	struct S { int d, k; std::vector<V> v; };
	const std::vector<S> shapes = {
		{32, 8, {fused, tiled}}, {32, 64, {fused, tiled}}, {64, 8, {fused, tiled}}, {64, 64, {fused, tiled}},
		{64, 1024, {fused, gemm}},
		{128, 8, {tiled, gemm}}, {128, 64, {tiled, gemm}}, {128, 128, {tiled, gemm}}, {128, 256, {tiled, gemm, x3}},
		{128, 1024, {fp32, x3}}, {256, 64, {tiled, gemm}}, {256, 256, {tiled, gemm, x3}}, {256, 1024, {fp32, x3}},
		{512, 128, {tiled, gemm}}, {512, 1024, {fp32, x3}}, {768, 8, {tiled, gemm}}, {768, 64, {tiled, gemm, x3}},
		{768, 128, {tiled, gemm, x3}}, {768, 1024, {fp32, x3, gemm32}}};
	std::vector<Row> rows;
	std::vector<float> x;
	LloydPlan	plan;				/* 1 warm-up, median of 5 */
	int			cur_d = -1;
	printf("\n== paths: n=%lld, deterministic, ms per iteration ==\n", (long long) n);
	for (const S &s : shapes)
	{
		if (s.d != cur_d)
			make_data(x, n, s.d, 12345 + s.d);
		cur_d = s.d;
		Row			row {s.d, s.k, default_path(api, x, s.d, s.k), {}};
		for (const V &v : s.v)
		{
			EnvOverride e1("PGKM_CUDA_GEMM_TILE_MB", v.tile_mb), e2("PGKM_CUDA_TF32", v.tf32);
			LloydTime	t = time_gpu(api, launches, x, n, s.d, s.k, 1, v.path, nullptr, v.bps, plan);
			if (t.ok)
				printf("  %-15s d=%4d k=%5d  %10.3f ms  launches %5d  inertia %.9g  path %s\n", v.name,
					   s.d, s.k, t.iter_s * 1e3, t.launches, t.last_inertia(), t.path.c_str());
			else
				printf("  %-15s d=%4d k=%5d  FAILED: %s\n", v.name, s.d, s.k, t.err.c_str());
			fflush(stdout);
			row.t.push_back({v.name, t});
		}
		rows.push_back(row);
	}
	printf("\n== summary paths: ms per iteration (time/floor), n=%lld; default = pick_path's choice ==\n", (long long) n);
	for (const Row &r : rows)
	{
		double		fl = floor_seconds(n, r.d, r.k, tf, bw);
		printf("d=%4d k=%5d floor %8.3f | default %-9s |", r.d, r.k, fl * 1e3, r.def.c_str());
		for (auto &p : r.t)
			printf(" %s %s (%.2f)", p.first.c_str(), ms(p.second).c_str(), p.second.ok ? p.second.iter_s / fl : NAN);
		printf("\n");
	}
	fflush(stdout);
}

/* ---------------- --papers: seed papers' setups, ours beside theirs ---------------- */

/* The run with the median total time (a failed one if any failed). */
static LloydTime
median_run(const std::vector<LloydTime> &v)
{
	for (auto &t : v)
		if (!t.ok)
			return t;
	std::vector<size_t> idx(v.size());
	for (size_t i = 0; i < v.size(); i++)
		idx[i] = i;
	std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a].total_s < v[b].total_s; });
	return v[idx[idx.size() / 2]];
}

/* Zechner & Granitzer's operation count per iteration: labeling nk(3d+2) + update d(n+k). */
static double
zg_flops(int64_t n, int d, int k)
{
	return (double) n * k * (3.0 * d + 2.0) + (double) d * (n + k);
}

/*
 * B1: uniform data, 84 shapes; per-iteration median (labeling + update, data
 * resident) of the GPU plugin and of the CPU engine on all cores, same
 * initial centroids; inertia of both after the same iteration as a check.
 */
static void
paper_b1(const pgkm_cuda_api *api, int (*launches)(void *))
{
	const int64_t ns[] = {500, 5000, 50000, 500000};
	const int	ds[] = {2, 20, 200}, ks[] = {2, 4, 8, 16, 32, 64, 128};
	struct Row { int64_t n; int d, k; LloydTime gpu, cpu; };
	std::vector<Row> rows;
	LloydTime	head_gpu, head_cpu, head_cpu1;
	std::vector<float> x;
	printf("\n== B1 Zechner & Granitzer 2009: uniform [0,1)^d, per iteration (labeling + update), same init (evenly spaced rows) ==\n"
		   "   GPU: median of 10 (5 at n=500k) after 2 warm-up; CPU engine %d threads: median of 1..10 after 1 warm-up\n"
		   "   GFLOP/s on their count nk(3d+2)+d(n+k); GB/s(4ndk) on their kernel's bytes (x re-read per centroid);\n"
		   "   GB/s(x) on the bytes x really takes (4nd+8n); I/n = inertia/n after iteration @it on both engines\n",
		   hw_threads());
	printf("%7s %4s %4s | %9s %8s %10s %8s | %9s %8s | %7s | %3s %12s %12s\n", "n", "d", "k", "gpu_ms", "GFLOP/s",
		   "GB/s(4ndk)", "GB/s(x)", "cpu_ms", "GFLOP/s", "gpu/cpu", "@it", "gpu I/n", "cpu I/n");
	for (int64_t n : ns)
		for (int d : ds)
		{
			make_uniform(x, n, d, 2009 + 7 * n + d);
			for (int k : ks)
			{
				Row			r {n, d, k, {}, {}};
				LloydPlan	gp, cp;
				gp.warm = 2;
				gp.reps = n >= 500000 ? 5 : 10;
				r.gpu = time_gpu(api, launches, x, n, d, k, 1, nullptr, nullptr, nullptr, gp);
				cp.warm = 1;
				cp.reps = std::max(1, std::min(10, (int) (5e9 / (2.0 * n * k * d))));
				r.cpu = time_cpu(x, n, d, k, 0, cp);
				double		fl = zg_flops(n, d, k);
				if (!r.gpu.ok || !r.cpu.ok)
					printf("%7lld %4d %4d | FAILED: gpu '%s' cpu '%s'\n", (long long) n, d, k, r.gpu.err.c_str(),
						   r.cpu.err.c_str());
				else
				{
					size_t		m = std::min(r.gpu.inertia.size(), r.cpu.inertia.size());
					printf("%7lld %4d %4d | %9.4f %8.1f %10.1f %8.1f | %9.3f %8.1f | %7.1f | %3zu %12.6g %12.6g\n",
						   (long long) n, d, k, r.gpu.iter_s * 1e3, fl / r.gpu.iter_s / 1e9,
						   4.0 * n * d * k / r.gpu.iter_s / 1e9, (4.0 * n * d + 8.0 * n) / r.gpu.iter_s / 1e9,
						   r.cpu.iter_s * 1e3, fl / r.cpu.iter_s / 1e9, r.cpu.iter_s / r.gpu.iter_s, m,
						   r.gpu.inertia[m - 1] / n, r.cpu.inertia[m - 1] / n);
				}
				fflush(stdout);
				if (n == 500000 && d == 200 && k == 128)
				{
					LloydPlan	one;
					one.warm = 1;
					one.reps = 1;
					head_gpu = r.gpu;
					head_cpu = r.cpu;
					head_cpu1 = time_cpu(x, n, d, k, 1, one);
				}
				rows.push_back(r);
			}
		}
	auto		grid = [&](const char *title, const std::function<double(const Row &)> &val, const char *fmt) {
		printf("\n%s\n%7s %4s |", title, "n", "d");
		for (int k : ks)
			printf(" %7d", k);
		printf("\n");
		for (size_t i = 0; i < rows.size(); i += 7)
		{
			printf("%7lld %4d |", (long long) rows[i].n, rows[i].d);
			for (size_t j = i; j < i + 7 && j < rows.size(); j++)
				printf(fmt, rows[j].gpu.ok && rows[j].cpu.ok ? val(rows[j]) : NAN);
			printf("\n");
		}
	};
	grid("B1 GPU GFLOP/s on their count (their Fig. 9 on a 9600 GT: axis tops 4.5 / 16 / 30 / 35 for n = 500 / 5k / 50k / 500k), columns k:",
		 [](const Row &r) { return zg_flops(r.n, r.d, r.k) / r.gpu.iter_s / 1e9; }, " %7.0f");
	grid("B1 GPU speed-up vs our CPU engine on all cores (their Fig. 6, vs 1-core SSE3 ICC: axis tops 0.5 / 4.5 / 9 / 14), columns k:",
		 [](const Row &r) { return r.cpu.iter_s / r.gpu.iter_s; }, " %7.1f");
	const int64_t n = 500000;
	const int	d = 200, k = 128;
	double		fl = zg_flops(n, d, k), by = 4.0 * n * d * k;
	printf("\nB1 headline n=500000 d=200 k=128 (their peak)        %12s %12s %12s %4s %12s\n", "s/iteration", "GFLOP/s",
		   "GB/s(4ndk)", "@it", "inertia/n");
	printf("  %-50s %12s %12s %12s %4s %12s\n", "theirs: 9600 GT, labeling pass only", "~1.16", "~33", "44 (76%)", "-", "-");
	auto		line = [&](const char *who, const LloydTime &t) {
		if (t.ok)
			printf("  %-50s %12.6f %12.1f %12.1f %4zu %12.6g\n", who, t.iter_s, fl / t.iter_s / 1e9, by / t.iter_s / 1e9,
				   t.inertia.size(), t.last_inertia() / n);
		else
			printf("  %-50s FAILED: %s\n", who, t.err.c_str());
	};
	line("ours: GPU plugin, labeling + update", head_gpu);
	char		who[64];
	snprintf(who, sizeof(who), "ours: CPU engine, %d threads", hw_threads());
	line(who, head_cpu);
	line("ours: CPU engine, 1 thread (1 it after 1 warm-up)", head_cpu1);
	if (head_gpu.ok)
		printf("  GPU vs their 9600 GT pass: %.0fx; vs our CPU all cores %.1fx, 1 thread %.1fx\n", 1.16 / head_gpu.iter_s,
			   head_cpu.ok ? head_cpu.iter_s / head_gpu.iter_s : NAN,
			   head_cpu1.ok ? head_cpu1.iter_s / head_gpu.iter_s : NAN);
	fflush(stdout);
}

/* Engine API options for a GPU run from k random distinct rows (seed 1), tol 0,
 * one init: the papers' setups that run to convergence. */
static pgkm_options
gpu_random_options(int k, int max_iter, const char *plugin)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.max_iter = max_iter;
	o.tol = 0;
	o.init = PGKM_INIT_RANDOM;
	o.seed = 1;
	o.n_init = 1;
	o.device = PGKM_DEVICE_GPU;
	o.gpu_plugin_path = plugin;
	return o;
}

/*
 * B2: make_blobs-like d=2 k=5, exactly 300 iterations from random rows (5
 * seeds, the same 5 starts on every engine), the iteration loop timed (their
 * protocol: no data load, no H2D). Fixed counts need the plugin ABI and the
 * CPU backend directly: the engine's driver stops when labels are unchanged.
 */
static void
paper_b2(const pgkm_cuda_api *api, int (*launches)(void *), const char *plugin)
{
	const int	d = 2, k = 5, iters = 300, runs = 5;
	std::vector<float> x;
	printf("\n== B2 Goldsborough 2017: blobs (centres U[-10,10]^2, sigma 1) d=2 k=5, exactly 300 iterations, random init,\n"
		   "   mean of 5 runs (5 seeds, same starts on every engine); loop = the 300 iterations only (setup excluded, shown apart) ==\n");
	printf("%7s %-22s | %10s %11s %9s %10s | %s\n", "n", "engine", "loop_s", "per_it_us", "setup_s", "inertia/n",
		   "theirs (s, Titan X Pascal; C++ 1 thread fp64)");
	for (int64_t n : {100LL, 100000LL})
	{
		make_gauss_blobs(x, n, d, k, -10, 10, 1.0, 2017 + n);
		std::vector<LloydTime> res[3];
		for (int r = 0; r < runs; r++)
		{
			std::vector<double> init = random_rows(x, n, d, k, r + 1);
			LloydPlan	p;
			p.warm = 0;
			p.reps = iters;
			p.init = &init;
			res[0].push_back(time_gpu(api, launches, x, n, d, k, 1, nullptr, nullptr, nullptr, p));
			res[1].push_back(time_cpu(x, n, d, k, 0, p));
			res[2].push_back(time_cpu(x, n, d, k, 1, p));
		}
		char		cpu_all[48];
		snprintf(cpu_all, sizeof(cpu_all), "CPU engine %d threads", hw_threads());
		const char *names[3] = {"GPU plugin ABI", cpu_all, "CPU engine 1 thread"};
		const char *theirs100k[3] = {"CUDA atomics 0.0752, CUDA smem means 0.0611 (v3 0.0171 invalid: block-0 update)",
			"C++ 0.26804, Eigen 0.985", "sklearn 1.22683, scipy 1.54127 (not 300 Lloyd its)"};
		const char *theirs100[3] = {"CUDA atomics 0.00956, CUDA smem means 0.00878", "C++ 0.00054, Eigen 0.00137",
			"sklearn 0.00137, scipy 0.01474"};
		for (int e = 0; e < 3; e++)
		{
			double		loop = 0, setup = 0, inert = 0;
			std::string err;
			for (auto &t : res[e])
			{
				if (!t.ok)
					err = t.err;
				loop += t.loop_s / runs;
				setup += t.create_s / runs;
				inert += t.last_inertia() / n / runs;
			}
			if (!err.empty())
				printf("%7lld %-22s | FAILED: %s\n", (long long) n, names[e], err.c_str());
			else
				printf("%7lld %-22s | %10.5f %11.2f %9.4f %10.6g | %s\n", (long long) n, names[e], loop,
					   loop / iters * 1e6, setup, inert, n == 100 ? theirs100[e] : theirs100k[e]);
		}
		fflush(stdout);
	}
	/* what the engine API does with max_iter 300, tol 0 on the same data: why the ABI is driven directly */
	pgkm_options o = gpu_random_options(k, iters, plugin);
	EngineRun	g = run_engine(x, 100000, d, o);
	if (g.ok)
		printf("  engine API (device gpu, max_iter 300, tol 0) on n=100000: %d iterations, converged=%d (stops once labels are"
			   " unchanged), total %.4f s incl. setup\n", g.iterations, g.converged, g.total_s);
	else
		printf("  engine API run failed: %s\n", g.err.c_str());
	fflush(stdout);
}

/*
 * B5: Wu & Hong's generator (k centres U[0,1]^32, n/k rows each, N(0,
 * sigma^2)), n = 245,760, run to convergence (labels unchanged, tol 0) through
 * the engine API on the GPU from random rows; for sigma^2 = 0.15 the CPU
 * engine (1 thread, all cores) per iteration from the same start.
 */
static void
paper_b5(const char *plugin)
{
	const int64_t n = 245760;
	const int	d = 32, max_iter = 1000;
	std::vector<float> x;
	printf("\n== B5 Wu & Hong: n=245760 d=32, centres U[0,1]^32, N(0,sigma^2), engine API device=gpu, init random (k distinct\n"
		   "   rows, seed 1), tol 0 = stop when no label changes (their rule), max_iter %d; total = create..result ==\n", max_iter);
	printf("%5s %7s | %6s %4s | %9s %10s | %12s | %s\n", "k", "sigma2", "iters", "conv", "total_s", "per_it_ms",
		   "inertia/n", "CPU engine per iteration from the same start (sigma2 0.15)");
	for (int k : {32, 1024})
		for (double s2 : {0.0125, 0.15, 0.3})
		{
			make_gauss_blobs(x, n, d, k, 0, 1, std::sqrt(s2), 2011 + k + (uint64_t) (s2 * 1e4));
			pgkm_options o = gpu_random_options(k, max_iter, plugin);
			EngineRun	g = run_engine(x, n, d, o);
			if (!g.ok)
			{
				printf("%5d %7.4f | FAILED: %s\n", k, s2, g.err.c_str());
				continue;
			}
			double		git = median(g.iter_s);
			printf("%5d %7.4f | %6d %4d | %9.4f %10.4f | %12.6g |", k, s2, g.iterations, g.converged, g.total_s, git * 1e3,
				   g.final_inertia / n);
			if (s2 != 0.15)
			{
				printf("\n");
				fflush(stdout);
				continue;
			}
			LloydPlan	p;
			p.init = &g.init;
			p.warm = 1;
			p.reps = k >= 1024 ? 2 : 4;
			LloydTime	c1 = time_cpu(x, n, d, k, 1, p), ca = time_cpu(x, n, d, k, 0, p);
			if (!c1.ok || !ca.ok)
				printf(" FAILED: %s %s\n", c1.err.c_str(), ca.err.c_str());
			else
			{
				size_t		m = c1.inertia.size();
				printf(" 1 thread %.3f ms = %.1fx GPU, %d threads %.3f ms = %.1fx GPU; I/n @it%zu cpu %.6g gpu %.6g\n",
					   c1.iter_s * 1e3, c1.iter_s / git, hw_threads(), ca.iter_s * 1e3, ca.iter_s / git, m,
					   c1.inertia[m - 1] / n, m <= g.inertia.size() ? g.inertia[m - 1] / n : NAN);
				printf("%5s %7s |   CPU 1 thread x %d iterations = %.2f s projected vs GPU total %.4f s: %.1fx (theirs, hybrid"
					   " GPU vs 1-thread CPU: %s)\n", "", "", g.iterations, c1.iter_s * g.iterations, g.total_s,
					   c1.iter_s * g.iterations / g.total_s, k == 32 ? "up to 75x" : "up to 33x");
			}
			fflush(stdout);
		}
	printf("  theirs: ~130.15 iterations on average over group A (k=32, sigma2 0.0125..0.3), Tesla C1060 vs Xeon E5520 1 thread\n");
	fflush(stdout);
}

/*
 * B6: Cao et al.'s default shape d=8 k=8, 20 iterations; total = setup/upload
 * + 20 iterations + labels and distances back (their GPU-L), clustering = the
 * 20 iterations, per iteration = their median; median-total run of 3.
 */
static void
paper_b6(const pgkm_cuda_api *api, int (*launches)(void *))
{
	const int	d = 8, k = 8, iters = 20;
	std::vector<float> x;
	printf("\n== B6 Cao et al. 2006: Gaussian blobs (centres U[-10,10]^8, sigma 1) d=8 k=8, exactly 20 iterations from evenly\n"
		   "   spaced rows; total = create/upload + 20 it + assign (labels + distances to the host); median-total of 3 runs ==\n");
	printf("%9s %-18s | %9s %9s %10s %10s %9s | %10s\n", "n", "engine", "total_s", "create_s", "cluster_s", "per_it_ms",
		   "assign_s", "inertia/n");
	for (int64_t n : {10000LL, 100000LL, 1000000LL, 10000000LL})
	{
		make_gauss_blobs(x, n, d, k, -10, 10, 1.0, 2006 + n);
		LloydPlan	p;
		p.warm = 0;
		p.reps = iters;
		p.assign = true;
		std::vector<LloydTime> gv, cv;
		for (int r = 0; r < 3; r++)
		{
			gv.push_back(time_gpu(api, launches, x, n, d, k, 1, nullptr, nullptr, nullptr, p));
			cv.push_back(time_cpu(x, n, d, k, 0, p));
		}
		LloydTime	g = median_run(gv), c = median_run(cv);
		char		cpu_all[48];
		snprintf(cpu_all, sizeof(cpu_all), "CPU %d threads", hw_threads());
		auto		line = [&](const char *who, const LloydTime &t) {
			if (t.ok)
				printf("%9lld %-18s | %9.4f %9.4f %10.4f %10.4f %9.4f | %10.6g\n", (long long) n, who, t.total_s, t.create_s,
					   t.loop_s, t.iter_s * 1e3, t.assign_s, t.final_inertia / n);
			else
				printf("%9lld %-18s | FAILED: %s\n", (long long) n, who, t.err.c_str());
		};
		line("GPU plugin ABI", g);
		line(cpu_all, c);
		if (g.ok && c.ok)
			printf("%9s %-18s | %9.2f %9s %10.2f %10.2f %9s | theirs GPU-L/CPU: total ~0.60, clustering ~0.25, per it ~0.25\n",
				   "", "GPU/CPU", g.total_s / c.total_s, "", g.loop_s / c.loop_s, g.iter_s / c.iter_s, "");
		fflush(stdout);
	}
}

static void
papers(const pgkm_cuda_api *api, int (*launches)(void *), const char *plugin)
{
	double		t0 = now(), t;
	printf("\n#### --papers: seed setups (shared/notes/seeds.md H); GPU = plugin defaults (deterministic sums), host wall time\n"
		   "#### around synchronous calls; CPU engine on %d threads unless said ####\n", hw_threads());
	t = now();
	paper_b1(api, launches);
	printf("[B1 %.1f s]\n", now() - t);
	t = now();
	paper_b2(api, launches, plugin);
	printf("[B2 %.1f s]\n", now() - t);
	t = now();
	paper_b5(plugin);
	printf("[B5 %.1f s]\n", now() - t);
	t = now();
	paper_b6(api, launches);
	printf("[B6 %.1f s]\n[papers total %.1f s]\n", now() - t, now() - t0);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	if (argc < 2)
	{
		fprintf(stderr, "usage: %s PLUGIN [--quick] [--cpu-iters N] [--shapes n:d:k,...] [--sweep|--paths [--sweep-n N]] [--papers]\n",
				argv[0]);
		return 2;
	}
	const char *plugin = argv[1];
	bool		quick = false, do_sweep = false, do_papers = false, do_paths = false;
	int64_t		sweep_n = 10000000;
	int			cpu_iters = 2;
	std::string shapes_arg;
	for (int i = 2; i < argc; i++)
	{
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--cpu-iters") && i + 1 < argc)
			cpu_iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
			shapes_arg = argv[++i];
		else if (!strcmp(argv[i], "--sweep"))
			do_sweep = true;
		else if (!strcmp(argv[i], "--sweep-n") && i + 1 < argc)
			sweep_n = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--papers"))
			do_papers = true;
		else if (!strcmp(argv[i], "--paths"))
			do_paths = true;
	}
	void	   *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	if (!h)
	{
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	auto		api = ((const pgkm_cuda_api * (*) (void)) dlsym(h, PGKM_CUDA_ENTRY_SYMBOL))();
	auto		launches = (int (*) (void *)) dlsym(h, "pgkm_cuda_debug_launches");
	g_debug_path = (const char *(*) (void *)) dlsym(h, "pgkm_cuda_debug_path");
	char		info[256];
	if (api->probe(info, sizeof(info)) != 0)
	{
		fprintf(stderr, "no usable GPU: %s\n", info);
		return 1;
	}
	double		tf, tf32, bw;
	measure_ceilings(&tf, &tf32, &bw);
	printf("device: %s\nceilings: sgemm fp32 %.1f TFLOP/s, sgemm tf32 %.1f TFLOP/s, d2d copy %.0f GB/s (read+write)\n",
		   info, tf, tf32, bw);
	fflush(stdout);
	if (do_sweep)
	{
		sweep(api, launches, sweep_n, tf, bw);
		return 0;
	}
	if (do_paths)
	{
		paths_sweep(api, launches, sweep_n, tf, bw);
		return 0;
	}
	if (do_papers)
	{
		papers(api, launches, plugin);
		return 0;
	}

	struct S { int64_t n; int d, k; };
	std::vector<S> shapes;
	if (!shapes_arg.empty())
	{
		char	   *dup = strdup(shapes_arg.c_str());
		for (char *t = strtok(dup, ","); t; t = strtok(nullptr, ","))
		{
			long long	n;
			int			d, k;
			if (sscanf(t, "%lld:%d:%d", &n, &d, &k) == 3)
				shapes.push_back({n, d, k});
		}
		free(dup);
	}
	else
		for (int64_t n : {1000000LL, 10000000LL})
			for (int d : {2, 16, 128, 768})
				for (int k : {8, 64, 1024})
					if (!quick || n == 1000000LL)
						shapes.push_back({n, d, k});
	printf("\n(floor_ms and ratio from the fp32 SGEMM ceiling; x3tf32 = iter / the floor of three TF32 products"
		   " at the TF32 ceiling, gemm-3xtf32 rows only)\n");
	printf("\n%9s %4s %5s | %10s %10s %6s %7s %8s | %9s %8s | %10s %12s | %s\n", "n", "d", "k", "iter_ms", "floor_ms",
		   "ratio", "x3tf32", "launch", "upload_s", "GB/s", "cpu_iter_ms", "inertia/n", "path");
	std::vector<float> x;
	for (auto &s : shapes)
	{
		make_data(x, s.n, s.d, 12345 + s.d);
		LloydPlan	plan;
		plan.warm = 2;
		plan.reps = s.n * (double) s.k * s.d > 5e12 ? 4 : 8;
		/* the plugin knobs as the caller's environment has them */
		LloydTime	g = time_gpu(api, launches, x, s.n, s.d, s.k, getenv("PGKM_BENCH_FAST") ? 0 : 1,
								 getenv("PGKM_CUDA_PATH"), getenv("PGKM_CUDA_SUMS"), getenv("PGKM_CUDA_GEMM_BPS"), plan);
		if (!g.ok)
		{
			printf("%9lld %4d %5d | failed: %s\n", (long long) s.n, s.d, s.k, g.err.c_str());
			continue;
		}
		double		floor_s = floor_seconds(s.n, s.d, s.k, tf, bw);
		/* CPU engine (public API) on the same data, same initial centroids (1M rows only) */
		double		cpu_ms = NAN;
		if (s.n <= 1000000 && cpu_iters > 0)
		{
			std::vector<double> c0 = spaced_rows(x, s.n, s.d, s.k);
			pgkm_options o;
			pgkm_options_default(&o);
			o.k = s.k;
			o.max_iter = cpu_iters;
			o.tol = 0;
			o.init = PGKM_INIT_GIVEN;
			o.initial_centroids = c0.data();
			o.n_init = 1;
			o.device = PGKM_DEVICE_CPU;
			EngineRun	c = run_engine(x, s.n, s.d, o);
			if (c.ok)
				cpu_ms = c.iter_mean_after_first() * 1e3;
		}
		bool		tc = g.path == "gemm-3xtf32";
		double		floor_tc = floor_seconds(s.n, s.d, s.k, tf32 / 3.0, bw);
		printf("%9lld %4d %5d | %10.3f %10.3f %6.2f %7.2f %8d | %9.2f %8.1f | %10.1f %12.6g | %s\n", (long long) s.n,
			   s.d, s.k, g.iter_s * 1e3, floor_s * 1e3, g.iter_s / floor_s, tc ? g.iter_s / floor_tc : NAN, g.launches,
			   g.create_s, (double) s.n * s.d * 4 / g.create_s / 1e9, cpu_ms, g.last_inertia() / s.n, g.path.c_str());
		fflush(stdout);
	}
	return 0;
}
