/*
 * test_kernel_reference.cpp: kernel k-means against the fp64 reference from
 * the same initial labels (every kernel, every init), the linear kernel
 * against Lloyd from the equivalent start, and the rings Lloyd cannot split.
 */
#include "blobs.h"
#include "kernel_test_util.h"
#include "reference.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

TEST(KernelReference, EveryKernelMatchesTheFp64ReferenceFromTheSameLabels)
{
	const int32_t d = 3, k = 4;
	auto		x = blobs(400, d, 4, 21, 1.2, 4.0);
	const int64_t n = (int64_t) x.size() / d;
	struct Case
	{
		const char *name;
		pgkm_options o;
	};
	const Case	cases[] = {
		{"linear", kernel_options(k, PGKM_KERNEL_LINEAR)},
		{"polynomial", kernel_options(k, PGKM_KERNEL_POLYNOMIAL, 0.1, 1.0, 2)},
		{"rbf", kernel_options(k, PGKM_KERNEL_RBF, 0.05)},
		{"rbf default gamma", kernel_options(k, PGKM_KERNEL_RBF)},
		{"sigmoid", kernel_options(k, PGKM_KERNEL_SIGMOID, 0.01, 0.0)},
	};
	/* tol 0.1 and 0.01 stop on the centroid shift, 1e-4 mostly on unchanged labels, max_iter 3 before either */
	for (const Case &c : cases)
		for (double tol : {1e-1, 1e-2, 1e-4, 0.0})
		{
			pgkm_options o = c.o;
			o.tol = tol;
			o.max_iter = tol == 0 ? 3 : 300;
			std::vector<int32_t> init = seeded_labels(n, k, 5);
			EngineResult r = run_from_labels(x, d, o, init);
			expect_matches_reference(r, x, d, o, init, std::string(c.name) + " tol " + std::to_string(tol));
			EXPECT_EQ(r.kernel_gamma, o.gamma > 0 ? o.gamma : 1.0 / d);
			EXPECT_EQ(r.converged != 0, tol != 0);
		}
}

TEST(KernelReference, RandomAndKmeansppInitsMatchFromTheirInitialLabels)
{
	const int32_t d = 2, k = 6;
	auto		x = blobs(500, d, 6, 8, 0.8, 6.0);
	for (int init : {PGKM_INIT_RANDOM, PGKM_INIT_KMEANSPP})
		for (uint64_t seed : {1u, 2u})
		{
			pgkm_options o = kernel_options(k, PGKM_KERNEL_RBF, 0.3);
			o.init = init;
			o.seed = seed;
			EngineResult r = run_engine(x, d, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			expect_matches_reference(r, x, d, o, r.kernel_init_labels,
									 std::string(init == PGKM_INIT_RANDOM ? "random" : "k-means++") +
									 " seed " + std::to_string(seed));
		}
}

/*
 * k-means++'s partition is each row's nearest seed, and the seeds are rows:
 * the initial centroids are the seed rows, each starting cluster's nearest
 * seed is its own, and the init step reports the feature-space potential.
 */
TEST(KernelReference, KmeansppPartitionIsTheNearestSeed)
{
	const int32_t d = 2, k = 5;
	auto		x = blobs(300, d, 5, 4, 1.0, 5.0);
	const int64_t n = (int64_t) x.size() / d;
	pgkm_options o = kernel_options(k, PGKM_KERNEL_RBF, 0.2);
	o.max_iter = 1;
	EngineResult r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	std::vector<double> K = ref_kernel_matrix(x, d, ref_params(o, d));
	std::vector<int64_t> seed_rows(k, -1);
	for (int32_t c = 0; c < k; c++)
		for (int64_t i = 0; i < n && seed_rows[c] < 0; i++)
			if (x[i * d] == (float) r.init[c * d] && x[i * d + 1] == (float) r.init[c * d + 1])
				seed_rows[c] = i;
	double		potential = 0;
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		best = 0;
		double		bd = INFINITY;
		for (int32_t c = 0; c < k; c++)
		{
			ASSERT_GE(seed_rows[c], 0) << "seed " << c << " is not a row";
			const int64_t s = seed_rows[c];
			double		v = K[i * n + i] + K[s * n + s] - 2 * K[i * n + s];
			if (v < bd - 1e-9)
			{
				bd = v;
				best = c;
			}
		}
		EXPECT_EQ(r.kernel_init_labels[i], best) << "row " << i;
		potential += std::max(bd, 0.0);
	}
	EXPECT_NEAR(r.progress[0].inertia, potential, 1e-5 * n);
}

