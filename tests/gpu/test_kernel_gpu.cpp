/*
 * test_kernel_gpu.cpp: the GPU KernelDevice against the CPU KernelDevice
 * from the same partition, for every kernel and every way the GPU holds K
 * (stored by SYRK or GEMM, fp32 or 3xTF32 products; streamed tiles): the
 * diagonal, one pass (labels up to near-ties within float precision, D,
 * centroid norms, cross sums, sum(K)), the whole loop from the same initial
 * labels; rows; run-to-run identity; chunking; k = 1; empty clusters;
 * duplicate rows.
 */
#include "blobs.h"
#include "gpu_test_util.h"
#include "kernel_gpu_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using pgkm::GpuKernelOptions;
using pgkm::KernelParams;

namespace
{

struct Mode
{
	const char *name;
	int			matrix, product, build;
};

struct Case
{
	int			kind;
	Mode		mode;
};

std::string
case_name(const ::testing::TestParamInfo<Case> &info)
{
	const char *k[] = {"linear", "polynomial", "rbf", "sigmoid"};
	return std::string(k[info.param.kind]) + "_" + info.param.mode.name;
}

KernelParams
params_for(int kind, int d)
{
	switch (kind)
	{
		case PGKM_KERNEL_POLYNOMIAL:
			return kparams(kind, 1.0 / d, 1, 3);
		case PGKM_KERNEL_SIGMOID:
			return kparams(kind, 0.01, 0.5);
		case PGKM_KERNEL_RBF:
			return kparams(kind, 0.1);
		default:
			return kparams(kind, 1);
	}
}

double
kernel_scale(const pgkm::KernelDevice &dev, int64_t n)
{
	double		s = 0;
	for (int64_t i = 0; i < n; i++)
		s = std::max(s, std::fabs(dev.diag()[i]));
	return s;
}

}							/* namespace */

class KernelGpuVsCpu : public ::testing::TestWithParam<Case> {};

TEST_P(KernelGpuVsCpu, SamePassAndLoopFromTheSameLabels)
{
	const Case	c = GetParam();
	const int32_t d = 6, k = 7;
	KData		data(pgkm_test::blobs(2500, d, 5, 31, 1.2, 4.0), d);
	const int64_t n = data.n;
	const KernelParams p = params_for(c.kind, d);
	auto		cpu = cpu_kdev(data, p, k);
	auto		gpu = gpu_kdev(data, p, k, kopts(c.mode.matrix, 0, c.mode.product, c.mode.build));
	EXPECT_STREQ(gpu->matrix(), c.mode.matrix == PGKM_CUDA_KMATRIX_STREAMED ? "recomputed" : "stored");
	const double scale = kernel_scale(*cpu, n);
	for (int64_t i = 0; i < n; i++)
		ASSERT_NEAR(gpu->diag()[i], cpu->diag()[i], 0x1p-23 * std::fabs(cpu->diag()[i])) << "row " << i;

	std::vector<int32_t> init = random_labels(n, k, 5);
	PassOut		a = run_pass(*cpu, init, k), b = run_pass(*gpu, init, k);
	int64_t		differ = 0;
	for (int64_t i = 0; i < n; i++)
		differ += a.labels[i] != b.labels[i];
	EXPECT_EQ(not_near_ties(data, p, init, k, a.labels, b.labels, 1e-5), 0);
	EXPECT_LE(differ, n / 1000 + 1);
	RecordProperty("labels_differing_first_pass", std::to_string(differ));
	for (int64_t i = 0; i < n; i++)
		if (a.labels[i] == b.labels[i])
		{
			ASSERT_NEAR(b.dist2[i], a.dist2[i], 1e-5 * scale) << "row " << i;
		}
	for (int32_t j = 0; j < k; j++)
	{
		EXPECT_NEAR(b.norms[j], a.norms[j], 1e-5 * scale) << "cluster " << j;
		EXPECT_NEAR(b.cross[j], a.cross[j], 1e-5 * scale * n) << "cluster " << j;
	}
	EXPECT_NEAR(b.kernel_sum, a.kernel_sum, 1e-5 * scale * n * n);

	/* the loop from the same labels: same final partition, or a near-tie flip on the way */
	LoopOut		la = run_loop(*cpu, init, k, 30), lb = run_loop(*gpu, init, k, 30);
	int64_t		final_differ = 0;
	for (int64_t i = 0; i < n; i++)
		final_differ += la.labels[i] != lb.labels[i];
	RecordProperty("labels_differing_final", std::to_string(final_differ));
	printf("[ measured ] %s: %lld of %lld labels differ from the CPU device after one pass, %lld after the loop "
		   "(%d and %d passes), objective %.3g relative\n", case_name(::testing::TestParamInfo<Case>(c, 0)).c_str(), (long long) differ,
		   (long long) n, (long long) final_differ, la.passes, lb.passes,
		   std::fabs(lb.objective - la.objective) / std::max(la.objective, 1e-300));
	EXPECT_LE(final_differ, n / 100);
	EXPECT_NEAR(lb.objective, la.objective, 1e-4 * std::max(la.objective, scale));
	if (final_differ == 0)
	{
		EXPECT_EQ(la.passes, lb.passes);
	}
}

