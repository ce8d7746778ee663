/*
 * gpu_engine_tests.cpp: the CUDA plugin against the CPU engine and an fp64
 * brute-force reference, on a machine with a GPU.
 *
 * The plugin is loaded with dlopen exactly as the engine loads it (path from
 * PGKM_CUDA_PLUGIN). Engine-level tests drive pgkm_run with device CPU and
 * device GPU from the same initial centroids; plugin-level tests call the ABI
 * directly for determinism, streaming, interrupts, out-of-memory and
 * "every output written" (outputs are filled with a sentinel first).
 */
#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

static const char *
plugin_path()
{
	const char *p = getenv("PGKM_CUDA_PLUGIN");
	return p ? p : PGKM_CUDA_PLUGIN_DEFAULT;
}

static const pgkm_cuda_api *
api()
{
	static const pgkm_cuda_api *a = [] {
		void	   *h = dlopen(plugin_path(), RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return (const pgkm_cuda_api *) nullptr;
		auto		get = (const pgkm_cuda_api * (*) (void)) dlsym(h, PGKM_CUDA_ENTRY_SYMBOL);
		return get ? get() : nullptr;
	}();
	return a;
}

/* A plugin config on the default device; deterministic sums unless det = 0. */
static pgkm_cuda_config
plugin_config(int det = 1, int64_t memory_limit = 0)
{
	pgkm_cuda_config cfg {};
	cfg.deterministic = det;
	cfg.device_ordinal = -1;
	cfg.memory_limit = memory_limit;
	return cfg;
}

/* Gaussian blobs around k random centres (returned in *centres if asked); seeded. */
static std::vector<float>
blobs(int64_t n, int d, int k, uint64_t seed, float spread = 1.0f, float offset = 0.0f,
	  std::vector<float> *centres = nullptr)
{
	std::mt19937_64 g(seed);
	std::uniform_real_distribution<float> u(-10.0f, 10.0f);
	std::normal_distribution<float> nd(0.0f, spread);
	std::vector<float> c((size_t) k * d), x((size_t) n * d);
	for (auto &v : c)
		v = u(g);
	for (int64_t i = 0; i < n; i++)
	{
		int			b = (int) (g() % k);
		for (int j = 0; j < d; j++)
			x[(size_t) i * d + j] = offset + c[(size_t) b * d + j] + nd(g);
	}
	if (centres)
		*centres = c;
	return x;
}

static std::vector<double>
first_rows_init(const std::vector<float> &x, int64_t n, int d, int k, uint64_t seed)
{
	std::mt19937_64 g(seed);
	std::vector<double> c((size_t) k * d);
	for (int i = 0; i < k; i++)
	{
		int64_t		r = (int64_t) (g() % n);
		for (int j = 0; j < d; j++)
			c[(size_t) i * d + j] = x[(size_t) r * d + j];
	}
	return c;
}

struct EngineResult
{
	std::vector<int32_t> labels;
	std::vector<double> centroids, distances;
	std::vector<int64_t> sizes;
	double		inertia = 0;
	int			iterations = 0;
	std::string device;
};

static EngineResult
run_engine(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &init,
		   int device, int max_iter, int64_t mem_limit = 0)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.max_iter = max_iter;
	o.tol = 0;
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.n_init = 1;
	o.device = device;
	o.gpu_plugin_path = plugin_path();
	o.gpu_memory_limit = mem_limit;
	o.deterministic = 1;
	char		err[512] = "";
	pgkm_run   *run = nullptr;
	EngineResult out;
	int			rc = pgkm_run_create(x.data(), n, d, &o, nullptr, nullptr, &run, err, sizeof(err));
	EXPECT_EQ(rc, PGKM_OK) << err;
	if (rc != PGKM_OK)
		return out;
	pgkm_progress pr;
	while ((rc = pgkm_run_step(run, &pr, err, sizeof(err))) == PGKM_OK)
		;
	EXPECT_EQ(rc, PGKM_DONE) << err;
	pgkm_result res;
	if (rc != PGKM_DONE || pgkm_run_result(run, &res) != PGKM_OK)
	{
		ADD_FAILURE() << "no result: " << err;	/* callers' size checks then fail, no crash */
		pgkm_run_free(run);
		return out;
	}
	out.labels.assign(res.labels, res.labels + n);
	out.centroids.assign(res.centroids, res.centroids + (size_t) res.k * d);
	out.distances.assign(res.distances, res.distances + n);
	out.sizes.assign(res.sizes, res.sizes + res.k);
	out.inertia = res.inertia;
	out.iterations = res.iterations;
	out.device = res.device;
	pgkm_run_free(run);
	return out;
}

