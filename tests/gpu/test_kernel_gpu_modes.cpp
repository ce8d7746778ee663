/*
 * test_kernel_gpu_modes.cpp: the GPU kernel device's modes against each
 * other (stored, streamed, half precision), what kernel k-means is for
 * (rings and half-moons recovered by the RBF kernel, as on the CPU), and
 * its refusals: budgets (with the numbers), overflow, float16's range,
 * interrupts, switches out of range.
 */
#include "blobs.h"
#include "errors.h"
#include "gpu_test_util.h"
#include "kernel_gpu_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using pgkm::GpuKernelOptions;
using pgkm::KernelParams;

/*
 * Streamed tiles sum the same K in another order (and 3xTF32 products), so
 * they agree with the stored run up to near-ties; half-precision K changes
 * values by 2^-9 (bf16) or 2^-12 (fp16) relative, measured here.
 */
TEST(KernelGpuModes, StoredStreamedAndHalfPrecisionAgree)
{
	const int32_t d = 8, k = 12;
	KData		data(pgkm_test::blobs(4000, d, 10, 41, 1.5, 5.0), d);
	for (KernelParams p : {kparams(PGKM_KERNEL_RBF, 0.05), kparams(PGKM_KERNEL_POLYNOMIAL, 1.0 / d, 1, 2)})
	{
		std::vector<int32_t> init = random_labels(data.n, k, 3);
		auto		stored = gpu_kdev(data, p, k, kopts(PGKM_CUDA_KMATRIX_STORED));
		PassOut		ref = run_pass(*stored, init, k);
		LoopOut		ref_loop = run_loop(*stored, init, k, 40);
		struct V { const char *name; GpuKernelOptions o; bool exact; };
		for (const V &v : {V {"streamed fp32", kopts(PGKM_CUDA_KMATRIX_STREAMED, 0, PGKM_CUDA_PRODUCT_FP32), true},
						   V {"streamed 3xtf32", kopts(PGKM_CUDA_KMATRIX_STREAMED, 0, PGKM_CUDA_PRODUCT_3XTF32), true},
						   V {"stored 3xtf32", kopts(PGKM_CUDA_KMATRIX_STORED, 0, PGKM_CUDA_PRODUCT_3XTF32), true},
						   V {"stored bf16", kopts(PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KPREC_BF16), false},
						   V {"stored fp16", kopts(PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KPREC_FP16), false}})
		{
			SCOPED_TRACE(v.name);
			auto		dev = gpu_kdev(data, p, k, v.o);
			PassOut		o = run_pass(*dev, init, k);
			int64_t		differ = 0;
			for (int64_t i = 0; i < data.n; i++)
				differ += o.labels[i] != ref.labels[i];
			LoopOut		loop = run_loop(*dev, init, k, 40);
			int64_t		final_differ = 0;
			for (int64_t i = 0; i < data.n; i++)
				final_differ += loop.labels[i] != ref_loop.labels[i];
			const double rel = std::fabs(loop.objective - ref_loop.objective) / ref_loop.objective;
			RecordProperty(std::string(v.name) + (p.kind == PGKM_KERNEL_RBF ? " rbf" : " poly") + " first-pass labels "
						   "differing", std::to_string(differ));
			printf("[ measured ] %s %s: first pass %lld of %lld labels differ from stored fp32; after the loop "
				   "%lld, objective %.3g relative\n", v.name, p.kind == PGKM_KERNEL_RBF ? "rbf" : "poly",
				   (long long) differ, (long long) data.n, (long long) final_differ, rel);
			if (v.exact)
			{
				EXPECT_EQ(not_near_ties(data, p, init, k, ref.labels, o.labels, 1e-5), 0);
				EXPECT_LT(rel, 1e-5);
			}
			else
			{
				EXPECT_LE(differ, data.n / 100);
				EXPECT_LT(rel, 1e-2);
			}
		}
	}
}

/*
 * Rows far from the origin: every K value is a large common part plus small
 * differences. bfloat16 keeps 8 bits of K - mu (mu a sample mean of K), not
 * of K, so the first pass still labels like fp32 but for near-ties.
 */
