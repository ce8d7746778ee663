/*
 * test_kernel_plan.cpp: the kernel k-means memory plan on the host, no GPU
 * (cuda/kernel_plan.cpp): every buffer counted, K counted at its precision,
 * stored when it fits, streamed otherwise, refused with the numbers when
 * nothing fits; the GEMM/SYRK and product rules; settings checked.
 */
#include "failure.h"
#include "kernel_plan.h"

#include "h100_limits.h"

#include <gtest/gtest.h>

using namespace pgkm_cuda;

namespace
{

KernelSettings
rbf()
{
	pgkm_cuda_kernel_config c {};
	c.kernel = PGKM_KERNEL_RBF;
	c.gamma = 0.5;
	c.device_ordinal = -1;
	return kernel_settings_from_config(&c);
}

const int64_t GB = 1LL << 30;

}							/* namespace */

TEST(KernelPlan, StoredWhenItFitsAndKIsCounted)
{
	const int64_t n = 50000;
	KernelPlan	p = make_kernel_plan(n, 50, 10, rbf(), h100(), 70 * GB);
	EXPECT_TRUE(p.stored);
	EXPECT_EQ(p.ld % 64, 0);
	EXPECT_GE(p.ld, n);
	KernelBytes b = kernel_bytes(p);
	EXPECT_EQ(b.K, n * p.ld * 4);
	EXPECT_EQ(b.tile, 0);
	EXPECT_EQ(b.panel, p.panel_rows * p.ld * 4);
	EXPECT_EQ(p.device_bytes, b.total());
	EXPECT_EQ(b.S, 10 * n * 8);
	EXPECT_EQ(b.partial, p.max_chunks * p.partial_cols * 8);
	EXPECT_EQ(p.max_chunks, (n + p.chunk_rows - 1) / p.chunk_rows + 10);
	EXPECT_LE(p.device_bytes, p.budget);
	EXPECT_EQ(p.stored_bytes, p.device_bytes);
}

TEST(KernelPlan, HalfPrecisionHalvesK)
{
	KernelSettings s = rbf();
	s.precision = PGKM_CUDA_KPREC_BF16;
	const int64_t n = 40000;
	KernelPlan	h = make_kernel_plan(n, 20, 10, s, h100(), 70 * GB);
	KernelPlan	f = make_kernel_plan(n, 20, 10, rbf(), h100(), 70 * GB);
	EXPECT_EQ(kernel_bytes(h).K, n * h.ld * 2);
	EXPECT_EQ(kernel_bytes(f).K, n * f.ld * 4);
	EXPECT_LT(kernel_bytes(h).K, kernel_bytes(f).K * 51 / 100);
	EXPECT_EQ(h.elem_bytes, 2);
	/* rows padded to whole pass strips: 256 floats, or 512 half-precision values */
	EXPECT_EQ(f.ld % 256, 0);
	EXPECT_EQ(h.ld % 512, 0);
	EXPECT_EQ(h.partial_cols, h.ld);
}

TEST(KernelPlan, StreamedWhenKDoesNotFitAndRefusedWithTheNumbers)
{
	const int64_t n = 200000;	/* K alone: 160 GB */
	KernelPlan	p = make_kernel_plan(n, 50, 100, rbf(), h100(), 70 * GB);
	EXPECT_FALSE(p.stored);
	KernelBytes b = kernel_bytes(p);
	EXPECT_EQ(b.K, 0);
	EXPECT_EQ(b.panel, 0);
	EXPECT_EQ(b.tile, p.tile_rows * p.tile_cols * 4);
	EXPECT_EQ(b.xs, n * p.dp * 4);
	EXPECT_LE(p.tile_rows * p.tile_cols * 4, 32LL << 20);
	EXPECT_GT(p.stored_bytes, n * n * 4);

	KernelSettings stored = rbf();
	stored.matrix = PGKM_CUDA_KMATRIX_STORED;
	try
	{
		make_kernel_plan(n, 50, 100, stored, h100(), 70 * GB);
		ADD_FAILURE() << "no error";
	}
	catch (const Failure &f)
	{
		EXPECT_EQ(f.status, PGKM_ERR_NOMEM);
		EXPECT_NE(f.msg.find("K stored (float32, n^2)"), std::string::npos) << f.msg;
		EXPECT_NE(f.msg.find("recompute K instead"), std::string::npos) << f.msg;
	}
	try
	{
		make_kernel_plan(n, 50, 100, rbf(), h100(), 64LL << 20);
		ADD_FAILURE() << "no error";
	}
	catch (const Failure &f)
	{
		EXPECT_EQ(f.status, PGKM_ERR_NOMEM);
		EXPECT_NE(f.msg.find("with K recomputed in tiles"), std::string::npos) << f.msg;
		EXPECT_NE(f.msg.find("GPU budget of 0.07 GB"), std::string::npos) << f.msg;
	}
}

