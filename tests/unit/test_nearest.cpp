/*
 * test_nearest.cpp: pgkm_nearest (behind kmeans_predict) for any finite
 * values: the overflow example, extremes of double's range,
 * subnormals, ties to the lowest index, and a randomized comparison with
 * an exact integer reference on values m 2^E (|m| < 2^20) whose exponents
 * span the whole double range.
 */
#include "pgkm_engine.h"

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

TEST(Nearest, HugeCommonTermDoesNotHideTheNearest)
{
	/* the issue: squared distances overflow (1e400) for both centroids */
	const double c[] = {0, 0.5, 0, 100.5};
	const double x[] = {1e200, 100};
	double		dist2 = 0;
	EXPECT_EQ(pgkm_nearest(c, 2, 2, nullptr, nullptr, x, &dist2), 1);
	EXPECT_TRUE(std::isinf(dist2));	/* 1e400 is beyond double: +Infinity, documented */
	/* the same below overflow, where 1e300 absorbs the 1e-10 difference in a plain sum */
	const double x2[] = {1e150, 100};
	EXPECT_EQ(pgkm_nearest(c, 2, 2, nullptr, nullptr, x2, &dist2), 1);
	EXPECT_DOUBLE_EQ(dist2, 1e300);
	/* ... and a huge coordinate that differs decides, however small the difference */
	const double c3[] = {0, 0, 1e-290, 5};
	const double x3[] = {1e300, 0};
	EXPECT_EQ(pgkm_nearest(c3, 2, 2, nullptr, nullptr, x3, nullptr), 1);	/* 1e-290 (1e-290 - 2e300) = -2e10 beats 5 * 5 */
}

TEST(Nearest, ExtremesOfTheDoubleRange)
{
	const double big = DBL_MAX;
	{
		const double c[] = {-big, big, big, -big, 0, 0};
		const double x[] = {big, -big};
		EXPECT_EQ(pgkm_nearest(c, 3, 2, nullptr, nullptr, x, nullptr), 1);
		const double y[] = {-big, big};
		EXPECT_EQ(pgkm_nearest(c, 3, 2, nullptr, nullptr, y, nullptr), 0);
		const double z[] = {1, -1};
		EXPECT_EQ(pgkm_nearest(c, 3, 2, nullptr, nullptr, z, nullptr), 2);
	}
	{
		const double tiny = 4.9406564584124654e-324;	/* the smallest subnormal */
		const double c[] = {0, 0, 2 * tiny, 2 * tiny, 5 * tiny, 0};
		const double x[] = {2 * tiny, tiny};
		double		dist2 = -1;
		EXPECT_EQ(pgkm_nearest(c, 3, 2, nullptr, nullptr, x, &dist2), 1);
		EXPECT_EQ(dist2, 0.0);	/* tiny^2 underflows: the nearest representable */
		const double y[] = {4 * tiny, 0};
		EXPECT_EQ(pgkm_nearest(c, 3, 2, nullptr, nullptr, y, nullptr), 2);
	}
	{
		/* 1e-300 apart centroids next to a 1e300 coordinate they share */
		const double c[] = {1e300, 1e-300, 1e300, 3e-300};
		const double x[] = {-1e300, 2.5e-300};
		EXPECT_EQ(pgkm_nearest(c, 2, 2, nullptr, nullptr, x, nullptr), 1);
	}
}

TEST(Nearest, TiesGoToTheLowestIndex)
{
	const double c[] = {1, 1, 3, 3, 1, 1, 3, 3};
	const double mid[] = {2, 2};
	EXPECT_EQ(pgkm_nearest(c, 4, 2, nullptr, nullptr, mid, nullptr), 0);
	const double near3[] = {3, 2.9};
	EXPECT_EQ(pgkm_nearest(c, 4, 2, nullptr, nullptr, near3, nullptr), 1);
	const double cb[] = {-1e300, 1e300};
	const double zero[] = {0};
	EXPECT_EQ(pgkm_nearest(cb, 2, 1, nullptr, nullptr, zero, nullptr), 0);
	EXPECT_EQ(pgkm_nearest(c, 0, 2, nullptr, nullptr, mid, nullptr), -1);
}

namespace
{
/*
 * A coordinate m 2^(E + o_j): one random E per case over the whole double
 * range, a small offset o_j per feature, |m| < 2^20. The squared distances
 * then differ by 2^(2E) times an integer, exactly computed in __int128.
 */
struct IntCase
{
	int			e;
	std::vector<int> off;		/* per feature, 0..30 */
	std::vector<int64_t> x, c;	/* integer mantissas; c is k x d */
};

__int128
exact_diff(const IntCase &t, int32_t d, int32_t a, int32_t b)
{
	__int128	s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		const __int128 ca = t.c[(size_t) a * d + j], cb = t.c[(size_t) b * d + j], xj = t.x[j];
		s += (ca - cb) * (ca + cb - 2 * xj) * ((__int128) 1 << (2 * t.off[j]));
	}
	return s;
}
}							/* namespace */