TEST(KernelGpuModes, HalfPrecisionKeepsTheDifferencesBetweenValues)
{
	const int32_t d = 8, k = 10;
	auto		x = pgkm_test::blobs(3000, d, 10, 43, 0.5, 3.0);
	for (float &v : x)
		v += 20.0f;
	KData		data(x, d);
	const KernelParams p = kparams(PGKM_KERNEL_POLYNOMIAL, 1.0 / (d * 400.0), 1, 2);
	std::vector<int32_t> init = random_labels(data.n, k, 12);
	auto		f32 = gpu_kdev(data, p, k, kopts(PGKM_CUDA_KMATRIX_STORED));
	LoopOut		ref = run_loop(*f32, init, k, 40);
	for (int prec : {PGKM_CUDA_KPREC_BF16, PGKM_CUDA_KPREC_FP16})
	{
		auto		h = gpu_kdev(data, p, k, kopts(PGKM_CUDA_KMATRIX_STORED, prec));
		LoopOut		o = run_loop(*h, init, k, 40);
		int64_t		differ = 0;
		for (int64_t i = 0; i < data.n; i++)
			differ += o.labels[i] != ref.labels[i];
		const double rel = std::fabs(o.objective - ref.objective) / ref.objective;
		printf("[ measured ] offset rows, %s: %lld of %lld final labels differ from fp32, objective %.3g relative\n",
			   prec == PGKM_CUDA_KPREC_BF16 ? "bf16" : "fp16", (long long) differ, (long long) data.n, rel);
		EXPECT_LE(differ, data.n / 100);
		EXPECT_LT(rel, 1e-3);
		/* rows() gives K, mu added back */
		std::vector<int64_t> idx = {0, 1};
		std::vector<float> a(2 * data.n), b(2 * data.n);
		f32->rows(idx.data(), 2, a.data());
		h->rows(idx.data(), 2, b.data());
		for (size_t e = 0; e < a.size(); e++)
			ASSERT_NEAR(b[e], a[e], 0x1p-7 * std::fabs(a[e])) << e;
	}
}

/* The best of random starting partitions (lowest objective) on the GPU, and the CPU from that start. */
static void
expect_recovered(const std::vector<float> &x, const std::vector<int32_t> &truth, double gamma, int tries,
				 const GpuKernelOptions &o, const char *what)
{
	KData		data(x, 2);
	const KernelParams p = kparams(PGKM_KERNEL_RBF, gamma);
	auto		gpu = gpu_kdev(data, p, 2, o);
	auto		cpu = cpu_kdev(data, p, 2);
	LoopOut		best;
	std::vector<int32_t> best_init;
	for (int t = 0; t < tries; t++)
	{
		std::vector<int32_t> init = random_labels(data.n, 2, 1000 + t);
		LoopOut		r = run_loop(*gpu, init, 2, 100);
		if (t == 0 || r.objective < best.objective)
		{
			best = r;
			best_init = init;
		}
	}
	const double ari = pgkm_test::adjusted_rand_index(best.labels, truth);
	printf("[ measured ] %s, RBF gamma %g, best of %d random starts: ARI %.4f\n", what, gamma, tries, ari);
	EXPECT_GE(ari, 0.99) << what;
	if (o.precision != PGKM_CUDA_KPREC_FP32)
		return;
	LoopOut		c = run_loop(*cpu, best_init, 2, 100);
	EXPECT_EQ(c.labels, best.labels) << "the CPU device from the same start";
}