static const Mode kStoredSyrk {"stored_syrk", PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_PRODUCT_FP32, PGKM_CUDA_KBUILD_SYRK};
static const Mode kStoredGemm {"stored_gemm", PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_PRODUCT_FP32, PGKM_CUDA_KBUILD_GEMM};
static const Mode kStored3x {"stored_3xtf32", PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_PRODUCT_3XTF32, 0};
static const Mode kStreamed {"streamed", PGKM_CUDA_KMATRIX_STREAMED, PGKM_CUDA_PRODUCT_FP32, 0};
static const Mode kStreamed3x {"streamed_3xtf32", PGKM_CUDA_KMATRIX_STREAMED, PGKM_CUDA_PRODUCT_3XTF32, 0};

INSTANTIATE_TEST_SUITE_P(Kernels, KernelGpuVsCpu, ::testing::Values(
	Case {PGKM_KERNEL_RBF, kStoredSyrk}, Case {PGKM_KERNEL_RBF, kStoredGemm}, Case {PGKM_KERNEL_RBF, kStored3x},
	Case {PGKM_KERNEL_RBF, kStreamed}, Case {PGKM_KERNEL_RBF, kStreamed3x},
	Case {PGKM_KERNEL_POLYNOMIAL, kStoredSyrk}, Case {PGKM_KERNEL_POLYNOMIAL, kStoredGemm},
	Case {PGKM_KERNEL_POLYNOMIAL, kStreamed3x},
	Case {PGKM_KERNEL_LINEAR, kStoredSyrk}, Case {PGKM_KERNEL_LINEAR, kStreamed},
	Case {PGKM_KERNEL_SIGMOID, kStoredGemm}, Case {PGKM_KERNEL_SIGMOID, kStreamed}), case_name);

/* rows(): K's rows as the passes use them; identical rows give exactly K_ii. */
TEST(KernelGpu, RowsAreTheRowsOfK)
{
	const int32_t d = 5;
	auto		x = pgkm_test::blobs(1500, d, 4, 8, 1.0, 3.0);
	/* rows 100..109 repeat rows 0..9 */
	std::copy(x.begin(), x.begin() + 10 * d, x.begin() + 100 * d);
	KData		data(x, d);
	const KernelParams p = kparams(PGKM_KERNEL_RBF, 0.3);
	auto		cpu = cpu_kdev(data, p, 3);
	const double scale = kernel_scale(*cpu, data.n);
	for (int matrix : {PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KMATRIX_STREAMED})
	{
		auto		gpu = gpu_kdev(data, p, 3, kopts(matrix));
		std::vector<int64_t> idx = {0, 3, 100, 1499};
		std::vector<float> a(idx.size() * data.n), b(idx.size() * data.n, NAN);
		cpu->rows(idx.data(), (int32_t) idx.size(), a.data());
		gpu->rows(idx.data(), (int32_t) idx.size(), b.data());
		for (size_t e = 0; e < a.size(); e++)
			ASSERT_NEAR(b[e], a[e], 3e-5 * scale) << "matrix " << matrix << " element " << e;
		for (size_t q = 0; q < idx.size(); q++)
			EXPECT_EQ(b[q * data.n + idx[q]], (float) gpu->diag()[idx[q]]);
		EXPECT_EQ(b[0 * data.n + 100], (float) gpu->diag()[0]) << "duplicate rows: exactly K_ii";
		EXPECT_EQ(b[2 * data.n + 0], (float) gpu->diag()[0]);
	}
}

