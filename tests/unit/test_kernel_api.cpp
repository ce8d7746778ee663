/*
 * test_kernel_api.cpp: the C API of kernel k-means: defaults, argument
 * errors and their messages, the memory estimate (K counted, and what
 * kernel_matrix AUTO picks by it), GPU refusal, interrupts.
 */
#include "blobs.h"
#include "kernel_test_util.h"

#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

TEST(KernelApi, DefaultsAreScikitLearns)
{
	pgkm_options o;
	pgkm_options_default(&o);
	EXPECT_EQ(o.kernel, PGKM_KERNEL_RBF);
	EXPECT_EQ(o.gamma, 0.0);	/* 1 / n_features */
	EXPECT_EQ(o.coef0, 1.0);
	EXPECT_EQ(o.degree, 3);
	EXPECT_EQ(o.kernel_matrix, PGKM_KMATRIX_AUTO);
	EXPECT_EQ(o.initial_labels, nullptr);
	auto		x = blobs(50, 4, 2, 1);
	EngineResult r = run_engine(x, 4, kernel_options(2, PGKM_KERNEL_RBF));
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.kernel_gamma, 0.25);
	EXPECT_EQ(r.kernel_matrix, "stored");
}

TEST(KernelApi, InvalidArgumentsAreRejectedWithAClearMessage)
{
	auto		x = blobs(20, 2, 2, 3);
	auto		expect = [&](pgkm_options o, int status, const char *fragment) {
		EngineResult r = run_engine(x, 2, o);
		EXPECT_EQ(r.status, status) << fragment;
		EXPECT_NE(r.err.find(fragment), std::string::npos) << "message: " << r.err;
	};
	pgkm_options o = kernel_options(2, 7);
	expect(o, PGKM_ERR_INVALID, "unknown kernel 7");
	o = kernel_options(2, PGKM_KERNEL_RBF, -1);
	expect(o, PGKM_ERR_INVALID, "gamma must be a finite number > 0, or 0 for 1/d (got -1)");
	o.gamma = INFINITY;
	expect(o, PGKM_ERR_INVALID, "gamma must be a finite number");
	o = kernel_options(2, PGKM_KERNEL_SIGMOID, 1, NAN);
	expect(o, PGKM_ERR_INVALID, "coef0 must be finite");
	o = kernel_options(2, PGKM_KERNEL_POLYNOMIAL, 1, 1, 0);
	expect(o, PGKM_ERR_INVALID, "degree must be at least 1 (got 0)");
	o = kernel_options(2, PGKM_KERNEL_RBF);
	o.kernel_matrix = 5;
	expect(o, PGKM_ERR_INVALID, "unknown kernel_matrix 5");
	o = kernel_options(2, PGKM_KERNEL_RBF);
	o.init = PGKM_INIT_GIVEN;
	expect(o, PGKM_ERR_INVALID, "needs initial_labels");
	std::vector<int32_t> labels(20, 0);
	labels[7] = 2;
	o.initial_labels = labels.data();
	expect(o, PGKM_ERR_INVALID, "initial label 2 of row 7 is outside 0..1");
	o = kernel_options(2, PGKM_KERNEL_RBF);
	o.device = PGKM_DEVICE_GPU;
	expect(o, PGKM_ERR_GPU_UNAVAILABLE, "does not run kernel k-means");
	/* a polynomial of high degree overflows float32: refused, stored or recomputed */
	for (int matrix : {PGKM_KMATRIX_STORED, PGKM_KMATRIX_RECOMPUTED})
	{
		o = kernel_options(2, PGKM_KERNEL_POLYNOMIAL, 10, 1, 40);
		o.kernel_matrix = matrix;
		expect(o, PGKM_ERR_INVALID, "the polynomial kernel overflows float32 on this data");
	}
	/* device auto says why it ran on the CPU */
	EngineResult r = run_engine(x, 2, [] {
		pgkm_options a = kernel_options(2, PGKM_KERNEL_RBF);
		a.device = PGKM_DEVICE_AUTO;
		return a;
	}());
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.device, "cpu");
	EXPECT_NE(r.fallback.find("kernel k-means runs on the CPU"), std::string::npos);
}

