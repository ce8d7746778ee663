/*
 * test_lloyd_paths.cpp: Lloyd's CPU paths against fp64 references:
 *   - the tiled kernel sums each value's dot product in blocks of
 *     ARGMIN_KB features (argmin_dot_depth), which the label bound relies on;
 *   - whole runs (direct and GEMM forms, d up to 768, k = 1 and k > 64, n no
 *     multiple of any block) give the fp64 labels on every instruction set;
 *   - the centroid update gives the reference's bits (fp64, row order) for
 *     any thread count, also when parts are split by features.
 */
#include "argmin_kernels.h"
#include "blobs.h"
#include "engine_run.h"
#include "internal_hooks.h"
#include "reference.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm;

namespace
{

std::vector<const ArgminKernel *>
supported_kernels()
{
	std::vector<const ArgminKernel *> ks;
	for (Isa isa : {Isa::Portable, Isa::Avx2, Isa::Avx512})
		if ((int32_t) isa <= (int32_t) best_isa())
			ks.push_back(&argmin_kernel(isa));
	return ks;
}

double
gamma_f(int32_t m)
{
	return m * 0x1p-24 / (1 - m * 0x1p-24);
}

}							/* namespace */

/*
 * Rows and centroid (1, t, t, ..., t), t = 2^-12, centred on 0: every
 * product after the first is 2^-24, half an ulp of 1, so a plain running
 * sum loses all d - 1 of them (ties to even), while blocks of ARGMIN_KB sum
 * them exactly and lose at most the first block's. The kernel's error must
 * stay within gamma_{depth + 1} (C^2 + 2 X C), the label bound's premise;
 * the plain sum's error is checked to exceed it, so this test can fail.
 */
TEST(LloydPaths, KernelSumsInBlocksWithinTheDepthBound)
{
	const float	t = 0x1p-12f;
	for (const ArgminKernel *kern : supported_kernels())
		for (int32_t d : {257, 768, 1030})	/* 1030: split into K blocks too */
			for (int32_t k : {1, 70})
			{
				SCOPED_TRACE(std::string(kern->name) + " d=" + std::to_string(d) + " k=" +
							 std::to_string(k));
				const int64_t n = 37;
				std::vector<float> row(d, t), x, mean(d, 0.0f), centc;
				row[0] = 1.0f;
				for (int64_t i = 0; i < n; i++)
					x.insert(x.end(), row.begin(), row.end());
				for (int32_t c = 0; c < k; c++)
					centc.insert(centc.end(), row.begin(), row.end());
				double		c2 = 0;
				for (float v : row)
					c2 += (double) v * v;	/* exact: 1 + (d - 1) 2^-24 */
				std::vector<float> cnorm(k, (float) c2);
				const double exact = (double) cnorm[0] - 2 * c2;
				const double bound = gamma_f(argmin_dot_depth(d) + 1) * 3 * c2;
				float		plain = 0;
				for (int32_t j = 0; j < d; j++)
					plain += row[j] * row[j];
				ASSERT_GT(std::fabs((double) (cnorm[0] - 2 * plain) - exact), bound);

				std::vector<float> panels(panel_floats(k, d, kern->cb)), cn(padded_norms(k, kern->cb));
				pack_panels(centc.data(), cnorm.data(), k, d, kern->cb, panels.data(), cn.data());
				std::vector<float> xt((size_t) ARGMIN_KC * kern->rows_per_block);
				std::vector<float> part((size_t) ARGMIN_GROUP * kern->rows_per_block);
				std::vector<int32_t> idx(n, -1);
				std::vector<float> best(n), second(n), x2(n);
				ArgminArgs	a {x.data(), n, d, mean.data(), panels.data(), cn.data(), k, xt.data(),
					part.data(), idx.data(), best.data(), second.data(), x2.data()};
				kern->run(a);
				for (int64_t i = 0; i < n; i++)
				{
					EXPECT_EQ(idx[i], 0) << "row " << i;	/* equal values: the lowest index */
					EXPECT_LE(std::fabs((double) best[i] - exact), bound) << "row " << i;
				}
			}
}

