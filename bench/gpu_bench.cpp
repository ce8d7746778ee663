/*
 * gpu_bench.cpp: per-iteration time of the CUDA plugin against the hardware
 * floor, with the shipped CPU engine on the same data.
 *
 * Ceilings are measured here first: cuBLAS SGEMM 8192^3 (fp32, and TF32) and
 * a 4 GiB device-to-device copy (bytes read + written), both timed with CUDA
 * events, median of 5 after warm-up. Per shape: floor = max(n k (2d+2) /
 * sgemm_rate, (n d 4 + 8 n) / copy_bw); iterate() is synchronous (it ends with
 * the D2H of sums/counts and the host-side centroid update), so host wall
 * time around it is the full iteration with data resident (no data transfer).
 * The CPU column (1M rows) is the engine's public API, device CPU, from the
 * same initial centroids.
 *
 *   gpu_bench PLUGIN [--quick] [--cpu-iters N] [--shapes n:d:k,...] [--fast]
 *                    [--force-path fused|tiled|gemm] [--global-sums] [--uniform|--mod16]
 *   gpu_bench PLUGIN --sweep|--paths [--sweep-n N]     (gpu_bench_sweeps.cpp)
 *   gpu_bench PLUGIN --papers                          (gpu_bench_papers.cpp)
 *   gpu_bench PLUGIN --kernel popcorn|build|stream|all [--max-n N]   (gpu_bench_kernel.cpp)
 *   gpu_bench PLUGIN --hamerly [--max-n N]             (gpu_bench_hamerly.cpp)
 * --fast: fp64-atomic sums instead of deterministic; --force-path,
 * --global-sums: the plugin's measurement switches for the engine table;
 * --uniform: U[0,1)^d rows instead of 64 blobs; --mod16: row i (i mod 16) +
 * U[0,1)^d (the SQL benchmark's e2e768; spaced-row init puts 4 centroids in
 * each cube). fp64/it is the rows per
 * iteration whose label the plugin decided in fp64 (its label bound left
 * them open), when the plugin says.
 */
#include "gpu_bench.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>

/* The engine table: each shape's iteration against its floor, the CPU engine at 1M rows. */
static void
engine_table(const Plugin &pl, const Ceilings &c, const std::string &shapes_arg, bool quick, int cpu_iters,
			 const pgkm_cuda_config &cfg, const std::string &data)
{
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
	printf("\n%9s %4s %5s | %10s %10s %6s %7s %8s | %9s %8s | %10s %12s | %9s | %s  (%s)\n", "n", "d", "k", "iter_ms",
		   "floor_ms", "ratio", "x3tf32", "launch", "upload_s", "GB/s", "cpu_iter_ms", "inertia/n", "fp64/it", "path",
		   data.c_str());
	std::vector<float> x;
	for (auto &s : shapes)
	{
		if (data == "uniform")
			make_uniform(x, s.n, s.d, 12345 + s.d);
		else if (data == "mod16")
			make_mod16(x, s.n, s.d, 12345 + s.d);
		else
			make_data(x, s.n, s.d, 12345 + s.d);
		LloydPlan	plan;
		plan.warm = 2;
		plan.reps = s.n * (double) s.k * s.d > 5e12 ? 4 : 8;
		LloydTime	g = time_gpu(pl, x, s.n, s.d, s.k, cfg, plan);
		if (!g.ok)
		{
			printf("%9lld %4d %5d | failed: %s\n", (long long) s.n, s.d, s.k, g.err.c_str());
			continue;
		}
		double		floor_s = floor_seconds(s.n, s.d, s.k, c.sgemm_tflops, c.copy_gbs);
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
			EngineRun	e = run_engine(x, s.n, s.d, o);
			if (e.ok)
				cpu_ms = e.iter_mean_after_first() * 1e3;
		}
		bool		tc = g.path == "gemm-3xtf32";
		double		floor_tc = floor_seconds(s.n, s.d, s.k, c.tf32_tflops / 3.0, c.copy_gbs);
		printf("%9lld %4d %5d | %10.3f %10.3f %6.2f %7.2f %8d | %9.2f %8.1f | %10.1f %12.6g | %9.1f | %s\n",
			   (long long) s.n, s.d, s.k, g.iter_s * 1e3, floor_s * 1e3, g.iter_s / floor_s,
			   tc ? g.iter_s / floor_tc : NAN, g.launches, g.create_s, (double) s.n * s.d * 4 / g.create_s / 1e9,
			   cpu_ms, g.last_inertia() / s.n, g.decided, g.path.c_str());
		fflush(stdout);
	}
}

