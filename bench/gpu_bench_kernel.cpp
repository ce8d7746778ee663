/*
 * gpu_bench_kernel.cpp: kernel k-means on the GPU (gpu_bench --kernel WHAT),
 * through the engine's GPU KernelDevice (src/engine/gpu_kernel_device.cpp)
 * so that every k runs exactly the passes asked for, as Popcorn's
 * benchmark does (PPoPP'25: polynomial kernel gamma 1, coef0 1, degree 2,
 * random initial labels, exactly 30 iterations).
 *
 *   popcorn: its six data sets' shapes (synthetic stand-ins: rows uniform in
 *     [0, 1/sqrt(d)]^d, as bench/kernel_bench.cpp), k = 10, 50, 100: K build,
 *     per-iteration time (host wall and device), 30-iteration clustering
 *     time, GB/s of K read and Popcorn's GFLOP/s (2 n^2 + 3 n k per pass)
 *     against the floor 4 n^2 / copy bandwidth; then the same 30 passes
 *     with K in bfloat16 and in float16: time, labels that differ,
 *     objective change.
 *   build: the Gram product shape, GEMM (full) against SYRK (triangle) in
 *     our build, and cuBLAS's one-call SGEMM and SSYRK alone (Popcorn's),
 *     after one warm-up build, on n in {10k, 50k} and n / d from 0.1 to 1000.
 *   stream: K recomputed in tiles at n = 200k and 1M (d = 50, k = 100):
 *     seconds per pass, fp32 against 3xTF32 products, what bounds it; and
 *     streamed against stored labels at n = 50k.
 */
#include "gpu_bench.h"
#include "gpu_kernel_device.h"
#include "gpu_plugin.h"
#include "stats.h"
#include "thread_pool.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

using namespace pgkm;

