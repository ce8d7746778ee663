/*
 * test_centroid_sums.cpp: the fixed-point centroid sums (centroid_sums.h):
 * the rounding is llrint's, the scale keeps every value and every sum in
 * range while using the range, moving rows between clusters gives the bits
 * of summing afresh, and a CPU device's centroids are the exact means of
 * their rows within the scale's resolution on columns of very different
 * magnitudes, with the same bits whether workers add their own sums or the
 * update splits the clusters; and its sizes, kept from the moved rows,
 * are the counts of the rows' labels.
 */
#include "centroid_sums.h"
#include "blobs.h"
#include "device.h"
#include "engine_run.h"
#include "internal_hooks.h"
#include "reference.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using pgkm::fixed_point;
using pgkm::fixed_point_scale;

TEST(CentroidSums, FixedPointIsLlrint)
{
	std::mt19937_64 gen(3);
	std::uniform_real_distribution<double> unit(-1.0, 1.0);
	std::uniform_int_distribution<int> exp(-140, 60);
	for (int t = 0; t < 200000; t++)
	{
		const float v = (float) std::ldexp(unit(gen), exp(gen));
		const double scale = fixed_point_scale(1 + (int64_t) (gen() % 100000000), std::fabs(v));
		ASSERT_EQ((long long) fixed_point(v, scale), std::llrint((double) v * scale)) << v;
	}
	/* ties: m + 1/2 rounds to the even neighbour, either sign */
	for (int m = -1000; m <= 1000; m++)
		for (int s : {0, 10, 40})
		{
			const float v = (float) std::ldexp(m + 0.5, -s);
			const double scale = std::ldexp(1.0, s);
			ASSERT_EQ((long long) fixed_point(v, scale), std::llrint((double) v * scale)) << m;
			ASSERT_EQ((long long) fixed_point(v, scale) % 2, 0) << m;
		}
}

TEST(CentroidSums, ScaleKeepsValuesAndSumsInRangeAndUsesIt)
{
	for (int64_t n : {(int64_t) 1, (int64_t) 2, (int64_t) 1000, (int64_t) 1 << 20, (int64_t) 10000000,
					  ((int64_t) 1 << 31) - 2})
		for (float m : {0.0f, 1.4e-45f, 1e-30f, 0.75f, 1.0f, 1.5f, 3e5f, 1.6e17f})
		{
			SCOPED_TRACE("n=" + std::to_string(n) + " max=" + std::to_string(m));
			const double s = fixed_point_scale(n, m);
			int			e;
			ASSERT_EQ(std::frexp(s, &e), 0.5);	/* a power of two */
			int			e_n;
			std::frexp((double) n + 1.0, &e_n);
			const double top = std::ldexp(1.0, std::min(50, 61 - e_n));
			EXPECT_LT((double) m * s, top);
			EXPECT_LT((double) n * m * s, std::ldexp(1.0, 61));	/* n values at the maximum */
			if (m > 0)
			{
				EXPECT_GE((double) m * s, top / 2);
			}
		}
}