static double
sq(const float *x, const double *c, int d)
{
	double		s = 0;
	for (int j = 0; j < d; j++)
		s += ((double) x[j] - c[j]) * ((double) x[j] - c[j]);
	return s;
}

/* GPU vs CPU engine from the same initial centroids, several paths. */
struct Shape
{
	int64_t		n;
	int			d, k;
	float		offset;
};
class GpuVsCpu : public ::testing::TestWithParam<Shape> {};

TEST_P(GpuVsCpu, SameLabelsAndInertia)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	Shape		s = GetParam();
	auto		x = blobs(s.n, s.d, s.k, 1000 + s.d * 7 + s.k, 1.5f, s.offset);
	auto		init = first_rows_init(x, s.n, s.d, s.k, 5);
	/*
	 * Labels are compared after one iteration from the same centroids: over
	 * many iterations a near-tie flipped early moves the centroids a little and
	 * the trajectories drift apart (measured on the H100 for the GEMM-form
	 * paths); the 15-iteration runs are compared by inertia below.
	 */
	EngineResult cpu = run_engine(x, s.n, s.d, s.k, init, PGKM_DEVICE_CPU, 1);
	EngineResult gpu = run_engine(x, s.n, s.d, s.k, init, PGKM_DEVICE_GPU, 1);
	ASSERT_EQ(gpu.device, "gpu");
	ASSERT_EQ(cpu.labels.size(), gpu.labels.size());
	ASSERT_EQ(cpu.centroids.size(), gpu.centroids.size());
	/* column means: scale of the GEMM form's rounding (d >= 16 paths on both engines) */
	std::vector<double> mu(s.d, 0.0);
	for (int64_t i = 0; i < s.n; i++)
		for (int j = 0; j < s.d; j++)
			mu[j] += x[(size_t) i * s.d + j] / (double) s.n;
	int64_t		diff = 0, not_near_tie = 0;
	for (int64_t i = 0; i < s.n; i++)
		if (cpu.labels[i] != gpu.labels[i])
		{
			diff++;
			/* near-tie: both centroids (GPU result) equally close to 1e-5 relative */
			const float *xi = x.data() + (size_t) i * s.d;
			double		a = sq(xi, gpu.centroids.data() + (size_t) cpu.labels[i] * s.d, s.d);
			double		b = sq(xi, gpu.centroids.data() + (size_t) gpu.labels[i] * s.d, s.d);
			double		scale = 0;
			if (s.d >= 16)		/* ||x - mu||^2 + ||c - mu||^2: fp32 GEMM-form error is ~1e-6 of it */
				for (int j = 0; j < s.d; j++)
				{
					double		cx = gpu.centroids[(size_t) gpu.labels[i] * s.d + j] - mu[j];
					scale += (xi[j] - mu[j]) * (xi[j] - mu[j]) + cx * cx;
				}
			if (std::fabs(a - b) > 1e-5 * std::max(a, b) + 1e-5 * scale + 1e-9)
				not_near_tie++;
		}
	EXPECT_EQ(not_near_tie, 0) << diff << " labels differ";
	EXPECT_LE(diff, s.n / 1000 + 1);
	EXPECT_NEAR(gpu.inertia, cpu.inertia, 1e-5 * cpu.inertia);
	double		cmax = 0;
	for (size_t i = 0; i < cpu.centroids.size(); i++)
		cmax = std::max(cmax, std::fabs(cpu.centroids[i] - gpu.centroids[i]) / (1.0 + std::fabs(cpu.centroids[i])));
	if (diff == 0)
	{
		EXPECT_LT(cmax, 1e-9);
	}
	double		dsum = 0;
	for (int64_t i = 0; i < s.n; i++)
		dsum += gpu.distances[i] * gpu.distances[i];
	EXPECT_NEAR(dsum, gpu.inertia, 1e-9 * gpu.inertia);
	/* 15 iterations: inertia within 1e-5 */
	EngineResult cpu15 = run_engine(x, s.n, s.d, s.k, init, PGKM_DEVICE_CPU, 15);
	EngineResult gpu15 = run_engine(x, s.n, s.d, s.k, init, PGKM_DEVICE_GPU, 15);
	EXPECT_NEAR(gpu15.inertia, cpu15.inertia, 1e-5 * cpu15.inertia);
	/* streamed through a tiny budget: same answer (GEMM path: the tile shrinks
	 * with the budget and cuBLAS may sum in another order, so near-ties only);
	 * the budget leaves ~4 MB of chunks beside the labels and centroid copies */
	EngineResult st = run_engine(x, s.n, s.d, s.k, init, PGKM_DEVICE_GPU, 15,
								 (int64_t) s.n * 4 + (4 << 20) + (int64_t) s.k * s.d * 32);	/* + centroid copies */
	if (s.d <= 32)
	{
		EXPECT_EQ(st.labels, gpu15.labels);
		EXPECT_EQ(st.centroids, gpu15.centroids);
		EXPECT_NEAR(st.inertia, gpu15.inertia, 1e-12 * gpu15.inertia);
	}
	else
		EXPECT_NEAR(st.inertia, gpu15.inertia, 1e-5 * gpu15.inertia);
}

