/*
 * gpu_bench_common.cpp: seeded data, ceilings and timed runs of the GPU
 * benchmark (gpu_bench.h).
 */
#include "gpu_bench.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

double
now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double
median(std::vector<double> v)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int
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
void
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
void
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
 * Row i: (i mod 16) + U[0,1) per feature, bench/gpu_sql_e2e.sh's e2e768
 * table: 16 unit cubes on the diagonal, so at k = 64 about 4 centroids share
 * a cube and nearly every row is a float near-tie (decided in fp64).
 */
void
make_mod16(std::vector<float> &x, int64_t n, int d, uint64_t seed)
{
	x.resize((size_t) n * d);
	parallel_rows(n, [&](int t, int64_t i0, int64_t i1) {
		uint64_t	s = seed * 7919 + t * 104729 + 1;
		for (int64_t i = i0; i < i1; i++)
			for (int j = 0; j < d; j++)
				x[(size_t) i * d + j] = (float) (i % 16) + (float) unit(s);
	});
}

/*
 * Gaussian blobs: k centres uniform in [lo,hi]^d, row i drawn around centre
 * i mod k (n/k rows each, interleaved like a shuffled make_blobs) with
 * N(0, sigma^2) per coordinate (Box-Muller). B2: [-10,10], sigma 1 (sklearn's
 * make_blobs defaults); B5: [0,1], sigma^2 given; B6: as B2.
 */
void
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
std::vector<double>
spaced_rows(const std::vector<float> &x, int64_t n, int d, int k)
{
	std::vector<double> c((size_t) k * d);
	for (int i = 0; i < k; i++)
		for (int j = 0; j < d; j++)
			c[(size_t) i * d + j] = x[(size_t) (i * (n / k)) * d + j];
	return c;
}

/* k distinct rows chosen uniformly (partial Fisher-Yates), seeded: random init. */
std::vector<double>
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

Ceilings
measure_ceilings()
{
	Ceilings	out;
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
	out.sgemm_tflops = 2.0 * N * N * (double) N / t / 1e12;
	cublasSetMathMode(hb, CUBLAS_TF32_TENSOR_OP_MATH);	/* the 3xTF32 products' rate */
	t = event_median_seconds([&] {
		cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
	});
	out.tf32_tflops = 2.0 * N * N * (double) N / t / 1e12;
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
	out.copy_gbs = 2.0 * bytes / t / 1e9;
	cudaFree(p);
	cudaFree(q);
	return out;
}



double
floor_seconds(int64_t n, int d, int k, double tflops, double gbs)
{
	double		flops = (double) n * k * (2.0 * d + 2.0);
	double		bytes = (double) n * d * 4 + 8.0 * n;
	return std::max(flops / (tflops * 1e12), bytes / (gbs * 1e9));
}

std::string
ms(const LloydTime &t)
{
	char		b[32];
	if (!t.ok)
		return "fail";
	snprintf(b, sizeof(b), "%.3f", t.iter_s * 1e3);
	return b;
}

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
	out->iterations = plan.warm + plan.reps;
	return true;
}

pgkm_cuda_config
plugin_config(int det)
{
	pgkm_cuda_config cfg {};
	cfg.deterministic = det;
	cfg.device_ordinal = -1;
	return cfg;
}

std::string
default_path(const Plugin &pl, const std::vector<float> &x, int d, int k)
{
	pgkm_cuda_config cfg = plugin_config(1);
	void	   *r = nullptr;
	char		err[256];
	std::string p = "?";
	if (pl.api->create(x.data(), k, d, k, &cfg, &r, err, sizeof(err)) == 0 && pl.path)
		p = pl.path(r);
	if (r)
		pl.api->destroy(r);
	return p;
}