/* Every sum has a fixed order: the same partition gives the same bits, pass after pass. */
TEST(KernelGpu, PassIsBitIdenticalRunToRun)
{
	const int32_t d = 4, k = 9;
	KData		data(pgkm_test::blobs(3000, d, 6, 3, 1.0, 4.0), d);
	const KernelParams p = kparams(PGKM_KERNEL_RBF, 0.2);
	std::vector<int32_t> init = random_labels(data.n, k, 2);
	for (int matrix : {PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KMATRIX_STREAMED})
	{
		auto		g1 = gpu_kdev(data, p, k, kopts(matrix));
		auto		g2 = gpu_kdev(data, p, k, kopts(matrix));
		PassOut		a = run_pass(*g1, init, k), b = run_pass(*g1, init, k), c = run_pass(*g2, init, k);
		for (const PassOut *o : {&b, &c})
		{
			EXPECT_EQ(o->labels, a.labels);
			EXPECT_EQ(o->dist2, a.dist2);
			EXPECT_EQ(o->norms, a.norms);
			EXPECT_EQ(o->cross, a.cross);
			EXPECT_EQ(o->kernel_sum, a.kernel_sum);
		}
	}
}

/* Chunks of 8 rows (many per cluster, partial sums added in order) only change the rounding. */
TEST(KernelGpu, ChunkSizeChangesOnlyTheRounding)
{
	const int32_t d = 3, k = 5;
	KData		data(pgkm_test::blobs(2000, d, 5, 11, 1.0, 4.0), d);
	const KernelParams p = kparams(PGKM_KERNEL_RBF, 0.5);
	std::vector<int32_t> init = random_labels(data.n, k, 4);
	for (int matrix : {PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KMATRIX_STREAMED})
	{
		GpuKernelOptions small = kopts(matrix);
		small.chunk_rows = 8;
		small.tile_mb = 1;		/* streamed: 256 sorted rows per tile, chunks split across tiles */
		auto		a = gpu_kdev(data, p, k, kopts(matrix));
		auto		b = gpu_kdev(data, p, k, small);
		PassOut		x = run_pass(*a, init, k), y = run_pass(*b, init, k);
		EXPECT_EQ(not_near_ties(data, p, init, k, x.labels, y.labels, 1e-12), 0);
		for (int64_t i = 0; i < data.n; i++)
			if (x.labels[i] == y.labels[i])
			{
				ASSERT_NEAR(y.dist2[i], x.dist2[i], 1e-12) << "row " << i;
			}
		for (int32_t j = 0; j < k; j++)
			EXPECT_NEAR(y.norms[j], x.norms[j], 1e-13);
	}
}