TEST(KernelGpuModes, RbfRecoversRingsAndMoons)
{
	std::vector<int32_t> truth;
	auto		rings = pgkm_test::rings(500, 0.3, 0.05, 17, &truth);
	const GpuKernelOptions stored = kopts(PGKM_CUDA_KMATRIX_STORED), streamed = kopts(PGKM_CUDA_KMATRIX_STREAMED),
				bf16 = kopts(PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KPREC_BF16),
				fp16 = kopts(PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KPREC_FP16);
	expect_recovered(rings, truth, 5.0, 10, stored, "rings, stored");
	expect_recovered(rings, truth, 5.0, 10, streamed, "rings, streamed");
	expect_recovered(rings, truth, 5.0, 10, bf16, "rings, bfloat16");
	expect_recovered(rings, truth, 5.0, 10, fp16, "rings, float16");
	/* the moons' minimum at gamma 6 has a narrow basin: about 5 % of random starts reach it */
	auto		m = moons(500, 0.05, 0, &truth);
	expect_recovered(m, truth, 6.0, 300, stored, "moons, stored");
	expect_recovered(m, truth, 6.0, 300, bf16, "moons, bfloat16");
	expect_recovered(m, truth, 6.0, 300, fp16, "moons, float16");
}

/* A budget no mode fits is refused before allocating, with the numbers and a hint. */
TEST(KernelGpuModes, BudgetsAreRefusedWithTheNumbers)
{
	const int64_t n = 20000;
	const int32_t d = 16, k = 10;
	const KernelParams p = kparams(PGKM_KERNEL_RBF, 0.1);
	const pgkm::CudaPlugin *pl = kernel_plugin();
	ASSERT_NE(pl, nullptr);
	pgkm_cuda_kernel_plan plan;
	int			status = 0;
	std::string why;
	ASSERT_TRUE(pgkm::gpu_kernel_plan(pl, n, d, k, p, GpuKernelOptions(), &plan, &status, &why)) << why;
	EXPECT_EQ(plan.matrix, PGKM_CUDA_KMATRIX_STORED);
	EXPECT_GE(plan.device_bytes, n * n * 4) << "the plan counts K";
	const int64_t stored = plan.device_bytes;

	/* between the streamed and the stored plan: AUTO streams, STORED is refused */
	GpuKernelOptions o;
	o.memory_limit = stored / 2;
	ASSERT_TRUE(pgkm::gpu_kernel_plan(pl, n, d, k, p, o, &plan, &status, &why)) << why;
	EXPECT_EQ(plan.matrix, PGKM_CUDA_KMATRIX_STREAMED);
	EXPECT_LE(plan.device_bytes, o.memory_limit);
	EXPECT_EQ(plan.stored_bytes, stored);
	o.matrix = PGKM_CUDA_KMATRIX_STORED;
	EXPECT_FALSE(pgkm::gpu_kernel_plan(pl, n, d, k, p, o, &plan, &status, &why));
	EXPECT_EQ(status, PGKM_ERR_NOMEM);
	EXPECT_NE(why.find("recompute K instead"), std::string::npos) << why;
	/* half precision halves K: stored again */
	o.precision = PGKM_CUDA_KPREC_BF16;
	o.memory_limit = stored * 6 / 10;
	EXPECT_TRUE(pgkm::gpu_kernel_plan(pl, n, d, k, p, o, &plan, &status, &why)) << why;

	/* nothing fits: refused with both sizes and the budget */
	o = GpuKernelOptions();
	o.memory_limit = 1 << 20;
	EXPECT_FALSE(pgkm::gpu_kernel_plan(pl, n, d, k, p, o, &plan, &status, &why));
	EXPECT_EQ(status, PGKM_ERR_NOMEM);
	EXPECT_NE(why.find("GB with K recomputed in tiles"), std::string::npos) << why;
	EXPECT_NE(why.find("raise the GPU memory limit"), std::string::npos) << why;
	std::vector<float> x((size_t) n * d, 0.5f);
	std::vector<double> mean(d, 0.5);
	try
	{
		pgkm::make_gpu_kernel_device(pl, x.data(), n, d, mean.data(), p, o, k, nullptr, nullptr);
		ADD_FAILURE() << "no error";
	}
	catch (const pgkm::EngineError &e)
	{
		EXPECT_EQ(e.status, PGKM_ERR_NOMEM);
	}
}

static void
expect_build_error(KData &data, const KernelParams &p, const GpuKernelOptions &o, const char *text)
{
	try
	{
		gpu_kdev(data, p, 2, o);
		ADD_FAILURE() << "no error";
	}
	catch (const pgkm::EngineError &e)
	{
		EXPECT_EQ(e.status, PGKM_ERR_INVALID);
		EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
	}
}