INSTANTIATE_TEST_SUITE_P(Paths, GpuVsCpu, ::testing::Values(
	Shape {200000, 2, 8, 0.0f},		/* direct, private smem sums */
	Shape {100000, 3, 100, 0.0f},	/* direct, padded d */
	Shape {100000, 9, 1000, 0.0f},	/* direct, centroid tiles, global sums */
	Shape {120000, 16, 64, 500.0f},	/* dot form, offset data (centring) */
	Shape {50000, 32, 300, 0.0f},	/* dot form, k tiles */
	Shape {60000, 40, 20, 0.0f},	/* dot form, 32 < d <= 64 */
	Shape {30000, 200, 128, 1000.0f},	/* TILED (k <= 256), offset data */
	Shape {30000, 200, 300, 1000.0f},	/* GEMM (fp32) + sorted update, offset data */
	Shape {12000, 520, 600, 100.0f},	/* GEMM 3xTF32 (d, k >= 512), offset data */
	Shape {40000, 130, 30, 500.0f},	/* TILED, offset data, d % 4 != 0 */
	Shape {20000, 768, 8, 0.0f}));	/* TILED, large d */

/* One iteration of the plugin against an fp64 brute-force Lloyd step. */
/*
 * One iteration of the plugin from centroids c0 against an fp64 brute-force
 * Lloyd step: sizes exact, centroids to 1e-10, inertia to 1e-9; then assign()
 * with every output element checked (outputs pre-filled with sentinels).
 */