int
main(int argc, char **argv)
{
	if (argc < 2)
	{
		fprintf(stderr, "usage: %s PLUGIN [--quick] [--cpu-iters N] [--shapes n:d:k,...] [--fast] [--force-path P]"
				" [--global-sums] [--uniform|--mod16] | --sweep|--paths [--sweep-n N] | --papers | --kernel WHAT [--max-n N]"
				" | --hamerly [--max-n N]\n",
				argv[0]);
		return 2;
	}
	Plugin		pl;
	pl.file = argv[1];
	bool		quick = false, do_sweep = false, do_papers = false, do_paths = false, do_hamerly = false;
	std::string data = "blobs";
	std::string kernel_what;
	int64_t		max_n = INT64_MAX;
	int64_t		sweep_n = 10000000;
	int			cpu_iters = 2;
	std::string shapes_arg;
	pgkm_cuda_config cfg = plugin_config(1);
	for (int i = 2; i < argc; i++)
	{
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--cpu-iters") && i + 1 < argc)
			cpu_iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
			shapes_arg = argv[++i];
		else if (!strcmp(argv[i], "--fast"))
			cfg.deterministic = 0;
		else if (!strcmp(argv[i], "--global-sums"))
			cfg.sums = PGKM_CUDA_SUMS_GLOBAL;
		else if (!strcmp(argv[i], "--uniform"))
			data = "uniform";
		else if (!strcmp(argv[i], "--mod16"))
			data = "mod16";
		else if (!strcmp(argv[i], "--force-path") && i + 1 < argc)
		{
			const char *p = argv[++i];
			cfg.force_path = !strcmp(p, "fused") ? PGKM_CUDA_PATH_FUSED : !strcmp(p, "tiled") ? PGKM_CUDA_PATH_TILED
				: !strcmp(p, "gemm") ? PGKM_CUDA_PATH_GEMM : -1;
		}
		else if (!strcmp(argv[i], "--sweep"))
			do_sweep = true;
		else if (!strcmp(argv[i], "--sweep-n") && i + 1 < argc)
			sweep_n = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--papers"))
			do_papers = true;
		else if (!strcmp(argv[i], "--paths"))
			do_paths = true;
		else if (!strcmp(argv[i], "--hamerly"))
			do_hamerly = true;
		else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
			kernel_what = argv[++i];
		else if (!strcmp(argv[i], "--max-n") && i + 1 < argc)
			max_n = atoll(argv[++i]);
		else
		{
			fprintf(stderr, "unknown argument: %s\n", argv[i]);
			return 2;
		}
	}
	void	   *h = dlopen(pl.file, RTLD_NOW | RTLD_LOCAL);
	if (!h)
	{
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	auto		get = (const pgkm_cuda_api * (*) (void)) dlsym(h, PGKM_CUDA_ENTRY_SYMBOL);
	pl.api = get ? get() : nullptr;
	if (!pl.api || pl.api->abi_version != PGKM_CUDA_ABI_VERSION || pl.api->struct_size != sizeof(pgkm_cuda_api))
	{
		fprintf(stderr, "%s: not a plugin of ABI version %d\n", pl.file, PGKM_CUDA_ABI_VERSION);
		return 1;
	}
	pl.launches = (int (*) (void *)) dlsym(h, "pgkm_cuda_debug_launches");
	pl.path = (const char *(*) (void *)) dlsym(h, "pgkm_cuda_debug_path");
	pl.decided = (int64_t (*) (void *)) dlsym(h, "pgkm_cuda_debug_decided");
	char		info[256];
	if (pl.api->probe(info, sizeof(info)) != 0)
	{
		fprintf(stderr, "no usable GPU: %s\n", info);
		return 1;
	}
	Ceilings	c = measure_ceilings();
	printf("device: %s\nceilings: sgemm fp32 %.1f TFLOP/s, sgemm tf32 %.1f TFLOP/s, d2d copy %.0f GB/s (read+write)\n",
		   info, c.sgemm_tflops, c.tf32_tflops, c.copy_gbs);
	fflush(stdout);
	if (!kernel_what.empty())
		kernel_bench(pl, c, kernel_what, max_n);
	else if (do_sweep)
		sweep(pl, sweep_n, c);
	else if (do_paths)
		paths_sweep(pl, sweep_n, c);
	else if (do_papers)
		papers(pl);
	else if (do_hamerly)
		hamerly_bench(pl, max_n);
	else
		engine_table(pl, c, shapes_arg, quick, cpu_iters, cfg, data);
	return 0;
}
