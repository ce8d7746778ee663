/*
 * test_kernel_units.cpp: kernel k-means in the caller's units
 * (pgkm_options.shift, scale_log2): the kernel of the caller's values X,
 * whatever transform x = (X - shift) 2^e the caller stored. A power-of-two
 * scale changes nothing (gamma is taken in X's units: the same K bit for
 * bit, the linear kernel's distances converted back exactly); a shift
 * changes no result of the linear and RBF kernels but the centroids'
 * coordinates and is refused for the polynomial and sigmoid kernels;
 * pgkm_kernel_nearest brings a row in X's units to the fit's and gives
 * every training row its fitted label.
 */
#include "blobs.h"
#include "kernel_test_util.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

/*
 * The same float data x with scale_log2 = e means the caller's values are
 * X = x 2^-e; with gamma given in X's units (gamma 2^2e) K is the same, so
 * the run is the same bit for bit: labels, partitions, iterations, the
 * feature-space distances of the RBF, polynomial and sigmoid kernels; the
 * linear kernel's distances and inertia and every centroid come back in X's
 * units (exact powers of two). For each kernel and both inits, e from
 * values near 1e-150 to near 1e90.
 */
TEST(KernelUnits, PowerOfTwoScaleChangesNothing)
{
	const int32_t d = 3, k = 4;
	auto		x = blobs(600, d, k, 31, 1.2, 6.0);
	for (int kind : KERNEL_KINDS)
		for (int init : {PGKM_INIT_RANDOM, PGKM_INIT_KMEANSPP})
		{
			pgkm_options o = blob_kernel_options(kind, k);
			o.init = init;
			o.seed = 8;
			EngineResult base = run_engine(x, d, o);
			ASSERT_EQ(base.status, PGKM_DONE) << base.err;
			const bool	linear = kind == PGKM_KERNEL_LINEAR;
			const double gamma = o.gamma;
			for (int e : {-300, -60, 70, 500})
			{
				o.scale_log2 = e;
				o.gamma = linear ? 0 : std::ldexp(gamma, 2 * e);
				EngineResult r = run_engine(x, d, o);
				const std::string what = "kernel " + std::to_string(kind) + " init " +
					std::to_string(init) + " e " + std::to_string(e);
				SCOPED_TRACE(what);
				ASSERT_EQ(r.status, PGKM_DONE) << r.err;
				EXPECT_EQ(r.labels, base.labels);
				EXPECT_EQ(r.kernel_members, base.kernel_members);
				EXPECT_EQ(r.kernel_init_labels, base.kernel_init_labels);
				EXPECT_EQ(r.iterations, base.iterations);
				EXPECT_EQ(r.kernel_norms, base.kernel_norms);	/* the engine's units */
				EXPECT_EQ(r.kernel_gamma, linear ? base.kernel_gamma : o.gamma);
				const int	de = linear ? -e : 0;	/* distances scale as X for the linear kernel */
				for (size_t i = 0; i < r.dist.size(); i++)
					ASSERT_EQ(r.dist[i], std::ldexp(base.dist[i], de)) << "row " << i;
				EXPECT_EQ(r.inertia, std::ldexp(base.inertia, 2 * de));
				for (size_t c = 0; c < r.cluster_inertia.size(); c++)
					EXPECT_EQ(r.cluster_inertia[c], std::ldexp(base.cluster_inertia[c], 2 * de));
				ASSERT_EQ(r.progress.size(), base.progress.size());
				for (size_t i = 0; i < r.progress.size(); i++)
				{
					if (std::isnan(base.progress[i].inertia))
						continue;	/* the init step of random labels computes none */
					EXPECT_EQ(r.progress[i].inertia, std::ldexp(base.progress[i].inertia, 2 * de));
				}
				for (size_t i = 0; i < r.centroids.size(); i++)
				{
					EXPECT_EQ(r.centroids[i], std::ldexp(base.centroids[i], -e));
					EXPECT_EQ(r.init[i], std::ldexp(base.init[i], -e));
				}
			}
		}
}

/*
 * A shift s (x = X - s): the linear and RBF kernels give the unshifted
 * run's labels, distances and inertia bit for bit, centroids + s in fp64;
 * the polynomial and sigmoid kernels refuse it (their K depends on the
 * origin), a zero shift being no shift.
 */
TEST(KernelUnits, ShiftChangesOnlyCoordinatesOrIsRefused)
{
	const int32_t d = 3, k = 4;
	auto		x = blobs(500, d, k, 47, 1.0, 5.0);
	const std::vector<double> shift = {1.7e9, -3.25e5, 0.0};
	const std::vector<double> zero(d, 0.0);
	for (int kind : KERNEL_KINDS)
	{
		pgkm_options o = blob_kernel_options(kind, k);
		o.seed = 3;
		EngineResult base = run_engine(x, d, o);
		ASSERT_EQ(base.status, PGKM_DONE) << base.err;
		o.shift = shift.data();
		EngineResult r = run_engine(x, d, o);
		if (kind == PGKM_KERNEL_POLYNOMIAL || kind == PGKM_KERNEL_SIGMOID)
		{
			EXPECT_EQ(r.status, PGKM_ERR_INVALID) << kind;
			EXPECT_NE(r.err.find("depends on the origin"), std::string::npos) << r.err;
			o.shift = zero.data();
			expect_same_run(run_engine(x, d, o), base, "zero shift " + std::to_string(kind));
			continue;
		}
		expect_same_run(r, base, "shift, kernel " + std::to_string(kind));
		for (size_t i = 0; i < r.centroids.size(); i++)
		{
			EXPECT_EQ(r.centroids[i], base.centroids[i] + shift[i % d]);
			EXPECT_EQ(r.init[i], base.init[i] + shift[i % d]);
		}
	}
}