static void
check_one_iteration(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c0)
{
	SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d) + " k=" + std::to_string(k));
	pgkm_cuda_config cfg = plugin_config();
	void	   *h = nullptr;
	char		err[512];
	ASSERT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	ASSERT_EQ(api()->set_centroids(h, c0.data(), err, sizeof(err)), 0) << err;
	std::vector<double> c1((size_t) k * d, -777.0);
	std::vector<int64_t> sz(k, -1);
	pgkm_cuda_iter it;
	ASSERT_EQ(api()->iterate(h, &it, c1.data(), sz.data(), err, sizeof(err)), 0) << err;
	/* reference */
	std::vector<double> sums((size_t) k * d, 0.0);
	std::vector<int64_t> cnt(k, 0);
	double		inertia = 0;
	for (int64_t i = 0; i < n; i++)
	{
		const float *xi = x.data() + (size_t) i * d;
		int			b = 0;
		double		bd = INFINITY;
		for (int c = 0; c < k; c++)
		{
			double		v = sq(xi, c0.data() + (size_t) c * d, d);
			if (v < bd)
			{
				bd = v;
				b = c;
			}
		}
		inertia += bd;
		cnt[b]++;
		for (int j = 0; j < d; j++)
			sums[(size_t) b * d + j] += xi[j];
	}
	EXPECT_EQ(it.moved, n);
	EXPECT_NEAR(it.inertia, inertia, 1e-9 * inertia);
	double		shift = 0;
	int			empty = 0;
	for (int c = 0; c < k; c++)
	{
		EXPECT_EQ(sz[c], cnt[c]) << "cluster " << c;
		if (cnt[c] == 0)
			empty++;
		for (int j = 0; j < d; j++)
		{
			double		ref = cnt[c] ? sums[(size_t) c * d + j] / cnt[c] : c0[(size_t) c * d + j];
			EXPECT_NEAR(c1[(size_t) c * d + j], ref, 1e-10 * (1 + std::fabs(ref)));
			shift += (ref - c0[(size_t) c * d + j]) * (ref - c0[(size_t) c * d + j]);
		}
	}
	EXPECT_EQ(it.empty, empty);
	EXPECT_NEAR(it.shift, shift, 1e-8 * shift);
	/* assign(): every output written */
	std::vector<int32_t> lab(n, -12345);
	std::vector<double> d2(n, -1.0);
	std::vector<int64_t> s2(k, -1);
	double		in2 = -1;
	ASSERT_EQ(api()->assign(h, lab.data(), d2.data(), s2.data(), &in2, err, sizeof(err)), 0) << err;
	double		tot = 0;
	for (int64_t i = 0; i < n; i++)
	{
		ASSERT_GE(lab[i], 0);
		ASSERT_LT(lab[i], k);
		ASSERT_GE(d2[i], 0.0);
		EXPECT_NEAR(d2[i], sq(x.data() + (size_t) i * d, c1.data() + (size_t) lab[i] * d, d), 1e-9 * (1 + d2[i]));
		tot += d2[i];
	}
	int64_t		ssum = 0;
	for (int c = 0; c < k; c++)
		ssum += s2[c];
	EXPECT_EQ(ssum, n);
	EXPECT_NEAR(in2, tot, 1e-9 * tot);
	api()->destroy(h);
}

/*
 * Fused paths: dot (d = 24, rows re-read in the epilogue) and direct (d = 3,
 * rows and old labels kept in registers); run under compute-sanitizer too.
 */
TEST(GpuPlugin, OneIterationMatchesFp64Reference)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 50000;
	for (auto [d, k] : {std::pair {24, 40}, std::pair {3, 8}})
	{
		SCOPED_TRACE("d=" + std::to_string(d) + " k=" + std::to_string(k));
		auto		x = blobs(n, d, k, 77 + d);
		check_one_iteration(x, n, d, k, first_rows_init(x, n, d, k, 9));
	}
}

/*
 * The TILED path (32 <= d <= 1024, k <= 256): padded k (k < 8, 8 < k < 16),
 * d not a multiple of 4 (scalar loads) or of 32 (partial chunks), private
 * sums and global flushes (768 x 64 does not fit shared memory), several
 * 1024-row sort tiles and a partial one, k > 64 (the assign kernel's loop
 * over 64-centroid chunks), and k = 300 forced onto the path (default <= 256).
 * Starting centroids are the blob centres moved by 0.5, so no row is near a
 * tie and sizes are exact.
 */
TEST(GpuPlugin, OneIterationTiledMatchesFp64Reference)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; bool force; };
	for (P s : {P {5000, 65, 5, false}, P {7001, 130, 12, false}, P {6000, 200, 64, false},
				P {3000, 768, 64, false}, P {5000, 33, 150, false}, P {4000, 72, 300, true}})
	{
		std::vector<float> centres;
		auto		x = blobs(s.n, s.d, s.k, 500 + s.d, 1.0f, 3.0f, &centres);
		std::vector<double> c0((size_t) s.k * s.d);
		for (size_t i = 0; i < c0.size(); i++)
			c0[i] = 3.0 + centres[i] + 0.5;
		if (s.force)
			setenv("PGKM_CUDA_PATH", "tiled", 1);
		check_one_iteration(x, s.n, s.d, s.k, c0);
		unsetenv("PGKM_CUDA_PATH");
	}
}