TEST(CentroidSums, MovedRowsGiveTheBitsOfSummingAfresh)
{
	std::mt19937 gen(7);
	std::normal_distribution<float> z(0, 1);
	for (int32_t d : {1, 2, 3, 4, 5, 17})
	{
		SCOPED_TRACE("d=" + std::to_string(d));
		const int32_t n = 5003, k = 7;
		std::vector<float> x((size_t) n * d);
		for (int32_t i = 0; i < n; i++)
			for (int32_t j = 0; j < d; j++)	/* columns 10^-6 .. 10^6 */
				x[(size_t) i * d + j] = z(gen) * (float) std::pow(10.0, (j % 5) * 3 - 6);
		std::vector<double> scale(d);
		for (int32_t j = 0; j < d; j++)
		{
			float		top = 0;
			for (int32_t i = 0; i < n; i++)
				top = std::max(top, std::fabs(x[(size_t) i * d + j]));
			scale[j] = fixed_point_scale(n, top);
		}
		std::vector<int32_t> before(n), after(n), rows, from;
		for (int32_t i = 0; i < n; i++)
		{
			before[i] = (int32_t) (gen() % k);
			after[i] = gen() % 4 ? before[i] : (int32_t) (gen() % k);
			if (after[i] != before[i])
			{
				rows.push_back(i);
				from.push_back(before[i]);
			}
		}
		/* independent: llrint per value, summed as signed integers */
		std::vector<long long> want((size_t) k * d, 0);
		for (int32_t i = 0; i < n; i++)
			for (int32_t j = 0; j < d; j++)
				want[(size_t) after[i] * d + j] += std::llrint((double) x[(size_t) i * d + j] * scale[j]);
		std::vector<uint64_t> moved((size_t) k * d, 0), fresh((size_t) k * d, 0), listed((size_t) k * d, 0);
		pgkm::add_rows_fixed(x.data(), n, d, before.data(), scale.data(), moved.data());
		pgkm::move_rows_fixed(x.data(), d, rows.data(), from.data(), (int32_t) rows.size(), after.data(),
							  scale.data(), moved.data());
		pgkm::add_rows_fixed(x.data(), n, d, after.data(), scale.data(), fresh.data());
		std::vector<int32_t> all(n);
		for (int32_t i = 0; i < n; i++)
			all[i] = i;
		for (int32_t j0 = 0; j0 < d; j0 += 3)	/* feature slices */
			pgkm::add_listed_rows(x.data(), d, j0, std::min(d, j0 + 3), all.data(), n, after.data(),
								  scale.data(), listed.data());
		for (size_t t = 0; t < want.size(); t++)
		{
			ASSERT_EQ((long long) moved[t], want[t]) << t;
			ASSERT_EQ((long long) fresh[t], want[t]) << t;
			ASSERT_EQ((long long) listed[t], want[t]) << t;
		}
	}
}

/*
 * Columns of 10^6, 10^-6 and 10^-3 with one outlier of 10^3: each centroid
 * within the column's resolution (half of 1 / scale) of the long double
 * mean of its rows, after the first pass (every row summed) and after the
 * second (only the moved rows); the same bits at 1 and 3 threads and with
 * the clusters split among the threads.
 */