TEST(KernelGpuModes, OverflowAndFloat16RangeAreRefused)
{
	KData		data(pgkm_test::blobs(600, 4, 3, 5, 1.0, 30.0), 4);
	/* (|x|^2 ~ 3600)^12: beyond float32 */
	expect_build_error(data, kparams(PGKM_KERNEL_POLYNOMIAL, 1, 1, 12), kopts(PGKM_CUDA_KMATRIX_STORED),
					   "overflows float32");
	expect_build_error(data, kparams(PGKM_KERNEL_POLYNOMIAL, 1, 1, 12), kopts(PGKM_CUDA_KMATRIX_STREAMED),
					   "overflows float32");
	/* (~3600)^2 ~ 1e7: fine in float32 and bfloat16, beyond float16 */
	const KernelParams sq = kparams(PGKM_KERNEL_POLYNOMIAL, 1, 1, 2);
	expect_build_error(data, sq, kopts(PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KPREC_FP16), "float16's range");
	EXPECT_NO_THROW(gpu_kdev(data, sq, 2, kopts(PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KPREC_BF16)));
}

namespace
{
struct Countdown
{
	int			left;
};
int
countdown(void *ctx)
{
	Countdown  *c = static_cast<Countdown *>(ctx);
	return --c->left < 0;
}
}							/* namespace */

TEST(KernelGpuModes, InterruptStopsTheBuildAndThePass)
{
	KData		data(pgkm_test::blobs(20000, 8, 5, 9, 1.0, 4.0), 8);
	const KernelParams p = kparams(PGKM_KERNEL_RBF, 0.1);
	/* stored: three panels of 8192 rows, polled after each */
	Countdown	c {1};
	GpuKernelOptions o = kopts(PGKM_CUDA_KMATRIX_STORED);
	EXPECT_THROW(gpu_kdev(data, p, 4, o, countdown, &c), pgkm::Interrupted);
	/* streamed: twenty column blocks in a pass, polled after each */
	c.left = 3;
	auto		dev = gpu_kdev(data, p, 4, kopts(PGKM_CUDA_KMATRIX_STREAMED), countdown, &c);
	std::vector<int32_t> init = random_labels(data.n, 4, 1);
	EXPECT_THROW(run_pass(*dev, init, 4), pgkm::Interrupted);
}

TEST(KernelGpuModes, SwitchesOutOfRangeAreRefused)
{
	ASSERT_NE(api(), nullptr);
	EXPECT_EQ(api()->abi_version, 6u) << "an ABI change is deliberate: update this with PGKM_CUDA_ABI_VERSION";
	pgkm_cuda_kernel_config c {};
	c.kernel = PGKM_KERNEL_RBF;
	c.gamma = 1;
	c.device_ordinal = -1;
	pgkm_cuda_kernel_plan plan;
	char		err[256];
	EXPECT_EQ(api()->kernel_plan(1000, 4, 3, &c, &plan, err, sizeof(err)), 0) << err;
	for (auto bad : {&pgkm_cuda_kernel_config::matrix, &pgkm_cuda_kernel_config::precision,
					 &pgkm_cuda_kernel_config::build, &pgkm_cuda_kernel_config::product})
	{
		pgkm_cuda_kernel_config b = c;
		b.*bad = 9;
		EXPECT_EQ(api()->kernel_plan(1000, 4, 3, &b, &plan, err, sizeof(err)), PGKM_ERR_INVALID);
	}
	pgkm_cuda_kernel_config b = c;
	b.gamma = 0;
	EXPECT_EQ(api()->kernel_plan(1000, 4, 3, &b, &plan, err, sizeof(err)), PGKM_ERR_INVALID);
	b = c;
	b.chunk_rows = 3;
	EXPECT_EQ(api()->kernel_plan(1000, 4, 3, &b, &plan, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_EQ(api()->kernel_plan(1000, 4, 3, nullptr, &plan, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_EQ(api()->kernel_plan(1000, 4, 1001, &c, &plan, err, sizeof(err)), PGKM_ERR_INVALID);
}
