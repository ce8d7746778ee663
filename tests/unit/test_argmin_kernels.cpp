/*
 * test_argmin_kernels.cpp: the nearest-centroid kernel of every instruction
 * set this CPU runs (argmin_kernels.h) against values computed here in fp64:
 * odd d (1, 3, 7, 9, 17, 33), a d past the K block, k = 1, k > 64, a k past
 * the centroid group, and row counts that are no multiple of any block;
 * the blocked summation the label bound relies on; whole runs on each set.
 */
#include "argmin_kernels.h"
#include "blobs.h"
#include "engine_run.h"
#include "internal_hooks.h"
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm;

namespace
{

struct Case
{
	int64_t		n;
	int32_t		d, k;
};

/* The float inputs of one call, and the fp64 values the kernel approximates. */
struct Problem
{
	int64_t		n;
	int32_t		d, k;
	std::vector<float> x, mean, centc, cnorm;
	std::vector<double> v;		/* n x k: n_c - 2 x'.c' in fp64 on the float x' and c' */
	std::vector<double> x2;		/* ||x'||^2 in fp64 */
	std::vector<double> err;	/* per row: a bound of |float value - v| */

	Problem(int64_t n_, int32_t d_, int32_t k_, uint64_t seed) : n(n_), d(d_), k(k_)
	{
		std::mt19937_64 g(seed);
		std::normal_distribution<float> nd(0.0f, 3.0f);
		x.resize((size_t) n * d);
		for (float &t : x)
			t = 5.0f + nd(g);
		mean.resize(d);
		for (int32_t j = 0; j < d; j++)
		{
			double		s = 0;
			for (int64_t i = 0; i < n; i++)
				s += x[(size_t) i * d + j];
			mean[j] = (float) (s / n);
		}
		centc.resize((size_t) k * d);
		cnorm.resize(k);
		double		c2max = 0;
		for (int32_t c = 0; c < k; c++)
		{
			float		s = 0;
			for (int32_t j = 0; j < d; j++)
			{
				/* centroids near rows, so that near-ties happen */
				float		t = x[(size_t) (c * 7 % n) * d + j] + 0.01f * nd(g) - mean[j];
				centc[(size_t) c * d + j] = t;
				s += t * t;
			}
			cnorm[c] = s;
			c2max = std::max(c2max, (double) s);
		}
		v.resize((size_t) n * k);
		x2.resize(n);
		err.resize(n);
		const double gam = (d + 2) * 0x1p-24 / (1 - (d + 2) * 0x1p-24);
		for (int64_t i = 0; i < n; i++)
		{
			double		xx = 0;
			std::vector<double> xc(d);
			for (int32_t j = 0; j < d; j++)
			{
				xc[j] = (double) (x[(size_t) i * d + j] - mean[j]);	/* the float x' */
				xx += xc[j] * xc[j];
			}
			x2[i] = xx;
			err[i] = 2 * gam * (2 * c2max + xx) + 1e-30;
			for (int32_t c = 0; c < k; c++)
			{
				double		dot = 0;
				for (int32_t j = 0; j < d; j++)
					dot += xc[j] * centc[(size_t) c * d + j];
				v[(size_t) i * k + c] = (double) cnorm[c] - 2 * dot;
			}
		}
	}
};

struct Output
{
	std::vector<int32_t> idx;
	std::vector<float> best, second, x2;
};

Output
run_kernel(const ArgminKernel &kern, const Problem &p)
{
	std::vector<float> panels(panel_floats(p.k, p.d, kern.cb)), cn(padded_norms(p.k, kern.cb));
	pack_panels(p.centc.data(), p.cnorm.data(), p.k, p.d, kern.cb, panels.data(), cn.data());
	std::vector<float> xt((size_t) ARGMIN_KC * kern.rows_per_block);
	std::vector<float> part((size_t) ARGMIN_GROUP * kern.rows_per_block);
	Output		o;
	o.idx.assign(p.n, -1);
	o.best.resize(p.n);
	o.second.resize(p.n);
	o.x2.resize(p.n);
	ArgminArgs	a {p.x.data(), p.n, p.d, p.mean.data(), panels.data(), cn.data(), p.k, xt.data(),
		part.data(), o.idx.data(), o.best.data(), o.second.data(), o.x2.data()};
	kern.run(a);
	return o;
}

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
gamma_of(int32_t m)
{
	return m * 0x1p-24 / (1 - m * 0x1p-24);
}

}							/* namespace */