/* The estimate counts the n^2 float32 of a stored K; AUTO recomputes when that exceeds memory_limit. */
TEST(KernelApi, EstimateCountsTheKernelMatrix)
{
	const int64_t n = 2000;
	const int32_t d = 8;
	pgkm_options o = kernel_options(10, PGKM_KERNEL_RBF);
	o.max_iter = 5;
	o.kernel_matrix = PGKM_KMATRIX_STORED;
	const int64_t stored = pgkm_estimate_bytes(n, d, &o);
	o.kernel_matrix = PGKM_KMATRIX_RECOMPUTED;
	const int64_t recomputed = pgkm_estimate_bytes(n, d, &o);
	EXPECT_NEAR((double) (stored - recomputed), (double) n * n * 4, 1.0);
	EXPECT_LT(recomputed, 64LL << 20);
	o.kernel_matrix = PGKM_KMATRIX_AUTO;
	o.memory_limit = stored;
	EXPECT_EQ(pgkm_estimate_bytes(n, d, &o), stored);
	o.memory_limit = stored - 1;
	EXPECT_EQ(pgkm_estimate_bytes(n, d, &o), recomputed);
	/* ... and the run does what the estimate said */
	auto		x = blobs(n, d, 10, 4);
	EngineResult r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.kernel_matrix, "recomputed");
	EXPECT_NE(r.detail.find("K recomputed"), std::string::npos) << r.detail;
	o.memory_limit = stored;
	r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_EQ(r.kernel_matrix, "stored");
	EXPECT_NE(r.detail.find("K stored (float32, 16 MB"), std::string::npos) << r.detail;
	/* a stored K larger than the machine's memory is refused before anything is allocated */
	o.kernel_matrix = PGKM_KMATRIX_STORED;
	std::vector<float> one(8, 0.f);
	pgkm_run   *h = nullptr;
	char		err[256];
	EXPECT_EQ(pgkm_run_create(one.data(), 1LL << 26, d, &o, nullptr, nullptr, &h, err, sizeof(err)),
			  PGKM_ERR_NOMEM);
	EXPECT_NE(std::string(err).find("needs 18014398.5 GB (n^2 float32)"), std::string::npos) << err;
	EXPECT_EQ(h, nullptr);
}

namespace
{
struct CallCounter
{
	std::atomic<int> calls {0};
	int			stop_after;
};
int
stop_after_calls(void *ctx)
{
	auto	   *c = (CallCounter *) ctx;
	return ++c->calls > c->stop_after ? 1 : 0;
}
}							/* namespace */

TEST(KernelApi, InterruptStopsTheBuildAndThePasses)
{
	auto		x = blobs(4000, 16, 5, 8);
	for (int matrix : {PGKM_KMATRIX_STORED, PGKM_KMATRIX_RECOMPUTED})
	{
		pgkm_options o = kernel_options(5, PGKM_KERNEL_RBF);
		o.kernel_matrix = matrix;
		o.n_threads = 2;
		CallCounter c;
		c.stop_after = 3;
		EngineResult r = run_engine(x, 16, o, stop_after_calls, &c);
		EXPECT_EQ(r.status, PGKM_INTERRUPTED) << r.err;
		EXPECT_EQ(r.err, "k-means interrupted");
	}
}

/* Prediction from the stored partition gives every training row its fitted label and distance. */
TEST(KernelApi, NearestReproducesTheFittedLabels)
{
	const int32_t d = 3, k = 5;
	auto		x = blobs(700, d, 5, 13, 1.5, 5.0);
	const int64_t n = (int64_t) x.size() / d;
	for (int kind : {PGKM_KERNEL_RBF, PGKM_KERNEL_POLYNOMIAL, PGKM_KERNEL_LINEAR})
	{
		pgkm_options o = kernel_options(k, kind, 0.1, 1.0, 2);
		o.tol = 1e-2;			/* stops on the shift: members differ from the final labels */
		EngineResult r = run_engine(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		int64_t		differ = 0;
		for (int64_t i = 0; i < n; i++)
			differ += r.labels[i] != r.kernel_members[i];
		for (int64_t i = 0; i < n; i++)
		{
			double		row[3] = {x[i * d], x[i * d + 1], x[i * d + 2]}, d2 = -1;
			int32_t		c = pgkm_kernel_nearest(&o, x.data(), r.kernel_members.data(), n, d, r.k,
												r.kernel_norms.data(), row, &d2);
			ASSERT_EQ(c, r.labels[i]) << "kernel " << kind << " row " << i;
			ASSERT_NEAR(d2, r.dist[i] * r.dist[i], 1e-5 * (1 + d2)) << "row " << i;
		}
		RecordProperty("members_differing_" + std::to_string(kind), std::to_string(differ));
	}
	double		row[3] = {0, 0, 0};
	pgkm_options o = kernel_options(k, PGKM_KERNEL_RBF);
	EXPECT_EQ(pgkm_kernel_nearest(&o, x.data(), nullptr, n, d, k, nullptr, row, nullptr), -1);
}