/*
 * Whole runs from the same start on every instruction set at 1 and 3
 * threads: labels equal to the fp64 argmin of the final centroids, and
 * labels, centroids and inertia bit-identical throughout. Covers the direct
 * form (d = 3, k = 5), the GEMM form at odd d, k = 1, k > 64, and d = 768
 * (split into K blocks), n no multiple of any block.
 */
TEST(LloydPaths, RunsGiveFp64LabelsOnEverySetAndThreadCount)
{
	struct Shape
	{
		int64_t		n;
		int32_t		d, k;
	};
	for (const Shape &s : {Shape {2999, 3, 5}, Shape {2999, 3, 70}, Shape {1001, 17, 1},
						   Shape {1001, 33, 65}, Shape {501, 768, 70}})
	{
		std::vector<float> x = pgkm_test::blobs(s.n, s.d, 12, 9 + s.d, 2.0, 6.0);
		std::vector<double> init = pgkm_test::pick_rows(x, s.d, s.k, 3);
		pgkm_options o = pgkm_test::cpu_options(s.k);
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
		o.max_iter = 4;
		o.tol = 0;
		bool		have = false;
		pgkm_test::EngineResult first;
		for (const ArgminKernel *kern : supported_kernels())
			for (int32_t threads : {1, 3})
			{
				SCOPED_TRACE(std::string(kern->name) + " n=" + std::to_string(s.n) + " d=" +
							 std::to_string(s.d) + " k=" + std::to_string(s.k) + " threads=" +
							 std::to_string(threads));
				const int32_t saved = pgkm_internal_set_isa((int32_t) kern->isa);
				o.n_threads = threads;
				pgkm_test::EngineResult r = pgkm_test::run_engine(x, s.d, o);
				pgkm_internal_set_isa(saved);
				ASSERT_EQ(r.status, PGKM_DONE) << r.err;
				for (int64_t i = 0; i < s.n; i++)
					ASSERT_EQ(r.labels[i], pgkm_test::nearest_fp64(&x[(size_t) i * s.d], r.centroids.data(),
																  r.k, s.d))
						<< "row " << i;
				if (!have)
				{
					first = r;
					have = true;
					continue;
				}
				EXPECT_EQ(r.labels, first.labels);
				EXPECT_EQ(r.centroids, first.centroids);
				EXPECT_EQ(r.inertia, first.inertia);
			}
	}
}

/*
 * The update sums each cluster's rows in fp64 in row order, however the
 * clusters are cut into parts and the parts into feature slices: the run
 * follows the fp64 reference Lloyd bit for bit at 1, 2, 7 and 16 threads
 * (k = 3 with 48 features: slices; k = 40 at d = 2: one part per thread;
 * n no multiple of the update's block).
 */
TEST(LloydPaths, UpdateMatchesTheReferenceForAnyThreadCount)
{
	struct Shape
	{
		int32_t		d, k;
	};
	for (const Shape &s : {Shape {48, 3}, Shape {2, 40}})
	{
		const int64_t n = 9001;
		std::vector<float> x = pgkm_test::blobs(n, s.d, 6, 31 + s.d, 2.0, 6.0);
		std::vector<double> init = pgkm_test::pick_rows(x, s.d, s.k, 8);
		pgkm_options o = pgkm_test::cpu_options(s.k);
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
		o.max_iter = 6;
		o.tol = 0;
		pgkm_test::RefResult ref = pgkm_test::ref_lloyd(x, s.d, init, o.max_iter, o.tol);
		for (int32_t threads : {1, 2, 7, 16})
		{
			SCOPED_TRACE("d=" + std::to_string(s.d) + " k=" + std::to_string(s.k) + " threads=" +
						 std::to_string(threads));
			o.n_threads = threads;
			pgkm_test::EngineResult r = pgkm_test::run_engine(x, s.d, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			EXPECT_EQ(r.iterations, ref.iterations);
			EXPECT_EQ(r.labels, ref.labels);
			EXPECT_EQ(r.centroids, ref.centers);	/* bitwise */
		}
	}
}