/* The plugin's assignment path for a run (debug export, not part of the ABI). */
static std::string
debug_path(void *h)
{
	static auto f = (const char *(*) (void *)) dlsym(dlopen(plugin_path(), RTLD_NOW | RTLD_NOLOAD), "pgkm_cuda_debug_path");
	return f ? f(h) : "?";
}

/* Nearest centroid of each row in fp64 (lowest index on ties), and the
 * relative gap to the second nearest. */
static std::vector<int32_t>
reference_labels(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c,
				 std::vector<double> *gap = nullptr)
{
	std::vector<int32_t> lab(n);
	if (gap)
		gap->assign(n, 0.0);
	for (int64_t i = 0; i < n; i++)
	{
		double		b1 = INFINITY, b2 = INFINITY;
		int			bi = 0;
		for (int j = 0; j < k; j++)
		{
			double		v = sq(x.data() + (size_t) i * d, c.data() + (size_t) j * d, d);
			if (v < b1)
			{
				b2 = b1;
				b1 = v;
				bi = j;
			}
			else if (v < b2)
				b2 = v;
		}
		lab[i] = bi;
		if (gap)
			(*gap)[i] = (b2 - b1) / (b1 + 1e-300);
	}
	return lab;
}

/* assign() against c0 on the GPU: labels, and the path that made them. */
static std::vector<int32_t>
gpu_labels(const std::vector<float> &x, int64_t n, int d, int k, const std::vector<double> &c0, std::string *path)
{
	pgkm_cuda_config cfg = plugin_config();
	void	   *h = nullptr;
	char		err[512];
	std::vector<int32_t> lab(n, -1);
	std::vector<double> d2(n);
	std::vector<int64_t> sz(k);
	double		inertia;
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	if (!h)
		return lab;
	EXPECT_EQ(api()->set_centroids(h, c0.data(), err, sizeof(err)), 0) << err;
	EXPECT_EQ(api()->assign(h, lab.data(), d2.data(), sz.data(), &inertia, err, sizeof(err)), 0) << err;
	*path = debug_path(h);
	api()->destroy(h);
	return lab;
}

/*
 * The GEMM path's 3xTF32 products (x_hi c_hi + x_hi c_lo + x_lo c_hi on the
 * tensor cores) label like fp32 arithmetic. Uniform data with k random rows
 * as centroids has many rows whose two nearest centroids are closer than
 * TF32's own error; rows within 1e-5 (relative, fp64) of a tie are dropped,
 * since there fp32 rounding decides. Negative control: one TF32 product
 * (PGKM_CUDA_TF32=1) must get some labels wrong, so the data really tests
 * the split; 3xTF32 (forced: by default only d, k >= 512 use it) must get
 * none wrong, and one iteration must match the fp64 reference. Shapes:
 * k = 1024, k = 300 at d = 300, and d > 1024 (the argmin kernel adds the
 * rows itself).
 */
