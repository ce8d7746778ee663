/*
 * gpu_bench_sweeps.cpp: the plugin's variants side by side on the same data
 * and start, through the config's measurement switches (pgkm_cuda_api.h):
 * --sweep (sums modes, argmin occupancy, fused vs GEMM) and --paths (every
 * path a shape can take: where the crossovers in cuda/plan.cpp come from).
 */
#include "gpu_bench.h"

#include <cstdio>
#include <utility>

/* A deterministic-or-fast config with some switches set (0 = production). */
static pgkm_cuda_config
variant(int det, int force_path = PGKM_CUDA_PATH_AUTO, int sums = PGKM_CUDA_SUMS_AUTO, int gemm_bps = 0,
		int tile_mb = 0, int product = PGKM_CUDA_PRODUCT_AUTO)
{
	pgkm_cuda_config cfg = plugin_config(det);
	cfg.force_path = force_path;
	cfg.sums = sums;
	cfg.gemm_blocks_per_sm = gemm_bps;
	cfg.gemm_tile_mb = tile_mb;
	cfg.gemm_product = product;
	return cfg;
}

static double
ratio(const LloydTime &a, const LloydTime &b)
{
	return a.ok && b.ok ? a.iter_s / b.iter_s : NAN;
}

/*
 * --sweep: (1) per-iteration cost of deterministic (fixed-point) vs fast
 * (fp64 atomics) sums, each with the private shared-memory sums and with one
 * global atomic per element (PGKM_CUDA_SUMS_GLOBAL), at n x {2,16,128,768} x
 * {8,64}; d > 32 also on the GEMM path, with its argmin kernel at 4 (default)
 * and 2 blocks per SM; (2) fused vs GEMM for d in {16,24,32,48,64}, k in {64,1024},
 * deterministic. Rows as measured, then compact tables.
 */