/*
 * The last panel runs a third, two thirds or all of its width (k mod CB),
 * with d in one K block or split (d > ARGMIN_KC: 600, 530, 515).
 */
TEST(ArgminKernels, EverySetAgainstFp64)
{
	const Case	cases[] = {
		{1, 1, 1}, {37, 1, 5}, {101, 3, 70}, {67, 7, 1}, {259, 9, 13}, {33, 17, 129},
		{130, 33, 65}, {45, 2, 8}, {19, 16, 64}, {21, 600, 11}, {9, 5, 1100}, {17, 515, 1030},
		{41, 530, 20}, {75, 130, 100},
	};
	for (const ArgminKernel *kern : supported_kernels())
		for (const Case &cs : cases)
		{
			SCOPED_TRACE(std::string(kern->name) + " n=" + std::to_string(cs.n) + " d=" +
						 std::to_string(cs.d) + " k=" + std::to_string(cs.k));
			Problem		p(cs.n, cs.d, cs.k, 1000 + cs.d * 31 + cs.k);
			Output		o = run_kernel(*kern, p);
			for (int64_t i = 0; i < p.n; i++)
			{
				const double *vi = p.v.data() + (size_t) i * p.k;
				const double e = p.err[i];
				/* the exact best and runner-up of the fp64 values */
				int32_t		bi = 0;
				for (int32_t c = 1; c < p.k; c++)
					if (vi[c] < vi[bi])
						bi = c;
				double		sec = INFINITY;
				for (int32_t c = 0; c < p.k; c++)
					if (c != bi)
						sec = std::min(sec, vi[c]);
				ASSERT_GE(o.idx[i], 0);
				ASSERT_LT(o.idx[i], p.k);
				EXPECT_NEAR(o.best[i], vi[bi], e) << "row " << i;
				EXPECT_NEAR(o.best[i], vi[o.idx[i]], e) << "row " << i;	/* best is idx's value */
				if (p.k == 1)
					EXPECT_TRUE(std::isinf(o.second[i]) && o.second[i] > 0) << "row " << i;
				else
					EXPECT_NEAR(o.second[i], sec, 2 * e) << "row " << i;
				EXPECT_GE(o.second[i], o.best[i]);
				/* idx is the float argmin: only a near-tie may differ from the fp64 one */
				if (o.idx[i] != bi)
				{
					EXPECT_LE(vi[o.idx[i]] - vi[bi], 2 * e) << "row " << i;
				}
				EXPECT_NEAR(o.x2[i], p.x2[i], 1e-5 * p.x2[i] + 1e-30) << "row " << i;
			}
		}
}

/*
 * Rows and centroid (1, t, t, ..., t), t = 2^-12, centred on 0: every
 * product after the first is 2^-24, half an ulp of 1, so a plain running
 * sum loses all d - 1 of them (ties to even), while blocks of ARGMIN_KB sum
 * them exactly and lose at most the first block's. The kernel's error must
 * stay within gamma_{depth + 1} (C^2 + 2 X C), the label bound's premise;
 * the plain sum's error is checked to exceed it, so this test can fail.
 */
TEST(ArgminKernels, SumsInBlocksWithinTheDepthBound)
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
				const double bound = gamma_of(argmin_dot_depth(d) + 1) * 3 * c2;
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