TEST(GpuPlugin, ThreeTf32LabelsLikeFp64)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; bool force; };
	for (P s : {P {20000, 128, 1024, false}, P {20000, 300, 300, false}, P {20000, 1100, 120, true}})
	{
		SCOPED_TRACE("d=" + std::to_string(s.d) + " k=" + std::to_string(s.k));
		std::mt19937_64 g(900 + s.d);
		std::uniform_real_distribution<float> u(0.0f, 1.0f);
		std::vector<float> x0((size_t) s.n * s.d);
		for (auto &v : x0)
			v = 3.0f + u(g);
		auto		c0 = first_rows_init(x0, s.n, s.d, s.k, 5);
		std::vector<double> gap;
		reference_labels(x0, s.n, s.d, s.k, c0, &gap);
		std::vector<float> x;
		int64_t		tight = 0;
		for (int64_t i = 0; i < s.n; i++)
		{
			if (gap[i] < 1e-5)
				continue;
			tight += gap[i] < 1e-3;
			x.insert(x.end(), x0.begin() + i * s.d, x0.begin() + (i + 1) * s.d);
		}
		const int64_t n = (int64_t) x.size() / s.d;
		auto		ref = reference_labels(x, n, s.d, s.k, c0);
		if (s.force)
			setenv("PGKM_CUDA_PATH", "gemm", 1);
		std::string path1, path3;
		setenv("PGKM_CUDA_TF32", "1", 1);
		auto		one = gpu_labels(x, n, s.d, s.k, c0, &path1);
		setenv("PGKM_CUDA_TF32", "3", 1);
		auto		lab = gpu_labels(x, n, s.d, s.k, c0, &path3);
		int64_t		wrong1 = 0, wrong3 = 0;
		for (int64_t i = 0; i < n; i++)
		{
			wrong1 += one[i] != ref[i];
			wrong3 += lab[i] != ref[i];
		}
		EXPECT_EQ(path1, "gemm-tf32x1");
		EXPECT_EQ(path3, "gemm-3xtf32");
		EXPECT_GT(wrong1, 0) << "one TF32 product got every label right: the data does not test the split";
		EXPECT_EQ(wrong3, 0) << "of " << n << " rows";
		printf("    d=%d k=%d: %lld rows, %lld within 1e-3 of a tie; wrong labels: one TF32 product %lld, 3xTF32 %lld\n",
			   s.d, s.k, (long long) n, (long long) tight, (long long) wrong1, (long long) wrong3);
		check_one_iteration(x, n, s.d, s.k, c0);
		unsetenv("PGKM_CUDA_TF32");
		unsetenv("PGKM_CUDA_PATH");
	}
}

/* Runs init + 8 iterations through the ABI; returns centroids and inertia. */
static std::vector<double>
plugin_run(const std::vector<float> &x, int64_t n, int d, int k, int det, int64_t limit, double *inertia,
		   int32_t *found = nullptr, bool given = false)
{
	pgkm_cuda_config cfg = plugin_config(det, limit);
	void	   *h = nullptr;
	char		err[512];
	std::vector<double> c((size_t) k * d, -1.0);
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	if (!h)
		return c;
	int32_t		kf = -1;
	if (given)
	{
		c = first_rows_init(x, n, d, k, 3);
		EXPECT_EQ(api()->set_centroids(h, c.data(), err, sizeof(err)), 0) << err;
	}
	else
		EXPECT_EQ(api()->init_kmeanspp(h, 42, c.data(), &kf, err, sizeof(err)), 0) << err;
	if (found)
		*found = kf;
	std::vector<int64_t> sz(k);
	pgkm_cuda_iter it {};
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(api()->iterate(h, &it, c.data(), sz.data(), err, sizeof(err)), 0) << err;
	*inertia = it.inertia;
	api()->destroy(h);
	return c;
}

TEST(GpuPlugin, DeterministicModeIsBitIdentical)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 300000;
	for (int d : {2, 16, 100})
	{
		const int	k = 50;
		auto		x = blobs(n, d, k, 3 + d);
		double		i1, i2;
		auto		a = plugin_run(x, n, d, k, 1, 0, &i1);
		auto		b = plugin_run(x, n, d, k, 1, 0, &i2);
		EXPECT_EQ(a, b) << "d=" << d;
		EXPECT_EQ(i1, i2) << "d=" << d;
		/* fast (atomic fp64) mode: same clustering up to rounding */
		double		i3;
		auto		f = plugin_run(x, n, d, k, 0, 0, &i3);
		EXPECT_NEAR(i3, i1, 1e-6 * i1) << "d=" << d;
	}
}

/*
 * Private (shared-memory, warp pre-summed) sums against the v1 path of one
 * global atomic per element (PGKM_CUDA_SUMS=global): fixed-point sums are
 * exact integers, so deterministic mode must agree bit for bit; fast mode up
 * to fp64 rounding. Shapes: fused direct (rows in registers and re-read),
 * dot, sorted rows (whole warps on one label: 5 shuffle rounds), odd n (a
 * partial warp), a k too large to privatise, and the GEMM path.
 */