namespace
{

struct Shape
{
	const char *name;
	int64_t		n;
	int			d;
};

void
uniform_scaled(std::vector<float> &x, int64_t n, int d, uint64_t seed)
{
	make_uniform(x, n, d, seed);
	const float s = (float) (1.0 / std::sqrt((double) d));
	for (float &v : x)
		v *= s;
}

std::vector<int32_t>
random_labels(int64_t n, int k, uint64_t seed)
{
	std::mt19937_64 g(seed);
	std::vector<int32_t> l(n);
	for (auto &v : l)
		v = (int32_t) (g() % (uint64_t) k);
	return l;
}

/* A fixed number of passes, each from the last one's labels; times per pass. */
struct Passes
{
	std::vector<double> wall, device;
	std::vector<int32_t> labels;
	double		objective = 0;
};

Passes
run_passes(KernelDevice &dev, std::vector<int32_t> labels, int k, int passes, bool warm = true)
{
	Passes		out;
	if (warm)
		run_passes(dev, labels, k, 1, false);	/* untimed: first-use costs stay out */
	const int64_t n = (int64_t) labels.size();
	std::vector<int32_t> next(n);
	std::vector<double> dist2(n), norms(k), cross(k);
	std::vector<int64_t> sizes(k);
	for (int s = 0; s < passes; s++)
	{
		std::fill(sizes.begin(), sizes.end(), 0);
		for (int32_t l : labels)
			sizes[l]++;
		KernelPass	kp;
		kp.labels = next.data();
		kp.dist2 = dist2.data();
		kp.norms = norms.data();
		kp.cross = cross.data();
		double		t0 = now();
		dev.pass(labels.data(), sizes.data(), k, &kp);
		out.wall.push_back(now() - t0);
		out.device.push_back(gpu_kernel_pass_seconds(&dev));
		labels.swap(next);
	}
	out.labels = labels;
	for (double v : dist2)
		out.objective += std::max(v, 0.0);
	return out;
}

struct Built
{
	std::unique_ptr<KernelDevice> dev;
	double		create_s = 0, build_s = 0;
	pgkm_cuda_kernel_plan plan {};
};

Built
make_device(const CudaPlugin *pl, const std::vector<float> &x, int64_t n, int d, const std::vector<double> &mean,
			const KernelParams &p, const GpuKernelOptions &o, int kmax)
{
	Built		b;
	int			status;
	std::string why;
	if (!gpu_kernel_plan(pl, n, d, kmax, p, o, &b.plan, &status, &why))
	{
		printf("  plan refused: %s\n", why.c_str());
		return b;
	}
	double		t0 = now();
	b.dev = make_gpu_kernel_device(pl, x.data(), n, d, mean.data(), p, o, kmax, nullptr, nullptr);
	b.create_s = now() - t0;
	t0 = now();
	b.dev->build();
	b.build_s = now() - t0;
	return b;
}

KernelParams
popcorn_kernel()
{
	KernelParams p;
	p.kind = PGKM_KERNEL_POLYNOMIAL;
	p.gamma = 1;
	p.coef0 = 1;
	p.degree = 2;
	return p;
}

std::vector<double>
column_means(const std::vector<float> &x, int64_t n, int d)
{
	ThreadPool	pool(hw_threads(), nullptr, nullptr);
	return data_statistics(x.data(), n, d, &pool).mean;
}

/* Read bandwidth: cublasSasum over 4 GiB (each byte read once). */
double
read_gbs()
{
	const size_t count = 1ULL << 30;
	float	   *v;
	cudaMalloc(&v, count * 4);
	cudaMemset(v, 0x3c, count * 4);
	cublasHandle_t h;
	cublasCreate(&h);
	float		r;
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	std::vector<double> ts;
	for (int i = 0; i < 6; i++)
	{
		cudaEventRecord(e0);
		cublasSasum(h, (int) count, v, 1, &r);
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float		ms;
		cudaEventElapsedTime(&ms, e0, e1);
		if (i > 0)
			ts.push_back(ms * 1e-3);
	}
	cublasDestroy(h);
	cudaFree(v);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	return count * 4.0 / median(ts) / 1e9;
}

const char *
build_name(const pgkm_cuda_kernel_plan &p)
{
	return p.build == PGKM_CUDA_KBUILD_GEMM ? (p.product == PGKM_CUDA_PRODUCT_3XTF32 ? "GEMM 3xTF32" : "GEMM fp32")
		: (p.product == PGKM_CUDA_PRODUCT_3XTF32 ? "SYRK 3xTF32" : "SYRK fp32");
}

void
popcorn(const CudaPlugin *pl, const Ceilings &c, int64_t max_n)
{
	const Shape shapes[] = {{"Acoustic", 78823, 50}, {"CIFAR-10", 50000, 3072}, {"Ledgar", 70000, 19996},
		{"Letter", 10500, 26}, {"MNIST", 60000, 780}, {"SCOTUS", 6400, 126405}};
	const double bw = c.copy_gbs * 1e9;
	printf("\n## Popcorn's setups: polynomial gamma 1, coef0 1, degree 2, random labels, exactly 30 passes\n");
	printf("floor = 4 n^2 / copy bandwidth (%.0f GB/s); iter = median host wall per pass, dev = its device time\n"
		   "(CUDA events), after one untimed pass; 30it = the 30 passes' wall seconds. Half precision: K - mu in\n"
		   "bf16 or fp16 (mu a sample mean of K), the same 30 passes from the same labels: pass time against its\n"
		   "floor 2 n^2 / bandwidth, labels differing from fp32's after 30 passes, objective change.\n", c.copy_gbs);
	printf("%-9s %6s %6s | %-11s %7s %7s | %4s | %8s %8s %8s %5s %7s %8s %7s | %8s %5s %7s %9s | %8s %5s %7s %9s\n",
		   "data", "n", "d", "build", "K_s", "create", "k", "iter_ms", "dev_ms", "floor", "x", "GB/s", "GFLOP/s",
		   "30it_s", "bf16_ms", "x", "diff%", "obj", "fp16_ms", "x", "diff%", "obj");
	std::vector<float> x;
	for (const Shape &s : shapes)
	{
		const int64_t n = std::min(s.n, max_n);
		uniform_scaled(x, n, s.d, 1000 + s.d);
		std::vector<double> mean = column_means(x, n, s.d);
		const int	ks[] = {10, 50, 100};
		std::vector<Passes> runs[3];	/* fp32, bf16, fp16 */
		std::string build;
		double		build_s = 0, create_s = 0;
		for (int prec = 0; prec < 3; prec++)
		{
			GpuKernelOptions o;
			o.precision = prec == 0 ? PGKM_CUDA_KPREC_FP32 : prec == 1 ? PGKM_CUDA_KPREC_BF16 : PGKM_CUDA_KPREC_FP16;
			Built		b = make_device(pl, x, n, s.d, mean, popcorn_kernel(), o, 100);
			if (!b.dev)
				continue;
			if (prec == 0)
			{
				build = build_name(b.plan);
				build_s = b.build_s;
				create_s = b.create_s;
			}
			for (int k : ks)
				runs[prec].push_back(run_passes(*b.dev, random_labels(n, k, 7 + k), k, 30));
		}
		if (runs[0].empty())
			continue;
		const double floor_s = 4.0 * (double) n * n / bw;
		for (int ki = 0; ki < 3; ki++)
		{
			const int	k = ks[ki];
			const Passes &f = runs[0][ki];
			double		sum = 0;
			for (double t : f.wall)
				sum += t;
			const double it = median(f.wall), dev = median(f.device);
			printf("%-9s %6lld %6d | %-11s %7.3f %7.3f | %4d | %8.3f %8.3f %8.3f %5.2f %7.0f %8.1f %7.3f", s.name,
				   (long long) n, s.d, build.c_str(), build_s, create_s, k, it * 1e3, dev * 1e3, floor_s * 1e3,
				   it / floor_s, 4.0 * n * n / it / 1e9, (2.0 * n * n + 3.0 * n * k) / it / 1e9, sum);
			for (int prec = 1; prec < 3; prec++)
			{
				if ((int) runs[prec].size() <= ki)
				{
					printf(" | %8s %5s %7s %9s", "-", "-", "-", "-");
					continue;
				}
				const Passes &h = runs[prec][ki];
				int64_t		diff = 0;
				for (int64_t i = 0; i < n; i++)
					diff += h.labels[i] != f.labels[i];
				const double ht = median(h.wall);
				printf(" | %8.3f %5.2f %7.3f %+9.2e", ht * 1e3, ht / (floor_s / 2), 100.0 * diff / n,
					   (h.objective - f.objective) / f.objective);
			}
			printf("\n");
			fflush(stdout);
		}
	}
}

/* Seconds of one call, after one warm-up, by CUDA events. */
template <typename F>
double
event_seconds(F f)
{
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	f();
	cudaEventRecord(e0);
	f();
	cudaEventRecord(e1);
	cudaEventSynchronize(e1);
	float		ms = 0;
	cudaEventElapsedTime(&ms, e0, e1);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	return ms * 1e-3;
}

void
build_grid(const CudaPlugin *pl)
{
	printf("\n## K build: GEMM (full product) against SYRK (upper triangle), fp32 products, RBF map\n");
	printf("ours = kernel_create + build (upload, row statistics, panels of cuBLAS products + the map/mirror kernel)\n");
	printf("cuBLAS alone = one cublasSgemm (n x n x d) or one cublasSsyrk (n, d), as Popcorn calls them\n");
	printf("%7s %7s %9s | %9s %9s %7s | %11s %11s %7s\n", "n", "d", "n/d", "gemm_s", "syrk_s", "g/s", "cublas_gemm",
		   "cublas_syrk", "g/s");
	const int64_t grid[][2] = {{0, 0}, {10000, 20}, {10000, 100}, {10000, 1000}, {10000, 10000}, {10000, 100000},
		{50000, 50}, {50000, 100}, {50000, 250}, {50000, 500}, {50000, 1000}, {50000, 10000}};
	KernelParams p;
	p.kind = PGKM_KERNEL_RBF;
	p.gamma = 0.5;
	std::vector<float> x;
	for (auto &g0 : grid)
	{
		/* the first row is a warm-up (cuBLAS loads its SYRK and GEMM kernels on first use), not printed */
		const bool	warm = g0[0] == 0;
		const int64_t g[2] = {warm ? 4096 : g0[0], warm ? 64 : g0[1]};
		const int64_t n = g[0];
		const int	d = (int) g[1];
		uniform_scaled(x, n, d, 77);
		std::vector<double> mean = column_means(x, n, d);
		double		t[2] = {NAN, NAN};
		for (int m = 0; m < 2; m++)
		{
			GpuKernelOptions o;
			o.matrix = PGKM_CUDA_KMATRIX_STORED;
			o.build = m == 0 ? PGKM_CUDA_KBUILD_GEMM : PGKM_CUDA_KBUILD_SYRK;
			o.product = PGKM_CUDA_PRODUCT_FP32;
			Built		b = make_device(pl, x, n, d, mean, p, o, 10);
			t[m] = b.dev ? b.build_s : NAN;
		}
		/* cuBLAS alone on the device copy of x */
		float	   *dx = nullptr, *dc = nullptr;
		double		tg = NAN, ts = NAN;
		if (cudaMalloc(&dx, (size_t) n * d * 4) == cudaSuccess && cudaMalloc(&dc, (size_t) n * n * 4) == cudaSuccess)
		{
			cudaMemcpy(dx, x.data(), (size_t) n * d * 4, cudaMemcpyHostToDevice);
			cublasHandle_t h;
			cublasCreate(&h);
			const float one = 1, zero = 0;
			tg = event_seconds([&] {
				cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, (int) n, (int) n, d, &one, dx, d, dx, d, &zero, dc, (int) n);
			});
			ts = event_seconds([&] {
				cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, (int) n, d, &one, dx, d, &zero, dc, (int) n);
			});
			cublasDestroy(h);
		}
		cudaFree(dx);
		cudaFree(dc);
		if (!warm)
			printf("%7lld %7d %9.2f | %9.3f %9.3f %7.2f | %11.3f %11.3f %7.2f\n", (long long) n, d, (double) n / d,
				   t[0], t[1], t[0] / t[1], tg, ts, tg / ts);
		fflush(stdout);
	}
}