/* Empty clusters take no part in the argmin and have norm 0 (Popcorn puts them at the origin). */
TEST(KernelGpu, EmptyClustersTakeNoPart)
{
	const int32_t d = 2, k = 6;
	KData		data(pgkm_test::blobs(1200, d, 4, 21, 0.8, 5.0), d);
	const KernelParams p = kparams(PGKM_KERNEL_RBF, 0.5);
	std::vector<int32_t> init = random_labels(data.n, 4, 6);
	for (int32_t &l : init)
		l = l == 2 ? 3 : l == 3 ? 4 : l;	/* labels 0, 1, 3, 4: clusters 2 and 5 empty */
	auto		cpu = cpu_kdev(data, p, k);
	for (int matrix : {PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KMATRIX_STREAMED})
	{
		auto		gpu = gpu_kdev(data, p, k, kopts(matrix));
		PassOut		a = run_pass(*cpu, init, k), b = run_pass(*gpu, init, k);
		for (int32_t l : b.labels)
			ASSERT_TRUE(l != 2 && l != 5 && l >= 0 && l < k) << l;
		EXPECT_EQ(b.norms[2], 0.0);
		EXPECT_EQ(b.norms[5], 0.0);
		EXPECT_EQ(b.cross[2], 0.0);
		EXPECT_EQ(not_near_ties(data, p, init, k, a.labels, b.labels, 1e-5), 0);
	}
}

/* k = 1: every row in cluster 0, the objective trace(K) - sum(K) / n from the fp64 reference. */
TEST(KernelGpu, OneCluster)
{
	const int32_t d = 3;
	KData		data(pgkm_test::blobs(900, d, 3, 2, 1.0, 3.0), d);
	const KernelParams p = kparams(PGKM_KERNEL_POLYNOMIAL, 0.2, 1, 2);
	std::vector<double> K = pgkm_test::ref_kernel_matrix(data.x, d, {p.kind, p.gamma, p.coef0, p.degree});
	double		trace = 0, sum = 0;
	for (int64_t i = 0; i < data.n; i++)
		for (int64_t l = 0; l < data.n; l++)
		{
			sum += K[i * data.n + l];
			trace += i == l ? K[i * data.n + l] : 0;
		}
	for (int matrix : {PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KMATRIX_STREAMED})
	{
		auto		gpu = gpu_kdev(data, p, 1, kopts(matrix));
		PassOut		b = run_pass(*gpu, std::vector<int32_t>(data.n, 0), 1);
		double		obj = 0;
		for (int64_t i = 0; i < data.n; i++)
		{
			ASSERT_EQ(b.labels[i], 0);
			obj += b.dist2[i];
		}
		EXPECT_NEAR(obj, trace - sum / data.n, 1e-6 * trace);
		EXPECT_NEAR(b.norms[0], sum / ((double) data.n * data.n), 1e-6 * std::fabs(b.norms[0]));
		EXPECT_NEAR(b.kernel_sum, sum, 1e-6 * std::fabs(sum));
		EXPECT_NEAR(b.cross[0], sum, 1e-6 * std::fabs(sum)) << "every row stays: cross = sum_i S_i0 = sum(K)";
	}
}

/* Each point three times: the same labels as the CPU device, duplicates always together. */
TEST(KernelGpu, DuplicateRows)
{
	const int32_t d = 2, k = 4;
	auto		base = pgkm_test::blobs(400, d, 4, 13, 0.6, 5.0);
	std::vector<float> x;
	for (int rep = 0; rep < 3; rep++)
		x.insert(x.end(), base.begin(), base.end());
	KData		data(x, d);
	const KernelParams p = kparams(PGKM_KERNEL_RBF, 0.4);
	std::vector<int32_t> init = random_labels(data.n, k, 8);
	auto		cpu = cpu_kdev(data, p, k);
	LoopOut		a = run_loop(*cpu, init, k, 50);
	for (int matrix : {PGKM_CUDA_KMATRIX_STORED, PGKM_CUDA_KMATRIX_STREAMED})
	{
		auto		gpu = gpu_kdev(data, p, k, kopts(matrix));
		LoopOut		b = run_loop(*gpu, init, k, 50);
		EXPECT_EQ(b.labels, a.labels);
		EXPECT_NEAR(b.objective, a.objective, 1e-6 * a.objective);
		for (int64_t i = 0; i < 400; i++)
			EXPECT_TRUE(b.labels[i] == b.labels[i + 400] && b.labels[i] == b.labels[i + 800]) << i;
	}
}