TEST(GpuPlugin, PrivateSumsMatchGlobalAtomics)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; bool sorted; };
	for (P s : {P {300001, 2, 8, false}, P {200000, 2, 8, true}, P {100003, 12, 64, false},
				P {150000, 24, 40, true}, P {50000, 9, 1000, false}, P {60000, 100, 16, false}})
	{
		auto		x = blobs(s.n, s.d, s.k, 17 + s.d);
		if (s.sorted)			/* long runs of one label: rows sorted by the first column */
		{
			std::vector<int64_t> idx(s.n);
			for (int64_t i = 0; i < s.n; i++)
				idx[i] = i;
			std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
				return x[(size_t) a * s.d] < x[(size_t) b * s.d];
			});
			std::vector<float> y(x.size());
			for (int64_t i = 0; i < s.n; i++)
				std::copy_n(x.begin() + idx[i] * s.d, s.d, y.begin() + i * s.d);
			x.swap(y);
		}
		double		ip, ig, fp, fg;
		auto		priv = plugin_run(x, s.n, s.d, s.k, 1, 0, &ip, nullptr, true);
		auto		fpriv = plugin_run(x, s.n, s.d, s.k, 0, 0, &fp, nullptr, true);
		setenv("PGKM_CUDA_SUMS", "global", 1);
		auto		glob = plugin_run(x, s.n, s.d, s.k, 1, 0, &ig, nullptr, true);
		auto		fglob = plugin_run(x, s.n, s.d, s.k, 0, 0, &fg, nullptr, true);
		unsetenv("PGKM_CUDA_SUMS");
		EXPECT_EQ(priv, glob) << "n=" << s.n << " d=" << s.d << " k=" << s.k;
		EXPECT_EQ(ip, ig) << "n=" << s.n << " d=" << s.d << " k=" << s.k;
		EXPECT_NEAR(fp, fg, 1e-9 * fg) << "n=" << s.n << " d=" << s.d << " k=" << s.k;
		EXPECT_NEAR(fp, ip, 1e-9 * ip) << "n=" << s.n << " d=" << s.d << " k=" << s.k;
		double		cmax = 0;
		for (size_t i = 0; i < priv.size(); i++)
			cmax = std::max(cmax, std::fabs(fpriv[i] - fglob[i]) / (1.0 + std::fabs(fglob[i])));
		EXPECT_LT(cmax, 1e-9) << "n=" << s.n << " d=" << s.d << " k=" << s.k;
	}
}

/*
 * Streamed chunks give the resident answer: bit-identical centroids where
 * labels do not depend on chunking (fused paths; the 3xTF32 GEMM, whose tiles
 * follow the chunks but whose products do not depend on them), inertia to
 * 1e-6 elsewhere.
 */
TEST(GpuPlugin, StreamingMatchesResident)
{
	ASSERT_NE(api(), nullptr);
	struct P { int64_t n; int d, k; };
	for (P s : {P {400000, 5, 30}, P {400000, 24, 30}, P {400000, 64, 30}, P {100000, 200, 300}})
	{
		const int64_t n = s.n;
		const int	d = s.d, k = s.k;
		auto		x = blobs(n, d, k, 11 + d);
		double		i1, i2;
		/* same initial centroids (k-means++ samples fewer rows under a tiny budget) */
		auto		a = plugin_run(x, n, d, k, 1, 0, &i1, nullptr, true);
		auto		b = plugin_run(x, n, d, k, 1, 6 << 20, &i2, nullptr, true);	/* 6 MB: many chunks */
		if (d <= 32 || k > 256)
		{
			EXPECT_EQ(a, b) << "d=" << d;
			EXPECT_NEAR(i1, i2, 1e-12 * i1) << "d=" << d;
		}
		else
			EXPECT_NEAR(i1, i2, 1e-6 * i1) << "d=" << d;
	}
}