void
sweep(const Plugin &pl, int64_t n, const Ceilings &c)
{
	struct ModeRow { int d, k; LloydTime det, fast, det_global, fast_global, gemm, gemm_bps2; };
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
	printf("\n== sweep 1: sums, deterministic vs fast, private vs global atomics (n=%lld) ==\n", (long long) n);
	for (int d : {2, 16, 128, 768})
	{
		make_data(x, n, d, 12345 + d);
		for (int k : {8, 64})
		{
			ModeRow		m {d, k, {}, {}, {}, {}, {}, {}};
			m.det = time_gpu(pl, x, n, d, k, variant(1), plan);
			report("det private", d, k, m.det);
			m.fast = time_gpu(pl, x, n, d, k, variant(0), plan);
			report("fast private", d, k, m.fast);
			m.det_global = time_gpu(pl, x, n, d, k, variant(1, 0, PGKM_CUDA_SUMS_GLOBAL), plan);
			report("det global", d, k, m.det_global);
			m.fast_global = time_gpu(pl, x, n, d, k, variant(0, 0, PGKM_CUDA_SUMS_GLOBAL), plan);
			report("fast global", d, k, m.fast_global);
			if (d > 32)
			{
				m.gemm = time_gpu(pl, x, n, d, k, variant(1, PGKM_CUDA_PATH_GEMM), plan);
				report("det gemm", d, k, m.gemm);
				m.gemm_bps2 = time_gpu(pl, x, n, d, k, variant(1, PGKM_CUDA_PATH_GEMM, 0, 2), plan);
				report("det gemm argmin bps=2", d, k, m.gemm_bps2);
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
			p.fused = time_gpu(pl, x, n, d, k, variant(1, PGKM_CUDA_PATH_FUSED), plan);
			report("fused", d, k, p.fused);
			p.gemm = time_gpu(pl, x, n, d, k, variant(1, PGKM_CUDA_PATH_GEMM), plan);
			report("gemm", d, k, p.gemm);
			paths.push_back(p);
		}
	}
	printf("\n== summary 1: ms per iteration, n=%lld (private = default; global = PGKM_CUDA_SUMS_GLOBAL) ==\n",
		   (long long) n);
	printf("%4s %5s | %9s | %9s %9s %9s | %9s %9s | %9s %9s | %9s %9s\n", "d", "k", "floor", "det", "fast", "fast/det",
		   "det glob", "fast glob", "glob/det", "det/floor", "gemm", "gemm bps2");
	for (auto &m : modes)
	{
		double		fl = floor_seconds(n, m.d, m.k, c.sgemm_tflops, c.copy_gbs);
		printf("%4d %5d | %9.3f | %9s %9s %9.2f | %9s %9s | %9.2f %9.2f | %9s %9s\n", m.d, m.k, fl * 1e3,
			   ms(m.det).c_str(), ms(m.fast).c_str(), ratio(m.fast, m.det), ms(m.det_global).c_str(),
			   ms(m.fast_global).c_str(), ratio(m.det_global, m.det), m.det.ok ? m.det.iter_s / fl : NAN,
			   m.d > 32 ? ms(m.gemm).c_str() : "-", m.d > 32 ? ms(m.gemm_bps2).c_str() : "-");
	}
	printf("\n== summary 2: fused vs GEMM, ms per iteration, n=%lld, deterministic (default split: fused for d <= 64) ==\n",
		   (long long) n);
	printf("%4s %5s | %9s %9s %10s | %s\n", "d", "k", "fused", "gemm", "gemm/fused", "faster");
	for (auto &p : paths)
		printf("%4d %5d | %9s %9s %10.2f | %s\n", p.d, p.k, ms(p.fused).c_str(), ms(p.gemm).c_str(),
			   ratio(p.gemm, p.fused),
			   !(p.fused.ok && p.gemm.ok) ? "?" : (p.fused.iter_s <= p.gemm.iter_s ? "fused" : "gemm"));
	fflush(stdout);
}

/*
 * --paths: the assignment paths side by side per shape, same data and start.
 * Variants: the fused kernel (d <= 64), TILED (forced beyond its default
 * k <= 256), cuBLAS + argmin with its products, and at 768 x 1024 a 32 MB tile.
 */
void
paths_sweep(const Plugin &pl, int64_t n, const Ceilings &c)
{
	struct V { const char *name; pgkm_cuda_config cfg; };
	struct Row { int d, k; std::string def; std::vector<std::pair<std::string, LloydTime>> t; };
	const V		fused {"fused", variant(1, PGKM_CUDA_PATH_FUSED)}, tiled {"tiled", variant(1, PGKM_CUDA_PATH_TILED)},
				gemm {"gemm", variant(1, PGKM_CUDA_PATH_GEMM)},
				fp32 {"gemm fp32", variant(1, PGKM_CUDA_PATH_GEMM, 0, 0, 0, PGKM_CUDA_PRODUCT_FP32)},
				x3 {"gemm 3xtf32", variant(1, PGKM_CUDA_PATH_GEMM, 0, 0, 0, PGKM_CUDA_PRODUCT_3XTF32)},
				gemm32 {"gemm 32MB", variant(1, PGKM_CUDA_PATH_GEMM, 0, 0, 32)};
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
		Row			row {s.d, s.k, default_path(pl, x, s.d, s.k), {}};
		for (const V &v : s.v)
		{
			LloydTime	t = time_gpu(pl, x, n, s.d, s.k, v.cfg, plan);
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
	printf("\n== summary paths: ms per iteration (time/floor), n=%lld; default = the plan's choice ==\n", (long long) n);
	for (const Row &r : rows)
	{
		double		fl = floor_seconds(n, r.d, r.k, c.sgemm_tflops, c.copy_gbs);
		printf("d=%4d k=%5d floor %8.3f | default %-9s |", r.d, r.k, fl * 1e3, r.def.c_str());
		for (auto &p : r.t)
			printf(" %s %s (%.2f)", p.first.c_str(), ms(p.second).c_str(), p.second.ok ? p.second.iter_s / fl : NAN);
		printf("\n");
	}
	fflush(stdout);
}
