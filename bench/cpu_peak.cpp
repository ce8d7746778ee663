/*
 * cpu_peak.cpp: the machine's own ceilings for the CPU benchmark's floors
 * (bench/cpu_libs_bench.py, which measures SGEMM itself through NumPy's
 * BLAS): a register-only FMA loop (AVX-512 and AVX2, where the CPU runs
 * them) and read bandwidth over a buffer far larger than the caches, each
 * at T threads started together.
 *
 *   build/bench/cpu_peak [threads...]      (default: 1 and every core)
 *
 * Prints one JSON object per thread count.
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

static double
now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* Runs f(t) on T threads started together; returns the wall time of the slowest. */
template <typename F>
static double
on_threads(int T, F f)
{
	std::atomic<int> ready {0};
	std::vector<std::thread> th;
	double		t0 = 0;
	std::atomic<bool> go {false};
	for (int t = 0; t < T; t++)
		th.emplace_back([&, t] {
			ready++;
			while (!go.load())
				;
			f(t);
		});
	while (ready.load() < T)
		;
	t0 = now();
	go.store(true);
	for (auto &x : th)
		x.join();
	return now() - t0;
}

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));

/* 24 independent FMA chains (enough to cover latency x ports on any current core). */
template <typename V>
__attribute__((always_inline)) static inline float
fma_loop(long iters)
{
	V			a[24], b, c;
	for (int i = 0; i < 24; i++)
		a[i] = V {} + 1.0f + i * 1e-3f;
	b = V {} + 0.999999f;
	c = V {} + 1e-7f;
	for (long it = 0; it < iters; it++)
	{
		for (int i = 0; i < 24; i++)
			a[i] = a[i] * b + c;
		__asm__ volatile ("" : "+v"(b));
	}
	float		s = 0;
	for (int i = 0; i < 24; i++)
		s += a[i][0];
	return s;
}

__attribute__((target("avx512f,fma"))) static float fma512(long it) { return fma_loop<v16>(it); }
__attribute__((target("avx2,fma"))) static float fma256(long it) { return fma_loop<v8>(it); }

static volatile float sink;

/* GFLOP/s of T threads each running the FMA loop. */
static double
fma_peak(int T, bool avx512)
{
	const long	iters = 20000000;
	double		best = 0;
	for (int rep = 0; rep < 3; rep++)
	{
		double		s = on_threads(T, [&](int) { sink = avx512 ? fma512(iters) : fma256(iters); });
		double		flops = 2.0 * 24 * (avx512 ? 16 : 8) * iters * T;
		best = std::max(best, flops / s / 1e9);
	}
	return best;
}

/* GB/s of T threads reading disjoint slices of a buffer of bytes (vector loads, summed). */
__attribute__((target("avx2"))) static float
read_slice(const float *p, size_t n)
{
	v8			acc[4] = {};
	for (size_t i = 0; i + 32 <= n; i += 32)
		for (int u = 0; u < 4; u++)
		{
			v8			v;
			memcpy(&v, p + i + 8 * u, sizeof(v));
			acc[u] += v;
		}
	v8			s = acc[0] + acc[1] + acc[2] + acc[3];
	return s[0] + s[7];
}

static double
read_bw(int T, size_t bytes)
{
	size_t		n = bytes / sizeof(float);
	std::vector<float> buf(n, 1.0f);
	double		best = 0;
	for (int rep = 0; rep < 5; rep++)
	{
		double		s = on_threads(T, [&](int t) {
			size_t		a = n * t / T, b = n * (t + 1) / T;
			sink = read_slice(buf.data() + a, b - a);
		});
		best = std::max(best, bytes / s / 1e9);
	}
	return best;
}

int
main(int argc, char **argv)
{
	std::vector<int> ts;
	for (int i = 1; i < argc; i++)
		ts.push_back(atoi(argv[i]));
	if (ts.empty())
	{
		unsigned	hc = std::thread::hardware_concurrency();
		ts.push_back(1);
		if (hc > 1)
			ts.push_back((int) hc);
	}
	__builtin_cpu_init();
	const bool	has512 = __builtin_cpu_supports("avx512f");
	const bool	has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	for (int T : ts)
	{
		double		f512 = has512 ? fma_peak(T, true) : 0;
		double		f256 = has2 ? fma_peak(T, false) : 0;
		double		bw = read_bw(T, (size_t) 1 << 30);
		printf("{\"threads\": %d, \"fma512_gflops\": %.1f, \"fma256_gflops\": %.1f, "
			   "\"read_gbs\": %.2f}\n", T, f512, f256, bw);
		fflush(stdout);
	}
	return 0;
}