TEST(Nearest, RandomizedAgainstAnExactIntegerReference)
{
	std::mt19937_64 gen(42);
	int64_t		cases = 0, ties = 0;
	for (int rep = 0; rep < 4000; rep++)
	{
		const int32_t d = 1 + (int32_t) (gen() % 6), k = 2 + (int32_t) (gen() % 6);
		IntCase		t;
		t.e = (int) (gen() % 2048) - 1074;	/* m 2^(E + o) stays exact: -1074 <= E, E + 30 + 20 < 1024 */
		/* small ranges make exact ties common; wide ones make near-ties */
		const int64_t range = rep % 2 ? 4 : (1 << 20);
		auto		draw = [&]() { return (int64_t) (gen() % (2 * range + 1)) - range; };
		for (int32_t j = 0; j < d; j++)
		{
			t.off.push_back((int) (gen() % 31));
			t.x.push_back(draw());
		}
		for (int32_t i = 0; i < k * d; i++)
			t.c.push_back(draw());
		std::vector<double> xd(d), cd((size_t) k * d);
		for (int32_t j = 0; j < d; j++)
			xd[j] = std::ldexp((double) t.x[j], t.e + t.off[j]);
		for (int32_t i = 0; i < k * d; i++)
			cd[i] = std::ldexp((double) t.c[i], t.e + t.off[i % d]);
		int32_t		want = 0;
		for (int32_t c = 1; c < k; c++)
			if (exact_diff(t, d, c, want) < 0)
				want = c;
		for (int32_t c = want + 1; c < k; c++)
			ties += exact_diff(t, d, c, want) == 0;
		ASSERT_EQ(pgkm_nearest(cd.data(), k, d, nullptr, nullptr, xd.data(), nullptr), want)
			<< "case " << rep << " E " << t.e << " d " << d << " k " << k;
		cases++;
	}
	EXPECT_EQ(cases, 4000);
	EXPECT_GT(ties, 100);		/* the small ranges do make exact ties */
}

TEST(Nearest, SquaredDistanceWithoutOverflow)
{
	const double c[] = {0, 0};
	double		dist2 = 0;
	const double x[] = {3, 4};
	pgkm_nearest(c, 1, 2, nullptr, nullptr, x, &dist2);
	EXPECT_EQ(dist2, 25.0);
	const double y[] = {1e153, -1e153};
	pgkm_nearest(c, 1, 2, nullptr, nullptr, y, &dist2);
	EXPECT_DOUBLE_EQ(dist2, 2e306);
	const double over[] = {1e154, 1e154};	/* 2e308: beyond double */
	pgkm_nearest(c, 1, 2, nullptr, nullptr, over, &dist2);
	EXPECT_TRUE(std::isinf(dist2));
	const double sub[] = {3e-160, 4e-160};	/* 2.5e-319: a subnormal */
	pgkm_nearest(c, 1, 2, nullptr, nullptr, sub, &dist2);
	EXPECT_NEAR(dist2, 2.5e-319, 1e-322);
	/* the difference itself overflows: DBL_MAX - (-DBL_MAX) */
	const double cm[] = {-DBL_MAX, 0};
	const double xm[] = {DBL_MAX, 0};
	pgkm_nearest(cm, 1, 2, nullptr, nullptr, xm, &dist2);
	EXPECT_TRUE(std::isinf(dist2));
	const double cs[] = {-DBL_MAX / 4, 0};
	const double xs[] = {DBL_MAX / 4, 0};	/* difference DBL_MAX / 2: squared is beyond */
	pgkm_nearest(cs, 1, 2, nullptr, nullptr, xs, &dist2);
	EXPECT_TRUE(std::isinf(dist2));
}

/*
 * With the fit's buffer units, x is decided as the float the buffer would
 * hold: 0.49999810606241224 is stored as 0.4999980927 (scale 0, no shift),
 * below the midpoint 0.4999981 of the centroids -3.8e-6 and 1, so it is
 * the first centroid's although x itself is nearer the second. A shift and
 * a scale round the same way in the buffer's units; a value beyond float's
 * range at that scale is taken as it is.
 */
TEST(Nearest, UnitsRoundAsTheBuffer)
{
	const double c[] = {1.0, -3.802788245689857e-06};
	const double x[] = {0.49999810606241224};
	pgkm_options u;
	pgkm_options_default(&u);
	EXPECT_EQ(pgkm_nearest(c, 2, 1, nullptr, nullptr, x, nullptr), 0);
	EXPECT_EQ(pgkm_nearest(c, 2, 1, &u, nullptr, x, nullptr), 1);
	/* the same geometry at an offset, in units of 2^-4 */
	const double shift = 1000;
	const double cs[] = {shift + std::ldexp(1.0, -4), shift + std::ldexp(-3.802788245689857e-06, -4)};
	const double xs[] = {shift + std::ldexp(0.49999810606241224, -4)};
	u.shift = &shift;
	u.scale_log2 = 4;
	EXPECT_EQ(pgkm_nearest(cs, 2, 1, nullptr, nullptr, xs, nullptr), 0);
	EXPECT_EQ(pgkm_nearest(cs, 2, 1, &u, nullptr, xs, nullptr), 1);
	const double far[] = {1e300};
	EXPECT_EQ(pgkm_nearest(cs, 2, 1, &u, nullptr, far, nullptr), 0);
	u.scale_log2 = 100000;			/* a bad transform: -1, no throw */
	EXPECT_EQ(pgkm_nearest(cs, 2, 1, &u, nullptr, xs, nullptr), -1);
}

/*
 * With the fit's sums' grid too (an audit's case: rows 0, 0, 0, 9, 32, 32,
 * 1e16, whose grid step is 16): 9 was clustered as 16, with the 32s, so
 * it is predicted there although 9 itself is nearer the 0s; values at or
 * above 2^24 steps are not touched.
 */
TEST(Nearest, SumsGridRoundsAsTheFit)
{
	const double c[] = {26.666666666666668, 1.0000000272564224e16, 0.0};
	const double x[] = {9.0}, big[] = {1e16};
	pgkm_options u;
	pgkm_options_default(&u);
	const double grid[] = {1.0 / 16};
	EXPECT_EQ(pgkm_nearest(c, 3, 1, &u, nullptr, x, nullptr), 2);
	EXPECT_EQ(pgkm_nearest(c, 3, 1, &u, grid, x, nullptr), 0);
	EXPECT_EQ(pgkm_nearest(c, 3, 1, &u, grid, big, nullptr), 1);
}