/*
 * Linear kernel, scaled: distances and inertia come back in the caller's
 * units (2^-e and 2^-2e of the engine's) and equal the fp64 reference on
 * the caller's values; results beyond double's range are PGKM_ERR_RANGE.
 */
TEST(KernelUnits, LinearDistancesInTheCallersUnits)
{
	const int32_t d = 2, k = 3;
	auto		x = blobs(300, d, k, 5, 0.8, 4.0);
	const int64_t n = (int64_t) x.size() / d;
	std::vector<int32_t> init = seeded_labels(n, k, 4);
	pgkm_options o = blob_kernel_options(PGKM_KERNEL_LINEAR, k);
	o.scale_log2 = -40;			/* X = x 2^40 */
	EngineResult r = run_from_labels(x, d, o, init);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	std::vector<float> X(x.size());
	for (size_t i = 0; i < x.size(); i++)
		X[i] = std::ldexp(x[i], 40);
	std::vector<double> K = ref_kernel_matrix(X, d, ref_params(o, d));
	RefKernelResult ref = ref_kernel_kmeans(K, X, d, init, k, o.max_iter, o.tol);
	ASSERT_EQ(r.labels, ref.labels);
	for (int64_t i = 0; i < n; i++)
		EXPECT_NEAR(r.dist[i], std::sqrt(std::max(ref.dist2[i], 0.0)), 1e-5 * std::ldexp(1.0, 40))
			<< "row " << i;
	EXPECT_NEAR(r.inertia, ref.inertia, 1e-6 * ref.inertia);

	o.scale_log2 = -600;		/* X = x 2^600: squared distances near 2^1200, beyond double */
	EngineResult big = run_from_labels(x, d, o, init);
	EXPECT_EQ(big.status, PGKM_ERR_RANGE) << big.err;
}

/*
 * Prediction with the fit's transform: each training row, given in the
 * caller's units (x 2^-e + s, fp64), predicts its fitted label, for each
 * kernel (shifted where the kernel allows it); a row far enough out that
 * its kernel values overflow is -2, not a silent answer.
 */
TEST(KernelUnits, PredictionInTheCallersUnits)
{
	const int32_t d = 3, k = 4;
	auto		x = blobs(400, d, k, 61, 0.7, 6.0);
	const int64_t n = (int64_t) x.size() / d;
	const std::vector<double> shift = {-2.0e-12, 5.5e-11, 1.0e-14};	/* offsets beyond the spread */
	for (int kind : KERNEL_KINDS)
	{
		pgkm_options o = blob_kernel_options(kind, k);
		o.scale_log2 = 50;		/* X - shift near 2^-50 */
		const bool	shifted = kind == PGKM_KERNEL_LINEAR || kind == PGKM_KERNEL_RBF;
		o.gamma = std::ldexp(o.gamma, 100);	/* the same K in X's units */
		if (shifted)
			o.shift = shift.data();
		EngineResult r = run_engine(x, d, o);
		ASSERT_EQ(r.status, PGKM_DONE) << r.err;
		double		max_d2 = 0;
		for (double v : r.dist)
			max_d2 = std::max(max_d2, v * v);
		for (int64_t i = 0; i < n; i++)
		{
			double		row[3], d2 = -1;
			for (int32_t j = 0; j < d; j++)
				row[j] = std::ldexp((double) x[i * d + j], -50) + (shifted ? shift[j] : 0.0);
			int32_t		c = pgkm_kernel_nearest(&o, x.data(), r.kernel_members.data(), n, d, r.k,
												r.kernel_norms.data(), row, &d2);
			ASSERT_EQ(c, r.labels[i]) << "kernel " << kind << " row " << i;
			ASSERT_NEAR(d2, r.dist[i] * r.dist[i], 1e-5 * max_d2) << "row " << i;
		}
		if (kind == PGKM_KERNEL_LINEAR || kind == PGKM_KERNEL_POLYNOMIAL)
		{
			double		far[3] = {1e300, -1e300, 1e300};
			EXPECT_EQ(pgkm_kernel_nearest(&o, x.data(), r.kernel_members.data(), n, d, r.k,
										  r.kernel_norms.data(), far, nullptr), -2) << kind;
		}
	}
}

/*
 * A training row given in fp64 finer than the buffer's float (an audit's
 * case): 0.49999810606241224 is stored as 0.4999980927, on the far side of
 * the fp64 boundary (0.4999981) between the final centroids -3.8e-6 and 1.
 * Prediction (linear kernel) rounds the row as the fit's buffer did, so it
 * gets its fitted label.
 */
TEST(KernelUnits, PredictionRoundsTheRowAsTheFitsBuffer)
{
	const double fine = 0.49999810606241224;
	std::vector<float> x;
	for (int i = 0; i < 2000; i++)
		x.push_back(0.0f);
	for (int i = 0; i < 2000; i++)
		x.push_back(1.0f);
	x.push_back((float) -0.5076112747192383);
	x.push_back((float) fine);
	const int64_t n = (int64_t) x.size();
	ASSERT_NE((double) (float) fine, fine);
	pgkm_options o = kernel_options(2, PGKM_KERNEL_LINEAR);
	EngineResult r = run_engine(x, 1, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	ASSERT_EQ(r.labels[n - 1], r.labels[0]);	/* fitted with the zeros */
	double		row[1] = {fine};
	EXPECT_EQ(pgkm_kernel_nearest(&o, x.data(), r.kernel_members.data(), n, 1, r.k,
								  r.kernel_norms.data(), row, nullptr), r.labels[n - 1]);
}