/* Lowest index on equal floats: duplicated centroids, the first copy wins, in every set. */
TEST(ArgminKernels, EqualValuesGoToTheLowestIndex)
{
	for (const ArgminKernel *kern : supported_kernels())
	{
		SCOPED_TRACE(kern->name);
		Problem		p(50, 9, 40, 7);
		for (int32_t c = 20; c < 40; c++)	/* centroid c + 20 = centroid c */
		{
			std::copy(p.centc.begin() + (size_t) (c - 20) * p.d,
					  p.centc.begin() + (size_t) (c - 19) * p.d, p.centc.begin() + (size_t) c * p.d);
			p.cnorm[c] = p.cnorm[c - 20];
		}
		Output		o = run_kernel(*kern, p);
		for (int64_t i = 0; i < p.n; i++)
		{
			EXPECT_LT(o.idx[i], 20) << "row " << i;
			EXPECT_EQ(o.best[i], o.second[i]) << "row " << i;	/* its copy is the runner-up */
		}
	}
}

/* The same call gives the same floats whatever else ran before (no state kept). */
TEST(ArgminKernels, RepeatableAndIndependentOfRowOffset)
{
	for (const ArgminKernel *kern : supported_kernels())
	{
		SCOPED_TRACE(kern->name);
		Problem		p(77, 33, 70, 3);
		Output		a = run_kernel(*kern, p);
		Output		b = run_kernel(*kern, p);
		EXPECT_EQ(a.idx, b.idx);
		EXPECT_EQ(a.best, b.best);
		/* rows 5.. alone: a row's values do not depend on its block neighbours */
		Problem		q = p;
		q.x.erase(q.x.begin(), q.x.begin() + 5 * p.d);
		q.n = p.n - 5;
		Output		c = run_kernel(*kern, q);
		for (int64_t i = 0; i < q.n; i++)
		{
			EXPECT_EQ(c.idx[i], a.idx[i + 5]);
			EXPECT_EQ(c.best[i], a.best[i + 5]);
			EXPECT_EQ(c.second[i], a.second[i + 5]);
		}
	}
}

/*
 * Whole runs on every instruction set and at 1 and 3 threads: labels,
 * centroids, inertia and iterations bit-identical (the float values differ
 * between sets; the fp64 decision of the open rows makes the labels equal),
 * and the labels equal to the fp64 argmin of the final centroids.
 */
TEST(ArgminKernels, RunsBitIdenticalAcrossSetsAndThreads)
{
	struct Shape
	{
		int64_t		n;
		int32_t		d, k;
	};
	/* direct form (d = 3, k = 5); GEMM form at odd d, k = 1, k > 64, d = 768 (K blocks) */
	for (const Shape &s : {Shape {3001, 9, 70}, Shape {3001, 33, 70}, Shape {2999, 3, 5},
						   Shape {2999, 3, 70}, Shape {1001, 17, 1}, Shape {501, 768, 70}})
	{
		const int32_t d = s.d, k = s.k;
		const int64_t n = s.n;
		std::vector<float> x = pgkm_test::blobs(n, d, 12, 40 + d, 2.0, 6.0);
		std::vector<double> init = pgkm_test::pick_rows(x, d, k, 5);
		pgkm_options o = pgkm_test::cpu_options(k);
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
		o.max_iter = d > 100 ? 4 : 15;
		o.tol = 0;
		bool		have = false;
		pgkm_test::EngineResult first;
		for (const ArgminKernel *kern : supported_kernels())
			for (int32_t threads : {1, 3})
			{
				SCOPED_TRACE(std::string(kern->name) + " d=" + std::to_string(d) + " k=" +
							 std::to_string(k) + " threads=" + std::to_string(threads));
				const int32_t saved = pgkm_internal_set_isa((int32_t) kern->isa);
				o.n_threads = threads;
				pgkm_test::EngineResult r = pgkm_test::run_engine(x, d, o);
				pgkm_internal_set_isa(saved);
				ASSERT_EQ(r.status, PGKM_DONE) << r.err;
				for (int64_t i = 0; i < n; i++)
					ASSERT_EQ(r.labels[i], pgkm_test::nearest_fp64(&x[(size_t) i * d], r.centroids.data(), r.k, d))
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
				EXPECT_EQ(r.iterations, first.iterations);
			}
	}
}
