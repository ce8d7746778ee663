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
 * Usage: gpu_bench PLUGIN [--quick] [--cpu-iters N] [--shapes n:d:k,...] [--sweep [--sweep-n N]]
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
 */
#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/* Blobs: 64 random centres in [-10,10]^d, N(0,1)-ish noise (sum of 4 uniforms), parallel. */
static void
make_data(std::vector<float> &x, int64_t n, int d, uint64_t seed)
{
	x.resize((size_t) n * d);
	std::vector<float> cen(64 * (size_t) d);
	uint64_t	s = seed;
	auto		rnd = [](uint64_t &s) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; };
	for (auto &c : cen)
		c = (float) ((rnd(s) >> 11) * (1.0 / 9007199254740992.0) * 20.0 - 10.0);
	int			T = std::max(1u, std::thread::hardware_concurrency());
	std::vector<std::thread> th;
	for (int t = 0; t < T; t++)
		th.emplace_back([&, t] {
			uint64_t	s = seed * 7919 + t * 104729 + 1;
			for (int64_t i = (int64_t) t * n / T; i < (int64_t) (t + 1) * n / T; i++)
			{
				int			b = (int) (rnd(s) % 64);
				for (int j = 0; j < d; j++)
				{
					float		u = 0;
					for (int q = 0; q < 4; q++)
						u += (float) ((rnd(s) >> 40) * (1.0 / 16777216.0));
					x[(size_t) i * d + j] = cen[(size_t) b * d + j] + (u - 2.0f) * 1.7320508f;
				}
			}
		});
	for (auto &t : th)
		t.join();
}

static void
measure_ceilings(double *sgemm_tflops, double *copy_gbs)
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
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	std::vector<double> ts;
	for (int r = 0; r < 8; r++)
	{
		cudaEventRecord(e0);
		cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float		ms;
		cudaEventElapsedTime(&ms, e0, e1);
		if (r >= 3)
			ts.push_back(ms / 1e3);
	}
	*sgemm_tflops = 2.0 * N * N * (double) N / median(ts) / 1e12;
	cublasDestroy(hb);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	size_t		bytes = 4ULL << 30;
	void	   *p, *q;
	cudaMalloc(&p, bytes);
	cudaMalloc(&q, bytes);
	cudaMemset(p, 1, bytes);
	ts.clear();
	for (int r = 0; r < 8; r++)
	{
		cudaEventRecord(e0);
		cudaMemcpy(q, p, bytes, cudaMemcpyDeviceToDevice);
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float		ms;
		cudaEventElapsedTime(&ms, e0, e1);
		if (r >= 3)
			ts.push_back(ms / 1e3);
	}
	*copy_gbs = 2.0 * bytes / median(ts) / 1e9;
	cudaFree(p);
	cudaFree(q);
}

/* One GPU configuration's median iterate() time over reps runs after 1 warm-up. */
struct GpuTime
{
	bool		ok = false;
	double		iter_s = NAN, upload_s = NAN, inertia = NAN;
	int			launches = -1;
	std::string err;
};

