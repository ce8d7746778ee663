/*
 * test_label_bound.cpp: the GPU label test (cuda/label_bound.h) on the host,
 * no GPU needed. The GEMM path's form (rows shifted exactly by exact_shift,
 * centroids by the same shift, ||c'||^2 - 2 x'.c') computed in float as the
 * plugin's kernels and an fp32 SGEMM may compute it (two summation orders,
 * with and without FMA), on near-tie rows: whenever a centroid's float value
 * is above the limit of the row's float best, its sqdist_exact must be
 * strictly larger than the best's (the limit never drops the exact label).
 * The data must also reach the bound (undecided rows) and defeat the float
 * argmin on some rows, or the test proves nothing. The shift must be exact
 * on every value and remove a large offset. The other forms are the CPU
 * engine's, tested in tests/unit/test_exact_labels.cpp.
 */
#include "exact_distance.h"
#include "label_bound.h"
#include "near_ties.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace pgkm_cuda;

/* __double2float_ru */
static float
float_up(double v)
{
	float		f = (float) v;
	return (double) f < v ? std::nextafter(f, INFINITY) : f;
}

TEST(LabelBound, ShiftedFormNeverDropsTheExactLabel)
{
	struct S { int d, k; double offset; };
	for (S s : {S {16, 40, 0}, S {64, 100, 5}, S {200, 30, 1000}, S {520, 24, 100}})
	{
		SCOPED_TRACE("d=" + std::to_string(s.d) + " k=" + std::to_string(s.k));
		const int	d = s.d, k = s.k;
		pgkm_test::NearTies t = pgkm_test::near_ties(1500, d, k, s.offset, 40 + d);
		const int64_t n = (int64_t) t.x.size() / d;
		std::vector<float> shift(d), cp((size_t) k * d), bias(k), xs(t.x.size());
		int64_t		shifted = 0;
		for (int j = 0; j < d; j++)	/* as data.cu picks it */
		{
			double		m = 0;
			float		lo = INFINITY, hi = -INFINITY;
			for (int64_t i = 0; i < n; i++)
			{
				const float v = t.x[(size_t) i * d + j];
				m += v;
				lo = std::fmin(lo, v);
				hi = std::fmax(hi, v);
			}
			shift[j] = exact_shift(lo, hi, m / n);
			shifted += shift[j] != 0;
			for (int64_t i = 0; i < n; i++)
			{
				const float v = t.x[(size_t) i * d + j], w = v - shift[j];
				ASSERT_EQ((double) w, (double) v - shift[j]) << "x - s not exact";
				xs[(size_t) i * d + j] = w;
			}
		}
		if (s.offset >= 100)
		{
			EXPECT_EQ(shifted, d) << "every column has a large common offset";
		}
		for (int c = 0; c < k; c++)	/* as pass.cu uploads them */
		{
			double		nrm = 0;
			for (int j = 0; j < d; j++)
			{
				const float v = (float) (t.c[(size_t) c * d + j] - (double) shift[j]);
				cp[(size_t) c * d + j] = v;
				nrm += (double) v * v;
			}
			bias[c] = (float) nrm;
		}
		const LabelTest test =
			label_test(PATH_GEMM, PRODUCT_FP32, t.c.data(), shift.data(), cp.data(), bias.data(), k, d);
		ASSERT_EQ(test.form, FORM_SHIFTED);
		const LabelTest test3 =
			label_test(PATH_GEMM, PRODUCT_3XTF32, t.c.data(), shift.data(), cp.data(), bias.data(), k, d);
		EXPECT_GT(test3.kxc, test.kxc);
		int64_t		dropped = 0, undecided = 0, float_wrong = 0;
		std::vector<float> v(k);
		for (int order = 0; order < 2; order++)
			for (int64_t i = 0; i < n; i++)
			{
				const float *x = t.x.data() + (size_t) i * d, *xk = xs.data() + (size_t) i * d;
				double		y2 = 0;	/* as row_norms computes it */
				for (int j = 0; j < d; j++)
					y2 += (double) xk[j] * xk[j];
				const double up = 1 + 4.0 * (d + 2) * 0x1p-53;
				int			b = 0;
				for (int c = 0; c < k; c++)
				{
					const float *cc = cp.data() + (size_t) c * d;
					float		dot = 0;
					if (order == 0)	/* one FMA chain in feature order */
						for (int j = 0; j < d; j++)
							dot = std::fmaf(xk[j], cc[j], dot);
					else		/* reverse order, products rounded */
						for (int j = d - 1; j >= 0; j--)
							dot = dot + xk[j] * cc[j];
					v[c] = bias[c] + -2.0f * dot;
					if (v[c] < v[b])
						b = c;
				}
				float		second = INFINITY;
				for (int c = 0; c < k; c++)
					if (c != b)
						second = std::fmin(second, v[c]);
				const double lim = label_limit(test, v[b], float_up(y2 * up));
				undecided += !(second > lim);
				const double rb = pgkm::sqdist_exact(x, t.c.data() + (size_t) b * d, d);
				int			exact = 0;
				double		re = INFINITY;
				for (int c = 0; c < k; c++)
				{
					const double rc = pgkm::sqdist_exact(x, t.c.data() + (size_t) c * d, d);
					if (rc < re)
					{
						re = rc;
						exact = c;
					}
					if (c != b && v[c] > lim && !(rc > rb))
						dropped++;
				}
				float_wrong += exact != b;
			}
		EXPECT_EQ(dropped, 0) << "centroids above the limit that are not further in fp64";
		EXPECT_GT(undecided, 0);
		EXPECT_GT(float_wrong, 0) << "the float argmin was right everywhere: the data does not test the bound";
		printf("    d=%d k=%d offset %g: %d of %d columns shifted; %lld rows x 2 orders, %lld left to fp64, float "
			   "argmin wrong on %lld\n", d, k, s.offset, (int) shifted, d, (long long) n, (long long) undecided,
			   (long long) float_wrong);
	}
}

/*
 * float_centroid_radius (the decide kernel's float level) bounds every
 * ||c - float(c)||, computed here in long double, and is not loose by more
 * than its rounding; a centroid beyond float's range makes it infinite.
 */
TEST(LabelBound, FloatCentroidRadiusBoundsEveryCentroid)
{
	const int	k = 50, d = 300;
	std::vector<double> c((size_t) k * d);
	uint64_t	s = 7;
	for (auto &v : c)
	{
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		v = ((double) (s >> 11) * 0x1p-53 - 0.5) * std::ldexp(1.0, (int) (s % 40) - 20);
	}
	const double r = float_centroid_radius(c.data(), k, d);
	long double worst = 0;
	for (int ci = 0; ci < k; ci++)
	{
		long double s2 = 0;
		for (int j = 0; j < d; j++)
		{
			const long double t = (long double) c[(size_t) ci * d + j] - (long double) (float) c[(size_t) ci * d + j];
			s2 += t * t;
		}
		worst = std::max(worst, sqrtl(s2));
	}
	EXPECT_GT(worst, 0.0L);
	EXPECT_GE((long double) r, worst);
	EXPECT_LE((long double) r, worst * (1 + 1e-10L));
	c[17] = 1e39;				/* float(c) = inf */
	EXPECT_TRUE(std::isinf(float_centroid_radius(c.data(), k, d)));
}
