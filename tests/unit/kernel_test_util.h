/*
 * kernel_test_util.h: what the kernel k-means unit tests share: options,
 * seeded initial labels, and the check of an engine result against the
 * fp64 reference (tests/common/kernel_reference.h) from the same start.
 */
#ifndef PGKM_KERNEL_TEST_UTIL_H
#define PGKM_KERNEL_TEST_UTIL_H

#include "engine_run.h"
#include "kernel_reference.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace pgkm_test
{

/* CPU options for method KERNEL with the given kernel (gamma 0 = 1/d). */
inline pgkm_options
kernel_options(int32_t k, int kind, double gamma = 0, double coef0 = 1, int degree = 3)
{
	pgkm_options o = cpu_options(k);
	o.method = PGKM_METHOD_KERNEL;
	o.kernel = kind;
	o.gamma = gamma;
	o.coef0 = coef0;
	o.degree = degree;
	return o;
}

inline RefKernel
ref_params(const pgkm_options &o, int32_t d)
{
	return RefKernel {o.kernel, o.gamma > 0 ? o.gamma : 1.0 / d, o.coef0, o.degree};
}

/* Uniform labels in 0..k-1 (std::mt19937_64, independent of the engine's generator). */
inline std::vector<int32_t>
seeded_labels(int64_t n, int32_t k, uint64_t seed)
{
	std::mt19937_64 g(seed);
	std::vector<int32_t> l(n);
	for (auto &v : l)
		v = (int32_t) (g() % (uint64_t) k);
	return l;
}

/* Input-space means (fp64, k x d) of the rows of each cluster of labels (-1 = none). */
inline std::vector<double>
cluster_means(const std::vector<float> &x, int32_t d, const std::vector<int32_t> &labels, int32_t k)
{
	std::vector<double> m((size_t) k * d, 0.0);
	std::vector<int64_t> cnt(k, 0);
	for (size_t i = 0; i < labels.size(); i++)
	{
		if (labels[i] < 0)
			continue;
		cnt[labels[i]]++;
		for (int32_t j = 0; j < d; j++)
			m[(size_t) labels[i] * d + j] += x[i * d + j];
	}
	for (int32_t c = 0; c < k; c++)
		for (int32_t j = 0; j < d; j++)
			m[(size_t) c * d + j] /= cnt[c] > 0 ? (double) cnt[c] : 1.0;
	return m;
}

/*
 * The engine result r of a run started from init must equal the fp64
 * reference from init: labels, the member partition, iterations,
 * convergence, repairs exactly; every distance, centroid norm, per-cluster
 * inertia and the objective within `rel` of the kernel's scale (max K_ii);
 * the input-space centroids are the means of the final clusters.
 */
inline void
expect_matches_reference(const EngineResult &r, const std::vector<float> &x, int32_t d,
						 const pgkm_options &o, const std::vector<int32_t> &init,
						 const std::string &what, double rel = 1e-5)
{
	SCOPED_TRACE(what);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	const int64_t n = (int64_t) x.size() / d;
	const int32_t k = o.k;
	std::vector<double> K = ref_kernel_matrix(x, d, ref_params(o, d));
	RefKernelResult ref = ref_kernel_kmeans(K, x, d, init, k, o.max_iter, o.tol);
	ASSERT_EQ(r.k, k) << "no cluster may be dropped in these cases";
	double		scale = 0;
	for (int64_t i = 0; i < n; i++)
		scale = std::max(scale, std::fabs(K[(size_t) i * n + i]));
	const double tol = rel * scale;
	EXPECT_EQ(r.iterations, ref.iterations);
	EXPECT_EQ(r.converged != 0, ref.converged);
	EXPECT_EQ(r.repairs, ref.repairs);
	ASSERT_EQ(r.kernel_init_labels, ref.init);
	int64_t		label_diff = 0, member_diff = 0;
	for (int64_t i = 0; i < n; i++)
	{
		label_diff += r.labels[i] != ref.labels[i];
		member_diff += r.kernel_members[i] != ref.members[i];
	}
	EXPECT_EQ(label_diff, 0);
	EXPECT_EQ(member_diff, 0);
	if (label_diff || member_diff)
		return;
	for (int64_t i = 0; i < n; i++)
		ASSERT_NEAR(r.dist[i] * r.dist[i], std::max(ref.dist2[i], 0.0), tol) << "row " << i;
	EXPECT_NEAR(r.inertia, ref.inertia, tol * n);
	std::vector<double> ci(k, 0.0);
	for (int64_t i = 0; i < n; i++)
		ci[ref.labels[i]] += std::max(ref.dist2[i], 0.0);
	for (int32_t c = 0; c < k; c++)
	{
		std::vector<int32_t> rows;
		for (int64_t i = 0; i < n; i++)
			if (ref.members[i] == c)
				rows.push_back((int32_t) i);
		EXPECT_EQ(r.kernel_member_sizes[c], (int64_t) rows.size());
		double		norm = 0;	/* ||c||^2 = 1/|L|^2 sum_{a,b in L} K_ab */
		for (int32_t a : rows)
			for (int32_t b : rows)
				norm += K[(size_t) a * n + b];
		norm /= (double) rows.size() * (double) rows.size();
		EXPECT_NEAR(r.kernel_norms[c], norm, tol) << "cluster " << c;
		EXPECT_NEAR(r.cluster_inertia[c], ci[c], tol * n) << "cluster " << c;
	}
	std::vector<double> means = cluster_means(x, d, ref.labels, k);
	for (size_t i = 0; i < means.size(); i++)
		EXPECT_NEAR(r.centroids[i], means[i], 1e-9 * (1 + std::fabs(means[i])));
}

/* Two runs that must be the same bit for bit (labels, partitions, distances, norms, progress). */
inline void
expect_same_run(const EngineResult &a, const EngineResult &b, const std::string &what)
{
	SCOPED_TRACE(what);
	ASSERT_EQ(a.status, PGKM_DONE) << a.err;
	ASSERT_EQ(b.status, PGKM_DONE) << b.err;
	EXPECT_EQ(a.labels, b.labels);
	EXPECT_EQ(a.kernel_members, b.kernel_members);
	EXPECT_EQ(a.kernel_init_labels, b.kernel_init_labels);
	EXPECT_EQ(a.iterations, b.iterations);
	EXPECT_EQ(a.best_run, b.best_run);
	EXPECT_EQ(a.dist, b.dist);
	EXPECT_EQ(a.inertia, b.inertia);
	EXPECT_EQ(a.cluster_inertia, b.cluster_inertia);
	EXPECT_EQ(a.kernel_norms, b.kernel_norms);
	EXPECT_EQ(a.kernel_gamma, b.kernel_gamma);
	ASSERT_EQ(a.progress.size(), b.progress.size());
	for (size_t i = 0; i < a.progress.size(); i++)
	{
		/* NaN: an init step that computes no potential (random or given labels) */
		EXPECT_TRUE(a.progress[i].inertia == b.progress[i].inertia ||
					(std::isnan(a.progress[i].inertia) && std::isnan(b.progress[i].inertia)))
			<< "step " << i << ": " << a.progress[i].inertia << " vs " << b.progress[i].inertia;
	}
}

/* A run from given initial labels. */
inline EngineResult
run_from_labels(const std::vector<float> &x, int32_t d, pgkm_options o,
				const std::vector<int32_t> &init)
{
	o.init = PGKM_INIT_GIVEN;
	o.initial_labels = init.data();
	return run_engine(x, d, o);
}

}							/* namespace pgkm_test */

#endif							/* PGKM_KERNEL_TEST_UTIL_H */