static void
set_env(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static GpuTime
time_gpu(const pgkm_cuda_api *api, int (*launches)(void *), const std::vector<float> &x, int64_t n, int d, int k,
		 int det, const char *path, const char *sums, int warm, int reps, const char *gemm_bps = nullptr)
{
	GpuTime		out;
	set_env("PGKM_CUDA_PATH", path);
	set_env("PGKM_CUDA_SUMS", sums);
	set_env("PGKM_CUDA_GEMM_BPS", gemm_bps);
	std::vector<double> c((size_t) k * d);
	for (int i = 0; i < k; i++)	/* evenly spaced rows as initial centroids */
		for (int j = 0; j < d; j++)
			c[(size_t) i * d + j] = x[(size_t) (i * (n / k)) * d + j];
	pgkm_cuda_config cfg {};
	cfg.deterministic = det;
	cfg.device_ordinal = -1;
	void	   *r = nullptr;
	char		err[512] = "";
	double		t0 = now();
	int			rc = api->create(x.data(), n, d, k, &cfg, &r, err, sizeof(err));
	out.upload_s = now() - t0;
	if (rc == 0)
		rc = api->set_centroids(r, c.data(), err, sizeof(err));
	std::vector<int64_t> sz(k);
	pgkm_cuda_iter it {};
	std::vector<double> ts;
	for (int i = 0; rc == 0 && i < reps + warm; i++)
	{
		double		a = now();
		rc = api->iterate(r, &it, c.data(), sz.data(), err, sizeof(err));
		double		b = now();
		if (i >= warm)
			ts.push_back(b - a);
	}
	if (rc == 0)
	{
		out.ok = true;
		out.iter_s = median(ts);
		out.inertia = it.inertia;
		out.launches = launches && r ? launches(r) : -1;
	}
	else
		out.err = err;
	if (r)
		api->destroy(r);
	set_env("PGKM_CUDA_PATH", nullptr);
	set_env("PGKM_CUDA_SUMS", nullptr);
	set_env("PGKM_CUDA_GEMM_BPS", nullptr);
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
ms(const GpuTime &t)
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
	struct ModeRow { int d, k; GpuTime det, fast, det_v1, fast_v1, det_bps4; };
	struct PathRow { int d, k; GpuTime fused, gemm; };
	std::vector<ModeRow> modes;
	std::vector<PathRow> paths;
	std::vector<float> x;
	const int	reps = 5;
	auto		report = [](const char *what, int d, int k, const GpuTime &t) {
		if (t.ok)
			printf("  %-22s d=%4d k=%5d  %10.3f ms  launches %4d  upload %.2f s  inertia %.9g\n", what, d, k,
				   t.iter_s * 1e3, t.launches, t.upload_s, t.inertia);
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
			m.det = time_gpu(api, launches, x, n, d, k, 1, nullptr, nullptr, 1, reps);
			report("det private", d, k, m.det);
			m.fast = time_gpu(api, launches, x, n, d, k, 0, nullptr, nullptr, 1, reps);
			report("fast private", d, k, m.fast);
			m.det_v1 = time_gpu(api, launches, x, n, d, k, 1, nullptr, "global", 1, reps);
			report("det v1-global", d, k, m.det_v1);
			m.fast_v1 = time_gpu(api, launches, x, n, d, k, 0, nullptr, "global", 1, reps);
			report("fast v1-global", d, k, m.fast_v1);
			if (d > 32)			/* GEMM path: argmin kernel at 4 blocks/SM instead of 2 */
			{
				m.det_bps4 = time_gpu(api, launches, x, n, d, k, 1, nullptr, nullptr, 1, reps, "4");
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
			p.fused = time_gpu(api, launches, x, n, d, k, 1, "fused", nullptr, 1, reps);
			report("fused", d, k, p.fused);
			p.gemm = time_gpu(api, launches, x, n, d, k, 1, "gemm", nullptr, 1, reps);
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
		auto		ratio = [](const GpuTime &a, const GpuTime &b) { return a.ok && b.ok ? a.iter_s / b.iter_s : NAN; };
		printf("%4d %5d | %9.3f | %9s %9s %9.2f | %9s %9s | %9.2f %9.2f | %9s\n", m.d, m.k, fl * 1e3, ms(m.det).c_str(),
			   ms(m.fast).c_str(), ratio(m.fast, m.det), ms(m.det_v1).c_str(), ms(m.fast_v1).c_str(),
			   ratio(m.det_v1, m.det), m.det.ok ? m.det.iter_s / fl : NAN, m.d > 32 ? ms(m.det_bps4).c_str() : "-");
	}
	printf("\n== summary 2: fused vs GEMM, ms per iteration, n=%lld, deterministic (default split: fused for d <= 32) ==\n",
		   (long long) n);
	printf("%4s %5s | %9s %9s %10s | %s\n", "d", "k", "fused", "gemm", "gemm/fused", "faster");
	for (auto &p : paths)
		printf("%4d %5d | %9s %9s %10.2f | %s\n", p.d, p.k, ms(p.fused).c_str(), ms(p.gemm).c_str(),
			   p.fused.ok && p.gemm.ok ? p.gemm.iter_s / p.fused.iter_s : NAN,
			   !(p.fused.ok && p.gemm.ok) ? "?" : (p.fused.iter_s <= p.gemm.iter_s ? "fused" : "gemm"));
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	if (argc < 2)
	{
		fprintf(stderr, "usage: %s PLUGIN [--quick] [--cpu-iters N] [--shapes n:d:k,...] [--sweep [--sweep-n N]]\n", argv[0]);
		return 2;
	}
	const char *plugin = argv[1];
	bool		quick = false, do_sweep = false;
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
	}
	void	   *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	if (!h)
	{
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	auto		api = ((const pgkm_cuda_api * (*) (void)) dlsym(h, PGKM_CUDA_ENTRY_SYMBOL))();
	auto		launches = (int (*) (void *)) dlsym(h, "pgkm_cuda_debug_launches");
	char		info[256];
	if (api->probe(info, sizeof(info)) != 0)
	{
		fprintf(stderr, "no usable GPU: %s\n", info);
		return 1;
	}
	double		tf, bw;
	measure_ceilings(&tf, &bw);
	printf("device: %s\nceilings: sgemm fp32 %.1f TFLOP/s, d2d copy %.0f GB/s (read+write)\n", info, tf, bw);
	fflush(stdout);
	if (do_sweep)
	{
		sweep(api, launches, sweep_n, tf, bw);
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
	printf("\n%9s %4s %5s | %10s %10s %6s %8s | %9s %8s | %10s %12s | %s\n", "n", "d", "k", "iter_ms", "floor_ms",
		   "ratio", "launch", "upload_s", "GB/s", "cpu_iter_ms", "inertia/n", "path");
	std::vector<float> x;
	for (auto &s : shapes)
	{
		make_data(x, s.n, s.d, 12345 + s.d);
		std::vector<double> c((size_t) s.k * s.d);
		for (int i = 0; i < s.k; i++)	/* evenly spaced rows as initial centroids */
			for (int j = 0; j < s.d; j++)
				c[(size_t) i * s.d + j] = x[(size_t) (i * (s.n / s.k)) * s.d + j];
		pgkm_cuda_config cfg {};
		cfg.deterministic = getenv("PGKM_BENCH_FAST") ? 0 : 1;
		cfg.device_ordinal = -1;
		void	   *r = nullptr;
		char		err[512];
		double		t0 = now();
		int			rc = api->create(x.data(), s.n, s.d, s.k, &cfg, &r, err, sizeof(err));
		double		up = now() - t0;
		if (rc)
		{
			printf("%9lld %4d %5d | create failed: %s\n", (long long) s.n, s.d, s.k, err);
			continue;
		}
		api->set_centroids(r, c.data(), err, sizeof(err));
		std::vector<int64_t> sz(s.k);
		pgkm_cuda_iter it {};
		std::vector<double> ts;
		int			reps = s.n * (double) s.k * s.d > 5e12 ? 4 : 8;
		for (int i = 0; i < reps + 2; i++)
		{
			double		a = now();
			rc = api->iterate(r, &it, c.data(), sz.data(), err, sizeof(err));
			double		b = now();
			if (rc)
				break;
			if (i >= 2)
				ts.push_back(b - a);
		}
		if (rc)
		{
			printf("%9lld %4d %5d | iterate failed: %s\n", (long long) s.n, s.d, s.k, err);
			api->destroy(r);
			continue;
		}
		int			nl = launches ? launches(r) : -1;
		api->destroy(r);
		double		flops = (double) s.n * s.k * (2.0 * s.d + 2.0);
		double		bytes = (double) s.n * s.d * 4 + 8.0 * s.n;
		double		floor_s = std::max(flops / (tf * 1e12), bytes / (bw * 1e9));
		double		it_s = median(ts);
		/* CPU engine on the same data, same initial centroids (1M rows only) */
		double		cpu_ms = NAN;
		if (s.n <= 1000000 && cpu_iters > 0)
		{
			std::vector<double> c0((size_t) s.k * s.d);
			for (int i = 0; i < s.k; i++)
				for (int j = 0; j < s.d; j++)
					c0[(size_t) i * s.d + j] = x[(size_t) (i * (s.n / s.k)) * s.d + j];
			pgkm_options o;
			pgkm_options_default(&o);
			o.k = s.k;
			o.max_iter = cpu_iters;
			o.tol = 0;
			o.init = PGKM_INIT_GIVEN;
			o.initial_centroids = c0.data();
			o.n_init = 1;
			o.device = PGKM_DEVICE_CPU;
			pgkm_run   *run = nullptr;
			if (pgkm_run_create(x.data(), s.n, s.d, &o, nullptr, nullptr, &run, err, sizeof(err)) == 0)
			{
				pgkm_progress pr;
				double		a = now(), b = a;
				int			st, iters = 0;
				while ((st = pgkm_run_step(run, &pr, err, sizeof(err))) == PGKM_OK)
				{
					if (pr.iteration == 1)
						a = now();	/* from after the first iteration's start-up */
					iters = pr.iteration;
					b = now();
				}
				if (iters > 1)
					cpu_ms = (b - a) / (iters - 1) * 1e3;
				pgkm_run_free(run);
			}
		}
		const char *path = s.d < 16 ? "direct" : (s.d <= 32 ? "dot" : "gemm");
		if (getenv("PGKM_CUDA_PATH"))
			path = getenv("PGKM_CUDA_PATH");
		printf("%9lld %4d %5d | %10.3f %10.3f %6.2f %8d | %9.2f %8.1f | %10.1f %12.6g | %s\n", (long long) s.n, s.d,
			   s.k, it_s * 1e3, floor_s * 1e3, it_s / floor_s, nl, up, (double) s.n * s.d * 4 / up / 1e9, cpu_ms,
			   it.inertia / s.n, path);
		fflush(stdout);
	}
	return 0;
}
