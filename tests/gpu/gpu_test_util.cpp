/*
 * gpu_test_util.cpp: the GPU tests' shared helpers (gpu_test_util.h).
 */
#include "gpu_test_util.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

const char *
plugin_path()
{
	const char *p = getenv("PGKM_CUDA_PLUGIN");
	return p ? p : PGKM_CUDA_PLUGIN_DEFAULT;
}

static void *
plugin_handle()
{
	static void *h = dlopen(plugin_path(), RTLD_NOW | RTLD_LOCAL);
	return h;
}

const pgkm_cuda_api *
api()
{
	static const pgkm_cuda_api *a = [] {
		void	   *h = plugin_handle();
		auto		get = h ? (const pgkm_cuda_api * (*) (void)) dlsym(h, PGKM_CUDA_ENTRY_SYMBOL) : nullptr;
		return get ? get() : nullptr;
	}();
	return a;
}

template <typename F>
static F
debug_export(const char *name)
{
	void	   *h = plugin_handle();
	return h ? (F) dlsym(h, name) : nullptr;
}

std::string
debug_path(void *h)
{
	static auto f = debug_export<const char *(*) (void *)>("pgkm_cuda_debug_path");
	return f ? f(h) : "?";
}

int
debug_streamed(void *h)
{
	static auto f = debug_export<int (*) (void *)>("pgkm_cuda_debug_streamed");
	return f ? f(h) : -1;
}

int64_t
debug_kpp_rows(void *h)
{
	static auto f = debug_export<int64_t (*) (void *)>("pgkm_cuda_debug_kpp_rows");
	return f ? f(h) : -1;
}

int64_t
debug_decided(void *h)
{
	static auto f = debug_export<int64_t (*) (void *)>("pgkm_cuda_debug_decided");
	return f ? f(h) : -1;
}

int
debug_method(void *h)
{
	static auto f = debug_export<int (*) (void *)>("pgkm_cuda_debug_method");
	return f ? f(h) : -1;
}

int
debug_hamerly(void *h)
{
	static auto f = debug_export<int (*) (void *)>("pgkm_cuda_debug_hamerly");
	return f ? f(h) : -1;
}

int64_t
debug_listed(void *h)
{
	static auto f = debug_export<int64_t (*) (void *)>("pgkm_cuda_debug_listed");
	return f ? f(h) : -1;
}

std::vector<int32_t>
gpu_assign_labels(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c0,
				  const pgkm_cuda_config &cfg, std::string *path, int64_t *decided)
{
	void	   *h = nullptr;
	char		err[512] = "";
	std::vector<int32_t> lab(n, -1);
	std::vector<double> d2(n);
	std::vector<int64_t> sz(k);
	double		inertia;
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	if (!h)
		return lab;
	EXPECT_EQ(api()->set_centroids(h, c0.data(), err, sizeof(err)), 0) << err;
	EXPECT_EQ(api()->assign(h, lab.data(), d2.data(), sz.data(), &inertia, err, sizeof(err)), 0) << err;
	if (path)
		*path = debug_path(h);
	if (decided)
		*decided = debug_decided(h);
	api()->destroy(h);
	return lab;
}

void
expect_same_run(const pgkm_test::EngineResult &gpu, const pgkm_test::EngineResult &cpu)
{
	ASSERT_EQ(gpu.device, "gpu");
	EXPECT_EQ(gpu.labels, cpu.labels);
	EXPECT_EQ(gpu.iterations, cpu.iterations);
	EXPECT_EQ(gpu.centroids, cpu.centroids) << "the same labels give the same fixed-point sums on both devices";
	EXPECT_NEAR(gpu.inertia, cpu.inertia, 1e-12 * cpu.inertia);
}

int64_t
count_not_fp64_argmin(const std::vector<float> &x, int d, const std::vector<double> &c,
					  const std::vector<int32_t> &labels)
{
	const int	k = (int) (c.size() / d);
	int64_t		wrong = 0;
	for (size_t i = 0; i < labels.size(); i++)
		wrong += labels[i] != pgkm_test::nearest_fp64(x.data() + i * d, c.data(), k, d);
	return wrong;
}

pgkm_cuda_config
plugin_config(int det, int64_t memory_limit)
{
	pgkm_cuda_config cfg {};
	cfg.deterministic = det;
	cfg.device_ordinal = -1;
	cfg.memory_limit = memory_limit;
	return cfg;
}

pgkm_cuda::DeviceLimits
device_limits()
{
	pgkm_cuda::DeviceLimits l;
	cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, 0);
	cudaDeviceGetAttribute(&l.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0);
	cudaDeviceGetAttribute(&l.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
	return l;
}

std::vector<float>
gpu_blobs(int64_t n, int d, int k, uint64_t seed, double spread, float offset, std::vector<double> *centres)
{
	std::vector<float> x = pgkm_test::blobs(n, d, k, seed, spread, 10.0, centres);
	if (offset != 0.0f)
		for (float &v : x)
			v += offset;
	return x;
}