LloydTime
time_gpu(const Plugin &pl, const std::vector<float> &x, int64_t n, int d, int k, const pgkm_cuda_config &cfg,
		 const LloydPlan &plan)
{
	LloydTime	out;
	std::vector<double> c = plan.init ? *plan.init : spaced_rows(x, n, d, k);
	std::vector<int64_t> sz(k);
	std::vector<int32_t> labels(plan.assign ? n : 0);
	std::vector<double> dist2(plan.assign ? n : 0);
	const pgkm_cuda_api *api = pl.api;
	void	   *r = nullptr;
	char		err[512] = "";
	double		t0 = now();
	int			rc = api->create(x.data(), n, d, k, &cfg, &r, err, sizeof(err));
	out.create_s = now() - t0;
	if (rc == 0)
		rc = api->set_centroids(r, c.data(), err, sizeof(err));
	int64_t		decided = 0;
	bool		ok = rc == 0 && timed_iterations([&](double *inertia) {
		pgkm_cuda_iter it {};
		if (api->iterate(r, &it, c.data(), sz.data(), err, sizeof(err)) != 0)
			return false;
		*inertia = it.inertia;
		if (pl.decided)
			decided += pl.decided(r);
		return true;
	}, plan, &out);
	if (ok && pl.decided)
		out.decided = (double) decided / out.iterations;
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
		out.launches = pl.launches && r ? pl.launches(r) : -1;
		out.path = pl.path ? pl.path(r) : "?";
	}
	else
		out.err = err;
	if (r)
		api->destroy(r);
	return out;
}

LloydTime
time_cpu(const std::vector<float> &x, int64_t n, int d, int k, int threads, const LloydPlan &plan)
{
	LloydTime	out;
	std::vector<double> c = plan.init ? *plan.init : spaced_rows(x, n, d, k);
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.max_iter = plan.warm + plan.reps;
	o.tol = 0;
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = c.data();
	o.n_init = 1;
	o.device = PGKM_DEVICE_CPU;
	o.n_threads = threads;
	EngineRun	e = run_engine(x, n, d, o);
	if (!e.ok)
	{
		out.err = e.err;
		return out;
	}
	out.ok = true;
	out.create_s = e.create_s;
	out.assign_s = e.final_s;
	out.total_s = e.total_s;
	out.final_inertia = e.final_inertia;
	out.inertia = e.inertia;
	out.iterations = (int) e.iter_s.size();
	/* the timed iterations; all of them if the engine converged within the warm-up */
	std::vector<double> ts(e.iter_s.begin() + std::min<size_t>(plan.warm, e.iter_s.size()), e.iter_s.end());
	if (ts.empty())
		ts = e.iter_s;
	out.iter_s = median(ts);
	out.loop_s = 0;
	for (double t : ts)
		out.loop_s += t;
	return out;
}

double
EngineRun::iter_mean_after_first() const
{
	if (iter_s.size() < 2)
		return NAN;
	double		s = 0;
	for (size_t i = 1; i < iter_s.size(); i++)
		s += iter_s[i];
	return s / (iter_s.size() - 1);
}

EngineRun
run_engine(const std::vector<float> &x, int64_t n, int d, const pgkm_options &o)
{
	EngineRun	out;
	char		err[512] = "";
	pgkm_run   *run = nullptr;
	double		t0 = now();
	/* the run rounds x in place to its sums' grid, the same rounding every time: runs on it stay comparable */
	if (pgkm_run_create(const_cast<float *>(x.data()), n, d, &o, nullptr, nullptr, &run, err, sizeof(err)) != PGKM_OK)
	{
		out.err = err;
		return out;
	}
	out.create_s = now() - t0;
	pgkm_progress pr;
	int			st, last_iter = 0;
	double		a = now();
	while ((st = pgkm_run_step(run, &pr, err, sizeof(err))) == PGKM_OK || st == PGKM_DONE)
	{
		double		b = now();
		if (st == PGKM_OK && pr.iteration == last_iter + 1)	/* an iteration step (init is 0) */
		{
			out.iter_s.push_back(b - a);
			out.inertia.push_back(pr.inertia);
			out.moved.push_back(pr.moved);
			out.pass_method.push_back(pr.method);
			last_iter = pr.iteration;
		}
		else if (pr.iteration > 0)	/* the final assignment repeats the last iteration's number */
			out.final_s = b - a;
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
		out.distances = res.distance_computations;
		out.distances_lloyd = res.distance_computations_lloyd;
		out.method_used = res.method_used ? res.method_used : "";
		out.init.assign(res.initial_centroids, res.initial_centroids + (size_t) res.k * d);
	}
	else
		out.err = err;
	pgkm_run_free(run);
	return out;
}

pgkm_options
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