TEST(GpuPlugin, KmeansppFindsFewerDistinctPoints)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 10000;
	const int	d = 3, k = 8;
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
			x[(size_t) i * d + j] = (float) ((i % 5) * 10 + j);
	pgkm_cuda_config cfg = plugin_config();
	void	   *h = nullptr;
	char		err[512];
	ASSERT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	std::vector<double> c((size_t) k * d, -1.0);
	int32_t		kf = -1;
	ASSERT_EQ(api()->init_kmeanspp(h, 7, c.data(), &kf, err, sizeof(err)), 0) << err;
	EXPECT_EQ(kf, 5);
	std::vector<int> seen(5, 0);
	for (int c0 = 0; c0 < kf; c0++)
	{
		int			v = (int) c[(size_t) c0 * d] / 10;
		ASSERT_GE(v, 0);
		ASSERT_LT(v, 5);
		seen[v]++;
		for (int j = 0; j < d; j++)
			EXPECT_EQ(c[(size_t) c0 * d + j], v * 10 + j);
	}
	for (int v = 0; v < 5; v++)
		EXPECT_EQ(seen[v], 1);
	for (double v : c)
		EXPECT_GE(v, 0.0);		/* all k rows written */
	api()->destroy(h);
}

TEST(GpuPlugin, KmeansppSeededAndSpread)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 500000;	/* > sample size: sampled variant */
	const int	d = 8, k = 16;
	auto		x = blobs(n, d, k, 5, 0.2f);
	int32_t		f1, f2;
	double		i1, i2;
	auto		a = plugin_run(x, n, d, k, 1, 0, &i1, &f1);
	auto		b = plugin_run(x, n, d, k, 1, 0, &i2, &f2);
	EXPECT_EQ(f1, k);
	EXPECT_EQ(a, b);
	/* well-separated blobs: k-means++ + 8 iterations reaches ~n*d*spread^2 */
	EXPECT_LT(i1, 1.5 * n * d * 0.04);
}

static int interrupt_after(void *ctx)
{
	int		   *left = (int *) ctx;
	return --(*left) < 0;
}

TEST(GpuPlugin, InterruptStopsPromptlyAndFreesMemory)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 2000000;
	const int	d = 8, k = 64;
	auto		x = blobs(n, d, k, 1);
	size_t		free0, tot;
	cudaFree(0);
	cudaMemGetInfo(&free0, &tot);
	int			left = 2;
	pgkm_cuda_config cfg = plugin_config(1, 24 << 20);	/* streamed: several chunks per pass */
	cfg.interrupt = interrupt_after;
	cfg.interrupt_ctx = &left;
	void	   *h = nullptr;
	char		err[512] = "";
	int			rc = api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err));
	if (rc == 0)
	{
		std::vector<double> c = first_rows_init(x, n, d, k, 1);
		ASSERT_EQ(api()->set_centroids(h, c.data(), err, sizeof(err)), 0);
		std::vector<int64_t> sz(k);
		pgkm_cuda_iter it;
		rc = api()->iterate(h, &it, c.data(), sz.data(), err, sizeof(err));
	}
	EXPECT_EQ(rc, PGKM_INTERRUPTED) << err;
	api()->destroy(h);
	size_t		free1;
	cudaMemGetInfo(&free1, &tot);
	EXPECT_LE((long long) free0 - (long long) free1, 4LL << 20) << "GPU memory not returned";
}

TEST(GpuPlugin, OutOfMemoryIsAnError)
{
	ASSERT_NE(api(), nullptr);
	const int64_t n = 100000;
	const int	d = 64, k = 4096;
	auto		x = blobs(n, d, 16, 1);
	pgkm_cuda_config cfg = plugin_config(1, 1 << 20);	/* less than the centroid buffers */
	void	   *h = nullptr;
	char		err[512] = "";
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), PGKM_ERR_NOMEM);
	EXPECT_EQ(h, nullptr);
	EXPECT_NE(std::string(err).find("budget"), std::string::npos) << err;
	/* and the device still works afterwards */
	cfg.memory_limit = 0;
	ASSERT_EQ(api()->create(x.data(), n, d, 16, &cfg, &h, err, sizeof(err)), 0) << err;
	api()->destroy(h);
}

TEST(GpuPlugin, ProbeDescribesDevice)
{
	ASSERT_NE(api(), nullptr);
	char		info[256] = "";
	ASSERT_EQ(api()->probe(info, sizeof(info)), 0) << info;
	EXPECT_NE(std::string(info).find("GiB"), std::string::npos) << info;
}
