/*
 * test_units.cpp: the engine in the caller's units (pgkm_options.shift,
 * scale_log2): results come back unshifted and unscaled in fp64, a power-of-
 * two scale changes nothing but the units, given centroids go in in the
 * caller's units, outputs beyond double's range are PGKM_ERR_RANGE, and
 * float data too large for single-precision distances is refused.
 */
#include "blobs.h"
#include "engine_run.h"
#include "errors.h"
#include "reference.h"
#include "thread_pool.h"
#include "units.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm_test;

namespace
{
std::vector<float>
scaled(const std::vector<float> &x, int e)
{
	std::vector<float> y(x.size());
	for (size_t i = 0; i < x.size(); i++)
		y[i] = std::ldexp(x[i], e);	/* exact: no under- or overflow at these sizes */
	return y;
}
}							/* namespace */

/*
 * The float arithmetic is invariant under a power of two: the same data
 * passed scaled by 2^e with scale_log2 = e gives bit-identical results, on
 * both distance forms and with k-means++.
 */
TEST(Units, PowerOfTwoScaleChangesNothing)
{
	for (int d : {2, 16})
	{
		auto		x = blobs(3000, d, 6, 70 + d, 1.5);
		pgkm_options o = cpu_options(6);
		o.seed = 5;
		EngineResult base = run_engine(x, d, o);
		ASSERT_EQ(base.status, PGKM_DONE) << base.err;
		for (int e : {-30, 30})	/* inside the window the glue keeps: no float underflow */
		{
			auto		y = scaled(x, e);
			o.scale_log2 = e;
			EngineResult r = run_engine(y, d, o);
			ASSERT_EQ(r.status, PGKM_DONE) << r.err;
			EXPECT_EQ(r.labels, base.labels) << "d " << d << " e " << e;
			EXPECT_EQ(r.centroids, base.centroids) << "d " << d << " e " << e;
			EXPECT_EQ(r.init, base.init) << "d " << d << " e " << e;
			EXPECT_EQ(r.dist, base.dist) << "d " << d << " e " << e;
			EXPECT_EQ(r.cluster_inertia, base.cluster_inertia) << "d " << d << " e " << e;
			EXPECT_EQ(r.inertia, base.inertia) << "d " << d << " e " << e;
			EXPECT_EQ(r.iterations, base.iterations);
			ASSERT_EQ(r.progress.size(), base.progress.size());
			for (size_t i = 1; i < r.progress.size(); i++)
				EXPECT_EQ(r.progress[i].inertia, base.progress[i].inertia);
		}
	}
}

/*
 * A shift: x = X - s (exact here) with shift s gives X's results: labels
 * and iterations of the fp64 reference run on x, centroids + s, the same
 * distances and inertia; given centroids are taken in X's units.
 */
TEST(Units, ShiftedDataAnswersInTheCallersUnits)
{
	const int	d = 3, k = 4;
	auto		x = blobs(2000, d, k, 21, 1.0);
	const std::vector<double> shift = {1.0e6, -2.5e5, 4096.0};
	std::vector<double> init_x = pick_rows(x, d, k, 3);	/* in x's units */
	std::vector<double> init_caller(init_x);
	for (size_t i = 0; i < init_caller.size(); i++)
		init_caller[i] += shift[i % d];
	pgkm_options o = cpu_options(k);
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init_caller.data();
	o.shift = shift.data();
	o.tol = 0;
	EngineResult r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	RefResult	ref = ref_lloyd(x, d, init_x, o.max_iter, 0);
	EXPECT_EQ(r.labels, ref.labels);
	EXPECT_EQ(r.iterations, ref.iterations);
	for (size_t i = 0; i < ref.centers.size(); i++)
	{
		EXPECT_EQ(r.centroids[i], ref.centers[i] + shift[i % d]) << i;
		EXPECT_EQ(r.init[i], init_caller[i]) << i;
	}
	EXPECT_NEAR(r.inertia, ref.inertia, 1e-12 * ref.inertia);
}