TEST(KernelPlan, TightBudgetsShrinkThePanelAndTheTile)
{
	const int64_t n = 30000;
	KernelPlan	wide = make_kernel_plan(n, 10, 5, rbf(), h100(), 70 * GB);
	KernelBytes b = kernel_bytes(wide);
	const int64_t budget = b.total() - b.panel + 64 * wide.ld * 4;
	KernelPlan	thin = make_kernel_plan(n, 10, 5, rbf(), h100(), budget);
	EXPECT_TRUE(thin.stored);
	EXPECT_EQ(thin.panel_rows, 64);
	EXPECT_LE(thin.device_bytes, budget);

	KernelSettings st = rbf();
	st.matrix = PGKM_CUDA_KMATRIX_STREAMED;
	KernelPlan	s = make_kernel_plan(n, 10, 5, st, h100(), 70 * GB);
	KernelBytes sb = kernel_bytes(s);
	const int64_t sbudget = sb.total() - sb.tile + 512 * s.tile_cols * 4;
	KernelPlan	t = make_kernel_plan(n, 10, 5, st, h100(), sbudget);
	EXPECT_EQ(t.tile_rows, 512);
	EXPECT_LE(t.device_bytes, sbudget);
}

TEST(KernelPlan, ProductRules)
{
	KernelSettings s = rbf();
	EXPECT_EQ(kernel_build_syrk(78823, 50, PGKM_CUDA_KBUILD_AUTO), 78823.0 / 50 <= KBUILD_GEMM_MIN_RATIO);
	EXPECT_TRUE(kernel_build_syrk(50000, 3072, PGKM_CUDA_KBUILD_AUTO));
	EXPECT_FALSE(kernel_build_syrk(50000, 3072, PGKM_CUDA_KBUILD_GEMM));
	EXPECT_TRUE(kernel_build_syrk(78823, 50, PGKM_CUDA_KBUILD_SYRK));
	KernelPlan	tri = make_kernel_plan(10000, 100, 10, s, h100(), 70 * GB);
	EXPECT_TRUE(tri.syrk);
	EXPECT_LE(tri.panel_rows, 10000 / 8) << "the triangle in at least 8 panels";
	EXPECT_FALSE(make_kernel_plan(20000, 100, 10, s, h100(), 70 * GB).tf32x3);
	EXPECT_TRUE(make_kernel_plan(20000, 1000, 10, s, h100(), 70 * GB).tf32x3);
	s.product = PGKM_CUDA_PRODUCT_FP32;
	EXPECT_FALSE(make_kernel_plan(20000, 1000, 10, s, h100(), 70 * GB).tf32x3);
	s.product = PGKM_CUDA_PRODUCT_3XTF32;
	KernelPlan	p = make_kernel_plan(20000, 100, 10, s, h100(), 70 * GB);
	EXPECT_TRUE(p.tf32x3);
	EXPECT_EQ(kernel_bytes(p).xlo, 20000LL * 104 * 4) << "d padded to 8";
}

TEST(KernelPlan, SettingsAreChecked)
{
	pgkm_cuda_kernel_config c {};
	c.kernel = PGKM_KERNEL_POLYNOMIAL;
	c.gamma = 1;
	c.degree = 0;
	EXPECT_THROW(kernel_settings_from_config(&c), Failure);
	c.degree = 2;
	EXPECT_NO_THROW(kernel_settings_from_config(&c));
	c.tile_mb = 2000;
	EXPECT_THROW(kernel_settings_from_config(&c), Failure);
	c.tile_mb = 0;
	c.product = PGKM_CUDA_PRODUCT_TF32;
	EXPECT_THROW(kernel_settings_from_config(&c), Failure);
	EXPECT_THROW(kernel_settings_from_config(nullptr), Failure);
	EXPECT_THROW(make_kernel_plan(10, 3, 11, rbf(), h100(), GB), Failure);
}