void
stream(const CudaPlugin *pl, const Ceilings &c)
{
	printf("\n## K recomputed in tiles (streamed), polynomial gamma 1 coef0 1 degree 2, k = 100\n");
	printf("%8s %4s | %-7s %9s %9s %9s | %10s %12s\n", "n", "d", "product", "pass_s", "dev_s", "host_s", "TFLOP/s",
		   "Gelem/s");
	std::vector<float> x;
	const int	k = 100, d = 50;
	for (int64_t n : {200000LL, 1000000LL})
	{
		uniform_scaled(x, n, d, 5);
		std::vector<double> mean = column_means(x, n, d);
		for (int prod : {PGKM_CUDA_PRODUCT_FP32, PGKM_CUDA_PRODUCT_3XTF32})
		{
			GpuKernelOptions o;
			o.matrix = PGKM_CUDA_KMATRIX_STREAMED;
			o.product = prod;
			Built		b = make_device(pl, x, n, d, mean, popcorn_kernel(), o, k);
			if (!b.dev)
				continue;
			Passes		r = run_passes(*b.dev, random_labels(n, k, 3), k, n > 200000 ? 1 : 3, n <= 200000);
			const double t = median(r.wall), dv = median(r.device);
			/* the products' flops (3 per 3xTF32 entry) and the map's entries; 1M: one pass, no warm-up */
			const double flops = 2.0 * n * (double) n * d * (prod == PGKM_CUDA_PRODUCT_3XTF32 ? 3 : 1);
			printf("%8lld %4d | %-7s %9.3f %9.3f %9.3f | %10.1f %12.1f\n", (long long) n, d,
				   prod == PGKM_CUDA_PRODUCT_3XTF32 ? "3xTF32" : "fp32", t, dv, t - dv, flops / dv / 1e12,
				   (double) n * n / dv / 1e9);
			fflush(stdout);
		}
	}
	printf("(ceilings: sgemm fp32 %.1f, tf32 %.1f TFLOP/s)\n", c.sgemm_tflops, c.tf32_tflops);

	/* streamed against stored from the same labels, where K fits */
	const int64_t n = 50000;
	uniform_scaled(x, n, d, 9);
	std::vector<double> mean = column_means(x, n, d);
	GpuKernelOptions st, sr;
	st.matrix = PGKM_CUDA_KMATRIX_STORED;
	sr.matrix = PGKM_CUDA_KMATRIX_STREAMED;
	Built		a = make_device(pl, x, n, d, mean, popcorn_kernel(), st, k);
	Passes		pa = run_passes(*a.dev, random_labels(n, k, 4), k, 10);
	a.dev.reset();
	Built		b = make_device(pl, x, n, d, mean, popcorn_kernel(), sr, k);
	Passes		pb = run_passes(*b.dev, random_labels(n, k, 4), k, 10);
	int64_t		diff = 0;
	for (int64_t i = 0; i < n; i++)
		diff += pa.labels[i] != pb.labels[i];
	printf("n = %lld, d = %d, k = %d, 10 passes from the same labels: streamed (%s) vs stored: %lld labels differ, "
		   "objective %+.2e relative; pass %.3f s streamed, %.4f s stored\n", (long long) n, d, k,
		   b.plan.product == PGKM_CUDA_PRODUCT_3XTF32 ? "3xTF32" : "fp32", (long long) diff,
		   (pb.objective - pa.objective) / pa.objective, median(pb.wall), median(pa.wall));
}

}							/* namespace */

void
kernel_bench(const Plugin &plugin, const Ceilings &c, const std::string &what, int64_t max_n)
{
	std::string why;
	const CudaPlugin *pl = load_cuda_plugin(plugin.file, &why);
	if (!pl || !cuda_plugin_has_kernel(pl))
	{
		printf("kernel k-means: the plugin does not load or has no kernel entry points: %s\n", why.c_str());
		return;
	}
	printf("read bandwidth (cublasSasum over 4 GiB): %.0f GB/s\n", read_gbs());
	if (what == "popcorn" || what == "all")
		popcorn(pl, c, max_n);
	if (what == "build" || what == "all")
		build_grid(pl);
	if (what == "stream" || what == "all")
		stream(pl, c);
}