/* Lloyd from the means of a partition = linear kernel k-means from that partition. */
TEST(KernelReference, LinearKernelReproducesLloyd)
{
	const int32_t d = 4, k = 5;
	auto		x = blobs(600, d, 5, 31, 1.5, 5.0);
	const int64_t n = (int64_t) x.size() / d;
	for (double tol : {0.0, 1e-4, 1e-2})
		for (uint64_t seed : {3u, 4u})
		{
			SCOPED_TRACE("tol " + std::to_string(tol) + " seed " + std::to_string(seed));
			std::vector<int32_t> init = seeded_labels(n, k, seed);
			std::vector<double> start = cluster_means(x, d, init, k);
			pgkm_options lo = cpu_options(k);
			lo.init = PGKM_INIT_GIVEN;
			lo.initial_centroids = start.data();
			lo.tol = tol;
			EngineResult lloyd = run_engine(x, d, lo);
			RefResult ref = ref_lloyd(x, d, start, lo.max_iter, tol);
			pgkm_options ko = kernel_options(k, PGKM_KERNEL_LINEAR);
			ko.tol = tol;
			EngineResult kern = run_from_labels(x, d, ko, init);
			ASSERT_EQ(lloyd.status, PGKM_DONE) << lloyd.err;
			ASSERT_EQ(kern.status, PGKM_DONE) << kern.err;
			EXPECT_EQ(kern.labels, ref.labels);
			EXPECT_EQ(kern.labels, lloyd.labels);
			EXPECT_EQ(kern.iterations, ref.iterations);
			EXPECT_EQ(kern.iterations, lloyd.iterations);
			EXPECT_EQ(kern.converged != 0, ref.converged);
			EXPECT_NEAR(kern.inertia, ref.inertia, 1e-6 * ref.inertia);
			/* Lloyd's centroids are the means of the partition the labels were assigned against */
			std::vector<double> members = cluster_means(x, d, kern.kernel_members, k);
			for (size_t i = 0; i < members.size(); i++)
				EXPECT_NEAR(members[i], ref.centers[i], 1e-9 * (1 + std::fabs(ref.centers[i])));
			for (int64_t i = 0; i < n; i++)
				ASSERT_NEAR(kern.dist[i], lloyd.dist[i], 1e-4 * (1 + lloyd.dist[i])) << "row " << i;
		}
}

/* Concentric rings: the RBF kernel recovers them, Lloyd cannot (ARI near 0). */
TEST(KernelReference, RbfRecoversRingsWhereLloydCannot)
{
	std::vector<int32_t> truth;
	auto		x = rings(600, 0.3, 0.05, 17, &truth);
	pgkm_options ko = kernel_options(2, PGKM_KERNEL_RBF, 10.0);
	ko.n_init = 10;
	EngineResult kern = run_engine(x, 2, ko);
	ASSERT_EQ(kern.status, PGKM_DONE) << kern.err;
	pgkm_options lo = cpu_options(2);
	lo.n_init = 10;
	EngineResult lloyd = run_engine(x, 2, lo);
	ASSERT_EQ(lloyd.status, PGKM_DONE) << lloyd.err;
	double		ari_kernel = adjusted_rand_index(kern.labels, truth);
	double		ari_lloyd = adjusted_rand_index(lloyd.labels, truth);
	RecordProperty("ari_kernel", std::to_string(ari_kernel));
	RecordProperty("ari_lloyd", std::to_string(ari_lloyd));
	EXPECT_GE(ari_kernel, 0.99);
	EXPECT_LT(ari_lloyd, 0.1);
}