/* Squared sums beyond double's range are an error, not Infinity; distances too. */
TEST(Units, OutputsBeyondDoubleAreRangeErrors)
{
	const int	d = 2;
	auto		x = blobs(500, d, 3, 9, 1.0);
	pgkm_options o = cpu_options(3);
	o.scale_log2 = -510;		/* x 2^510: distances ~1e154, squared sums beyond 1.8e308 */
	EngineResult r = run_engine(x, d, o);
	EXPECT_EQ(r.status, PGKM_ERR_RANGE) << r.err;
	EXPECT_NE(r.err.find("beyond the range of double precision"), std::string::npos) << r.err;
	/* +-1.35e308 (finite) around a centroid at -0.67e308: a distance of 2e308 */
	const std::vector<float> far = {1.5f, -1.5f, -1.5f, -1.5f};
	pgkm_options o1 = cpu_options(1);
	o1.scale_log2 = -1023;
	r = run_engine(far, 1, o1);
	EXPECT_EQ(r.status, PGKM_ERR_RANGE) << r.err;
	EXPECT_NE(r.err.find("distance of row 0"), std::string::npos) << r.err;
	o.scale_log2 = -500;		/* squared sums ~1e302: fine */
	r = run_engine(x, d, o);
	EXPECT_EQ(r.status, PGKM_DONE) << r.err;
	EXPECT_TRUE(std::isfinite(r.inertia));
	EXPECT_GT(r.inertia, 1e290);
	o.scale_log2 = 1070;		/* tiny: results underflow gracefully, never an error */
	r = run_engine(x, d, o);
	EXPECT_EQ(r.status, PGKM_DONE) << r.err;
}

/*
 * A coordinate that rounds past DBL_MAX is DBL_MAX, not an error: the glue
 * stores DBL_MAX at scale 2^-1023 as the float 2.0 (DBL_MAX's 53 bits round
 * up at 24), whose caller's value 2^1024 overflows, but a mean of finite
 * doubles never exceeds DBL_MAX. Both signs, centroids and initial centroids;
 * the distances stay 0 and the inertia finite.
 */
