/*
 * test_exact_labels.cpp: CPU labels equal the fp64 argmin of
 * sqdist_exact (the reference's nearest_fp64), lowest index on exact ties,
 * on both float forms, on rows built to be near-ties at the float
 * rounding level; a negative control shows that the float argmin alone gets
 * such rows wrong, so the data does exercise the recheck.
 */
#include "blobs.h"
#include "near_ties.h"
#include "device.h"
#include "engine_run.h"
#include "internal_hooks.h"
#include "reference.h"
#include "thread_pool.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

namespace
{
struct Crossover
{
	int32_t		saved;
	explicit Crossover(int32_t d) : saved(pgkm_internal_set_gemm_min_d(d)) {}
	~Crossover() { pgkm_internal_set_gemm_min_d(saved); }
};

struct ExactLabelsOff
{
	int32_t		saved = pgkm_internal_set_exact_labels(0);
	~ExactLabelsOff() { pgkm_internal_set_exact_labels(saved); }
};

/* Labels of the CPU device's final assignment against fixed centroids. */
std::vector<int32_t>
device_labels(const std::vector<float> &x, int32_t d, const std::vector<double> &c, int threads)
{
	const int64_t n = (int64_t) x.size() / d;
	const int32_t k = (int32_t) (c.size() / d);
	std::vector<double> mean(d, 0.0);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			mean[j] += x[(size_t) i * d + j] / (double) n;
	pgkm::ThreadPool pool(threads, nullptr, nullptr);
	auto		dev = pgkm::make_cpu_device(x.data(), n, d, k, mean.data(), nullptr, &pool);
	dev->set_centroids(c.data(), k);
	std::vector<int32_t> labels(n, -1);
	std::vector<double> dist2(n);
	std::vector<int64_t> sizes(k);
	double		inertia = 0;
	dev->assign(labels.data(), dist2.data(), sizes.data(), &inertia);
	return labels;
}
}							/* namespace */

TEST(ExactLabels, NearTiesGetTheFp64ArgminOnBothForms)
{
	struct Shape
	{
		int32_t		d, k;
		double		offset;
	};
	const Shape shapes[] = {{1, 5, 0}, {2, 9, 0}, {3, 33, 1000}, {5, 4, -40}, {8, 9, 0},
		{16, 33, 1000}, {64, 12, 0}, {200, 6, 25}};
	for (const Shape &s : shapes)
		for (int32_t cross : {1, 1 << 30})	/* GEMM always / direct always */
		{
			if (cross == 1 && s.k < 4)
				continue;
			Crossover	g(cross);
			NearTies	t = near_ties(3000, s.d, s.k, s.offset, 100 + s.d * 7 + s.k);
			const int64_t n = (int64_t) t.x.size() / s.d;
			int64_t		rows = 0, rechecked = 0;
			pgkm_internal_label_rechecks(&rows, &rechecked);	/* reset */
			auto		got = device_labels(t.x, s.d, t.c, 2);
			pgkm_internal_label_rechecks(&rows, &rechecked);
			int64_t		wrong = 0;
			for (int64_t i = 0; i < n; i++)
				wrong += got[i] != nearest_fp64(&t.x[(size_t) i * s.d], t.c.data(), s.k, s.d);
			const char *form = cross == 1 ? "gemm" : "direct";
			EXPECT_EQ(wrong, 0) << form << " d " << s.d << " k " << s.k;
			EXPECT_EQ(rows, n);
			EXPECT_GT(rechecked, 0) << form << " d " << s.d;
			std::vector<int32_t> flt;
			{
				ExactLabelsOff off;
				flt = device_labels(t.x, s.d, t.c, 2);
			}
			int64_t		float_wrong = 0;
			for (int64_t i = 0; i < n; i++)
				float_wrong += flt[i] != nearest_fp64(&t.x[(size_t) i * s.d], t.c.data(), s.k, s.d);
			/* the negative control: these rows defeat the float argmin */
			EXPECT_GT(float_wrong, 0) << form << " d " << s.d << " k " << s.k;
			printf("%s d=%d k=%d: %lld of %lld rows decided in fp64, float argmin wrong on %lld\n",
				   form, s.d, s.k, (long long) rechecked, (long long) n, (long long) float_wrong);
		}
}