TEST(CentroidSums, DeviceMeansExactWithinTheResolutionOnMixedScales)
{
	const int32_t d = 3, k = 5;
	const int64_t n = 20011;
	std::mt19937 gen(11);
	std::normal_distribution<float> z(0, 1);
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
	{
		x[(size_t) i * d] = 1e6f * z(gen) + 3e6f * (float) (i % 3);
		x[(size_t) i * d + 1] = 1e-6f * z(gen);
		x[(size_t) i * d + 2] = 1e-3f * z(gen);
	}
	x[(size_t) 777 * d + 2] = 1e3f;
	std::vector<double> mean(d, 0.0), scale(d);
	std::vector<float> maxabs(d, 0.0f);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			maxabs[j] = std::max(maxabs[j], std::fabs(x[(size_t) i * d + j]));
	for (int32_t j = 0; j < d; j++)
		scale[j] = fixed_point_scale(n, maxabs[j]);
	std::vector<double> init;
	for (int64_t r : {0, 1, 2, 3, 777})
		init.insert(init.end(), x.begin() + r * d, x.begin() + (r + 1) * d);
	std::vector<std::vector<double>> first;
	for (int64_t budget : {(int64_t) -1, (int64_t) 0})
		for (int threads : {1, 3})
		{
			SCOPED_TRACE(std::to_string(threads) + " threads" + (budget ? "" : ", split sums"));
			const int64_t was = pgkm_internal_set_worker_sums_budget(budget);
			pgkm::ThreadPool pool(threads, nullptr, nullptr);
			auto		dev = pgkm::make_cpu_device(x.data(), n, d, k, mean.data(), maxabs.data(), &pool);
			std::vector<double> c = init, prev = init;
			std::vector<int64_t> sizes(k);
			std::vector<std::vector<double>> got;
			dev->set_centroids(c.data(), k);
			for (int pass = 0; pass < 2; pass++)
			{
				pgkm::IterStats st;
				dev->iterate(&st, c.data(), sizes.data());
				std::vector<long double> sum((size_t) k * d, 0);
				std::vector<int64_t> count(k, 0);
				for (int64_t i = 0; i < n; i++)
				{
					const int32_t l = pgkm_test::nearest_fp64(&x[(size_t) i * d], prev.data(), k, d);
					count[l]++;
					for (int32_t j = 0; j < d; j++)
						sum[(size_t) l * d + j] += x[(size_t) i * d + j];
				}
				for (int32_t cl = 0; cl < k; cl++)
				{
					ASSERT_EQ(sizes[cl], count[cl]) << "pass " << pass << " cluster " << cl;
					for (int32_t j = 0; j < d; j++)
					{
						const double exact = (double) (sum[(size_t) cl * d + j] / count[cl]);
						EXPECT_NEAR(c[(size_t) cl * d + j], exact, 0.5 / scale[j] + 4e-16 * std::fabs(exact))
							<< "pass " << pass << " cluster " << cl << " feature " << j;
					}
				}
				dev->set_centroids(c.data(), k);
				prev = c;
				got.push_back(c);
			}
			pgkm_internal_set_worker_sums_budget(was);
			if (first.empty())
				first = got;
			else
				EXPECT_EQ(got, first);	/* bitwise */
		}
}

/*
 * Under a memory limit that leaves no room for the workers' own sums (but
 * room for the rest), the estimate leaves them out and the run splits the
 * clusters instead: the same bits as without a limit.
 */
TEST(CentroidSums, MemoryLimitLeavesOutTheWorkersSumsNotTheRun)
{
	const int32_t d = 40, k = 50, threads = 3;
	const std::vector<float> x = pgkm_test::blobs(3000, d, 6, 21, 2.0, 6.0);
	pgkm_options o = pgkm_test::cpu_options(k);
	o.n_threads = threads;
	o.max_iter = 8;
	o.tol = 0;
	const int64_t n = (int64_t) (x.size() / d);
	const int64_t unlimited = pgkm_estimate_bytes(n, d, &o);
	const pgkm_test::EngineResult free_run = pgkm_test::run_engine(x, d, o);
	o.memory_limit = unlimited - 1;
	EXPECT_EQ(pgkm_estimate_bytes(n, d, &o), unlimited - (int64_t) threads * k * d * 8);
	const pgkm_test::EngineResult tight = pgkm_test::run_engine(x, d, o);
	ASSERT_EQ(free_run.status, PGKM_DONE) << free_run.err;
	ASSERT_EQ(tight.status, PGKM_DONE) << tight.err;
	EXPECT_EQ(tight.labels, free_run.labels);
	EXPECT_EQ(tight.centroids, free_run.centroids);	/* bitwise */
	EXPECT_EQ(tight.iterations, free_run.iterations);
}

/*
 * The sizes come from the rows that moved (label_sizes_ plus each pass's
 * changes): after every pass they are the counts of the fp64 nearest labels
 * of the centroids the pass used, through passes where few rows move, a
 * restart from other centroids (as a next n_init run), fewer centroids than
 * before (as after dropping empty clusters) and the final assignment, which
 * must not change what the next pass counts from; at d = 3 (the direct
 * kernel) and d = 12 (the tiled one, with kept row distances), 1 and 3
 * threads.
 */