TEST(Units, CentroidsRoundingPastDoubleAreDoubleMax)
{
	const std::vector<float> x = {2.0f, 0.0f, -2.0f, 2.0f};
	pgkm_options o = cpu_options(3);
	o.scale_log2 = -1023;
	EngineResult r = run_engine(x, 1, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	std::vector<double> c = r.centroids, init = r.init;
	std::sort(c.begin(), c.end());
	std::sort(init.begin(), init.end());
	EXPECT_EQ(c, (std::vector<double>{-DBL_MAX, 0.0, DBL_MAX}));
	EXPECT_EQ(init, c);
	EXPECT_EQ(r.inertia, 0.0);
	for (double v : r.dist)
		EXPECT_EQ(v, 0.0);
	/* a mean that is truly beyond range cannot come from finite data; distances still can */
	o.k = 1;
	r = run_engine(x, 1, o);
	EXPECT_EQ(r.status, PGKM_ERR_RANGE) << r.err;
	EXPECT_EQ(r.err.find("a centroid"), std::string::npos) << r.err;
}

/*
 * A shift of -1e308 and rows up to 1e308: the rows' values less the shift
 * (up to 2e308) are beyond DBL_MAX before the shift is added back, their
 * means are not; the centroids are those means, not DBL_MAX.
 */
TEST(Units, ShiftedCentroidsBeyondDoubleBeforeTheShift)
{
	const double shift = -1e308;
	const int	e = -1019;
	const double big[3] = {-1e308, 0.9e308, 1e308};
	std::vector<float> x;
	for (int g = 0; g < 3; g++)
		for (int r = 0; r < 4; r++)
			x.push_back((float) std::ldexp(0.5 * big[g] - 0.5 * shift, e + 1));
	pgkm_options o = cpu_options(3);
	o.scale_log2 = e;
	o.shift = &shift;
	EngineResult r = run_engine(x, 1, o);
	ASSERT_EQ(r.status, PGKM_DONE) << r.err;
	std::vector<double> c = r.centroids;
	std::sort(c.begin(), c.end());
	for (int g = 0; g < 3; g++)
		EXPECT_NEAR(c[g], big[g], 0x1p-22 * 1e308) << g;	/* 2^-24 of the 2e308 span */
	EXPECT_EQ(r.inertia, 0.0);
}

/* The float kernels need max |x| <= 2^60 / sqrt(12 d); beyond, scaled data is asked for. */
TEST(Units, DataTooLargeForFloatDistancesIsRefused)
{
	std::vector<float> x = {0, 0, 1, 1, 3e18f, 0};
	pgkm_options o = cpu_options(2);
	EngineResult r = run_engine(x, 2, o);
	EXPECT_EQ(r.status, PGKM_ERR_INVALID);
	EXPECT_NE(r.err.find("scale_log2"), std::string::npos) << r.err;
	x[4] = 1e17f;
	r = run_engine(x, 2, o);
	EXPECT_EQ(r.status, PGKM_DONE) << r.err;
}

TEST(Units, BadTransformsAreRejected)
{
	std::vector<float> x = {0, 1, 2, 3};
	pgkm_options o = cpu_options(2);
	o.scale_log2 = 5000;
	EXPECT_EQ(run_engine(x, 1, o).status, PGKM_ERR_INVALID);
	o.scale_log2 = 0;
	const double bad = NAN;
	o.shift = &bad;
	EXPECT_EQ(run_engine(x, 1, o).status, PGKM_ERR_INVALID);
	const double far = 1e30;
	const double init[] = {1e30, 1e30 + 3};
	o.shift = nullptr;
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init;	/* 1e30 from the data: no single-precision distance */
	EngineResult r = run_engine(x, 1, o);
	EXPECT_EQ(r.status, PGKM_ERR_INVALID);
	o.shift = &far;				/* ... but fine when the data sits at 1e30 too */
	EXPECT_EQ(run_engine(x, 1, o).status, PGKM_DONE);
}

/*
 * The distances' conversion on a pool (results_to_callers_units): the same
 * bits as on one thread over several tasks' rows, and the first row beyond
 * double's range named when later tasks hold others too.
 */
TEST(Units, DistancesConvertedOnThreadsAsOnOne)
{
	const int64_t n = 200001;	/* four tasks of 65,536 rows, the last short */
	const pgkm::Units u(nullptr, -300, 2);	/* caller's distances 2^300 times the engine's */
	std::vector<double> base(n);
	for (int64_t i = 0; i < n; i++)
		base[i] = 1.0 + (double) (i % 977) / 7.0;
	std::vector<double> serial = base, threaded = base, ci1 = {3.0, 5.0}, ci2 = ci1;
	double		in1 = 8.0, in2 = 8.0;
	std::vector<double> c1 = {1.0, 2.0, 3.0, 4.0}, c2 = c1;
	pgkm::results_to_callers_units(u, 2, true, serial.data(), n, ci1, in1, {&c1});
	pgkm::ThreadPool pool(3, nullptr, nullptr);
	pgkm::results_to_callers_units(u, 2, true, threaded.data(), n, ci2, in2, {&c2}, &pool);
	EXPECT_EQ(serial, threaded);
	EXPECT_EQ(serial[1], std::ldexp(std::sqrt(base[1]), 300));
	EXPECT_EQ(ci1, ci2);
	EXPECT_EQ(c1, c2);
	/* 2^1100 times the engine's distance overflows; rows 150,000 and 70,000 lie in different tasks */
	const pgkm::Units big(nullptr, -1100, 2);
	for (int64_t first : {int64_t {70000}, int64_t {150000}})
	{
		std::vector<double> dist(n, 0.0), ci = {0.0, 0.0};
		dist[first] = 1.0;
		dist[190000] = 1.0;
		double		inertia = 0;
		std::vector<double> c = {0.0, 0.0};
		try
		{
			pgkm::results_to_callers_units(big, 2, true, dist.data(), n, ci, inertia, {&c}, &pool);
			ADD_FAILURE() << "no error";
		}
		catch (const pgkm::EngineError &e)
		{
			EXPECT_NE(std::string(e.what()).find("the distance of row " + std::to_string(first) + " (0-based)"),
					  std::string::npos) << e.what();
		}
	}
}

/* Distances and squares scaled by a product with a power of two: the bits of ldexp, subnormal and overflowing results too. */
TEST(Units, ScaledDistancesAreLdexpBitForBit)
{
	std::mt19937_64 gen(17);
	std::vector<double> values = {0.0, 5e-324, 2.2250738585072014e-308, 1.0, 3.0, 1.7976931348623157e308};
	for (int i = 0; i < 20000; i++)
	{
		uint64_t	bits = gen() & 0x7fffffffffffffffULL;	/* any finite or not, positive */
		double		v;
		std::memcpy(&v, &bits, 8);
		if (std::isfinite(v))
			values.push_back(v);
	}
	for (int32_t e : {-2200, -1100, -501, -500, -300, -3, 1, 64, 500, 501, 1100, 2200})
	{
		const pgkm::Units u(nullptr, e, 1);
		for (double v : values)
		{
			const double want = std::ldexp(v, -e), want2 = std::ldexp(v, -2 * e);
			const double got = u.distance(v), got2 = u.squared(v);
			ASSERT_EQ(0, std::memcmp(&got, &want, 8)) << "e = " << e << ", v = " << v;
			ASSERT_EQ(0, std::memcmp(&got2, &want2, 8)) << "e = " << e << ", v = " << v;
		}
	}
}