pgkm_options
gpu_test_options(int k, const std::vector<double> *init, int device, int max_iter, int64_t mem_limit, uint64_t seed)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.max_iter = max_iter;
	o.tol = 0;
	o.init = init ? PGKM_INIT_GIVEN : PGKM_INIT_KMEANSPP;
	o.initial_centroids = init ? init->data() : nullptr;
	o.seed = seed;
	o.n_init = 1;
	o.device = device;
	o.gpu_plugin_path = plugin_path();
	o.gpu_memory_limit = mem_limit;
	o.deterministic = 1;
	return o;
}

PluginRun
plugin_run(const std::vector<float> &x, int64_t n, int d, int k, const pgkm_cuda_config &cfg,
		   const std::vector<double> *given, int iterations)
{
	PluginRun	out;
	void	   *h = nullptr;
	char		err[512] = "";
	out.centroids.assign((size_t) k * d, -1.0);
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	if (!h)
		return out;
	if (given)
	{
		out.centroids = *given;
		EXPECT_EQ(api()->set_centroids(h, out.centroids.data(), err, sizeof(err)), 0) << err;
	}
	else
		EXPECT_EQ(api()->init_kmeanspp(h, 42, out.centroids.data(), &out.k_found, err, sizeof(err)), 0) << err;
	out.init = out.centroids;
	out.streamed = debug_streamed(h) == 1;
	out.kpp_rows = debug_kpp_rows(h);
	std::vector<int64_t> sz(k);
	pgkm_cuda_iter it {};
	for (int i = 0; i < iterations; i++)
		EXPECT_EQ(api()->iterate(h, &it, out.centroids.data(), sz.data(), err, sizeof(err)), 0) << err;
	out.inertia = it.inertia;
	api()->destroy(h);
	return out;
}

void
check_one_iteration(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c0,
					const pgkm_cuda_config &cfg, const char *expect_path)
{
	SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d) + " k=" + std::to_string(k));
	void	   *h = nullptr;
	char		err[512];
	ASSERT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	EXPECT_EQ(debug_path(h), expect_path);
	ASSERT_EQ(api()->set_centroids(h, c0.data(), err, sizeof(err)), 0) << err;
	std::vector<double> c1((size_t) k * d, -777.0);
	std::vector<int64_t> sz(k, -1);
	pgkm_cuda_iter it;
	ASSERT_EQ(api()->iterate(h, &it, c1.data(), sz.data(), err, sizeof(err)), 0) << err;
	/* reference: fp64 nearest centroid, then the Lloyd update of tests/common */
	std::vector<int32_t> ref_labels(n);
	double		inertia = 0;
	for (int64_t i = 0; i < n; i++)
	{
		double		bd;
		ref_labels[i] = pgkm_test::nearest_fp64(x.data() + (size_t) i * d, c0.data(), k, d, &bd);
		inertia += bd;
	}
	std::vector<double> ref_c = c0;
	std::vector<int64_t> cnt(k);
	pgkm_test::ref_update(x.data(), n, d, ref_labels.data(), k, ref_c.data(), cnt.data());
	EXPECT_EQ(it.moved, n);
	EXPECT_NEAR(it.inertia, inertia, 1e-9 * inertia);
	for (int c = 0; c < k; c++)
	{
		EXPECT_EQ(sz[c], cnt[c]) << "cluster " << c;
		for (int j = 0; j < d; j++)
		{
			double		ref = ref_c[(size_t) c * d + j];	/* an empty cluster keeps its centroid */
			EXPECT_NEAR(c1[(size_t) c * d + j], ref, 1e-10 * (1 + std::fabs(ref)));
		}
	}
	/* assign(): every output written */
	std::vector<int32_t> lab(n, -12345);
	std::vector<double> d2(n, -1.0);
	std::vector<int64_t> s2(k, -1);
	double		in2 = -1;
	ASSERT_EQ(api()->assign(h, lab.data(), d2.data(), s2.data(), &in2, err, sizeof(err)), 0) << err;
	EXPECT_EQ(count_not_fp64_argmin(x, d, c1, lab), 0) << "labels of assign() that are not the fp64 argmin";
	double		tot = 0;
	for (int64_t i = 0; i < n; i++)
	{
		ASSERT_GE(lab[i], 0);
		ASSERT_LT(lab[i], k);
		ASSERT_GE(d2[i], 0.0);
		EXPECT_NEAR(d2[i], pgkm_test::sqdist_fp64(x.data() + (size_t) i * d, c1.data() + (size_t) lab[i] * d, d),
					1e-9 * (1 + d2[i]));
		tot += d2[i];
	}
	int64_t		ssum = 0;
	for (int c = 0; c < k; c++)
		ssum += s2[c];
	EXPECT_EQ(ssum, n);
	EXPECT_NEAR(in2, tot, 1e-9 * tot);
	api()->destroy(h);
}