TEST(CentroidSums, DeviceSizesFollowTheMovedRows)
{
	const int64_t n = 6007;
	for (int32_t d : {3, 12})
		for (int threads : {1, 3})
		{
			SCOPED_TRACE("d " + std::to_string(d) + ", " + std::to_string(threads) + " threads");
			const int32_t kmax = 7;
			const std::vector<float> x = pgkm_test::blobs(n, d, kmax, 5);
			std::vector<double> mean(d, 0.0);
			std::vector<float> maxabs(d, 0.0f);
			for (int64_t i = 0; i < n; i++)
				for (int32_t j = 0; j < d; j++)
					maxabs[j] = std::max(maxabs[j], std::fabs(x[(size_t) i * d + j]));
			pgkm::ThreadPool pool(threads, nullptr, nullptr);
			auto		dev = pgkm::make_cpu_device(x.data(), n, d, kmax, mean.data(), maxabs.data(), &pool);
			const auto	counts = [&](const std::vector<double> &c, int32_t k) {
				std::vector<int64_t> count(k, 0);
				for (int64_t i = 0; i < n; i++)
					count[pgkm_test::nearest_fp64(&x[(size_t) i * d], c.data(), k, d)]++;
				return count;
			};
			const auto	start = [&](std::initializer_list<int64_t> rows) {
				std::vector<double> c;
				for (int64_t r : rows)
					c.insert(c.end(), x.begin() + r * d, x.begin() + (r + 1) * d);
				return c;
			};
			/* iterate from c (k centroids) for `passes`, checking each pass's sizes */
			const auto	run = [&](std::vector<double> c, int32_t k, int passes,
								  const char *what) -> std::vector<double> {
				dev->set_centroids(c.data(), k);
				for (int pass = 0; pass < passes; pass++)
				{
					const std::vector<int64_t> want = counts(c, k);
					std::vector<int64_t> sizes(k, -1);
					pgkm::IterStats st;
					dev->iterate(&st, c.data(), sizes.data());
					EXPECT_EQ(sizes, want) << what << ", pass " << pass;
					if (sizes != want)
						return c;
					dev->set_centroids(c.data(), k);
				}
				return c;
			};
			std::vector<double> c = run(start({0, 1, 2, 3, 4, 5, 6}), kmax, 6, "first run");
			/* the final assignment: its labels' counts, and the next pass still counts right */
			std::vector<int32_t> labels(n);
			std::vector<int64_t> sizes(kmax, -1);
			double		inertia;
			dev->assign(labels.data(), nullptr, sizes.data(), &inertia);
			std::vector<int64_t> from_labels(kmax, 0);
			for (int32_t l : labels)
				from_labels[l]++;
			EXPECT_EQ(sizes, from_labels);
			EXPECT_EQ(sizes, counts(c, kmax));
			run(c, kmax, 2, "after the final assignment");
			run(start({100, 2000, 4000, 5999, 17, 3001, 999}), kmax, 4, "restart");
			run(start({5, 6, 7}), 3, 3, "three centroids");
			run(start({8, 9, 10, 11, 12, 13, 14}), kmax, 3, "seven again");
		}
}

/*
 * A column whose small values are finer than its sums' grid (0 and 1 beside
 * 1e16, 16 a step at n = 3; groups 0-45 beside 1e16): the run works on the
 * data rounded to the grid, so each centroid is its rows' mean and the run
 * reaches a fixed point (before, the assignment saw 1 where the sums saw 0,
 * and Lloyd cycled to max_iter with its inertia rising to 4e25). Every
 * method, as the fp64 reference on the rounded data.
 */