/* Exact ties (duplicated centroids, grid data) go to the lowest index on both forms. */
TEST(ExactLabels, ExactTiesGoToTheLowestIndex)
{
	std::mt19937_64 gen(3);
	for (int32_t d : {2, 12})
		for (int32_t cross : {1, 1 << 30})
		{
			Crossover	g(cross);
			const int32_t k = 10;
			std::vector<double> c((size_t) k * d);
			for (int32_t ci = 0; ci < k; ci++)
				for (int32_t j = 0; j < d; j++)
					c[(size_t) ci * d + j] = ci % 2 ? c[(size_t) (ci - 1) * d + j] : (double) (gen() % 5);
			std::vector<float> x((size_t) 2000 * d);
			for (auto &v : x)
				v = (float) (gen() % 9) * 0.5f;
			auto		got = device_labels(x, d, c, 1);
			for (size_t i = 0; i < got.size(); i++)
			{
				ASSERT_EQ(got[i], nearest_fp64(&x[i * d], c.data(), k, d)) << "row " << i;
				ASSERT_EQ(got[i] % 2, 0);	/* never the duplicate */
			}
		}
}

/*
 * Whole runs: with exact labels at every step, the engine follows the fp64
 * reference Lloyd exactly (same labels, so bit-identical centroids: both sum
 * in row order), here on the uniform-noise shape of the scikit-learn
 * comparison whose float near-tie flips made the runs diverge.
 */
TEST(ExactLabels, RunFollowsTheFp64ReferenceExactly)
{
	for (int32_t d : {3, 64})
	{
		const int32_t k = 30;
		std::mt19937_64 gen(6);
		std::uniform_real_distribution<double> ud(-1.0, 1.0);
		std::vector<double> scale(d);
		for (auto &s : scale)
			s = 0.5 + 4.5 * (ud(gen) + 1) / 2;
		std::vector<float> x((size_t) 8000 * d);
		for (size_t i = 0; i < x.size(); i++)
			x[i] = (float) (ud(gen) * scale[i % d]);
		auto		init = pick_rows(x, d, k, 11);
		pgkm_options o = cpu_options(k);
		o.init = PGKM_INIT_GIVEN;
		o.initial_centroids = init.data();
		o.max_iter = 50;
		o.tol = 0;
		o.n_threads = 2;
		EngineResult r = run_engine(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		RefResult	ref = ref_lloyd(x, d, init, o.max_iter, o.tol);
		EXPECT_EQ(r.iterations, ref.iterations) << "d " << d;
		EXPECT_EQ(r.labels, ref.labels) << "d " << d;
		EXPECT_EQ(r.centroids, ref.centers) << "d " << d;
		EXPECT_NEAR(r.inertia, ref.inertia, 1e-12 * ref.inertia) << "d " << d;	/* summation order */
	}
}

/*
 * Many open rows: blobs x_j = (i % 16) + U[0,1) with several centroids per
 * blob (each the mean of its blob but for a different eighth of its rows), so
 * most rows have near-equidistant candidates and go to the fp64 decision
 * and its float level; every label is still the fp64 argmin.
 */
TEST(ExactLabels, ManyOpenRowsGetTheFp64Argmin)
{
	struct Shape
	{
		int32_t		d, k;
	};
	for (const Shape s : {Shape {768, 64}, Shape {256, 96}})
	{
		const int64_t n = 3000;
		const std::vector<float> x = pgkm_test::mod16_rows(n, s.d, 17 + s.d);
		std::vector<double> c((size_t) s.k * s.d, 0.0);
		for (int32_t ci = 0; ci < s.k; ci++)
		{
			int64_t		m = 0;
			for (int64_t row = ci % 16; row < n; row += 16)
				if ((row / 16) % 8 != ci / 16)
				{
					for (int32_t j = 0; j < s.d; j++)
						c[(size_t) ci * s.d + j] += x[(size_t) row * s.d + j];
					m++;
				}
			for (int32_t j = 0; j < s.d; j++)
				c[(size_t) ci * s.d + j] /= (double) m;
		}
		int64_t		rows = 0, rechecked = 0;
		pgkm_internal_label_rechecks(&rows, &rechecked);	/* reset */
		auto		got = device_labels(x, s.d, c, 2);
		pgkm_internal_label_rechecks(&rows, &rechecked);
		int64_t		wrong = 0;
		for (int64_t i = 0; i < n; i++)
			wrong += got[i] != nearest_fp64(&x[(size_t) i * s.d], c.data(), s.k, s.d);
		EXPECT_EQ(wrong, 0) << "d " << s.d << " k " << s.k;
		EXPECT_EQ(rows, n);
		EXPECT_GT(rechecked, n / 2) << "d " << s.d << " k " << s.k;
		printf("d=%d k=%d: %lld of %lld rows open\n", s.d, s.k, (long long) rechecked, (long long) n);
	}
}