TEST(CentroidSums, ValuesFinerThanTheGridAreRoundedToIt)
{
	const std::vector<float> tiny = {0.0f, 1.0f, 1e16f};
	std::vector<float> groups;
	for (int i = 1; i <= 1000; i++)
		groups.push_back((float) ((i % 5) * 10 + (i % 7) * 0.1));
	groups.push_back(1e16f);
	struct Case
	{
		const std::vector<float> *x;
		int32_t		k;
	};
	for (const Case &c : {Case {&tiny, 3}, Case {&groups, 6}})
	{
		const std::vector<float> g = pgkm_test::ref_on_sum_grid(*c.x, 1);
		for (int method : {PGKM_METHOD_LLOYD, PGKM_METHOD_HAMERLY, PGKM_METHOD_ELKAN,
						   PGKM_METHOD_SORT, PGKM_METHOD_YINYANG, PGKM_METHOD_AUTO})
		{
			pgkm_options o = pgkm_test::cpu_options(c.k);
			o.method = method;
			o.tol = 0;
			pgkm_test::EngineResult r = pgkm_test::run_engine(*c.x, 1, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			EXPECT_TRUE(r.converged) << "k " << c.k << " method " << method;
			EXPECT_LT(r.iterations, 20) << method;
			/* a fixed point of Lloyd on the rounded data: means of their rows, rows at their nearest */
			std::vector<double> sum(r.k, 0.0);
			std::vector<int64_t> cnt(r.k, 0);
			double		inertia = 0;
			for (size_t i = 0; i < g.size(); i++)
			{
				sum[r.labels[i]] += g[i];
				cnt[r.labels[i]]++;
				const double c0 = r.centroids[r.labels[i]];
				inertia += (g[i] - c0) * (g[i] - c0);
				for (int32_t q = 0; q < r.k; q++)
					EXPECT_LE(std::fabs(g[i] - c0), std::fabs(g[i] - r.centroids[q])) << i;
			}
			for (int32_t q = 0; q < r.k; q++)
			{
				ASSERT_GT(cnt[q], 0);
				EXPECT_EQ(r.centroids[q], sum[q] / cnt[q]) << "cluster " << q;
			}
			EXPECT_NEAR(r.inertia, inertia, 1e-9 * (1 + inertia));
			pgkm_test::RefResult ref = pgkm_test::ref_lloyd(*c.x, 1, r.init, 300, 0.0);
			EXPECT_EQ(ref.labels, r.labels) << method;
			EXPECT_EQ(ref.iterations, r.iterations) << method;
		}
	}
}

/*
 * put_on_sum_grid against the reference's rounding, bit for bit: columns of
 * different sizes with tiny values (both signs, zeros, subnormals) strewn
 * at random, n and d that leave partial blocks and lanes, 1 and 3 threads;
 * a second call changes nothing.
 */
TEST(CentroidSums, PutOnTheGridAsTheReference)
{
	std::mt19937_64 g(7);
	for (int32_t d : {1, 3, 7, 17})
		for (int64_t n : {1, 9, 1000, 40001})
			for (int threads : {1, 3})
			{
				std::vector<float> x((size_t) n * d);
				std::uniform_real_distribution<float> u(-1, 1);
				for (size_t i = 0; i < x.size(); i++)
				{
					const int32_t j = (int32_t) (i % d);
					float		v = u(g) * std::ldexp(1.0f, 6 * j - 20);
					switch (g() % 16)
					{
						case 0: v *= 1e-12f; break;
						case 1: v = 0; break;
						case 2: v = -1e-40f; break;
						default: break;
					}
					x[i] = v;
				}
				const std::vector<float> want = pgkm_test::ref_on_sum_grid(x, d);
				const bool	differs = want != x;
				std::vector<float> maxabs(d, 0.0f);
				for (size_t i = 0; i < x.size(); i++)
					maxabs[i % d] = std::max(maxabs[i % d], std::fabs(x[i]));
				pgkm::ThreadPool pool(threads, nullptr, nullptr);
				const bool	changed = pgkm::put_on_sum_grid(x.data(), n, d, maxabs.data(), &pool);
				EXPECT_EQ(changed, differs) << d << " " << n;
				ASSERT_EQ(0, std::memcmp(x.data(), want.data(), x.size() * sizeof(float)))
					<< "d " << d << " n " << n << " threads " << threads;
				EXPECT_FALSE(pgkm::put_on_sum_grid(x.data(), n, d, maxabs.data(), &pool));
			}
}
