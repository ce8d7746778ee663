/*
 * row_distance_avx512.cpp: the row distance kernel (row_distance.h) for
 * AVX-512: 8 rows per vector, GROUPS vectors of rows in flight. Per row, 8
 * features at a time: x converted to fp64, minus the centroid, squared; the
 * 8 x 8 squares are transposed so that lane b holds row b, then added
 * feature by feature. Below 8 features a row is too short for that:
 * small_rows takes the rows' features straight into lanes. CMakeLists.txt
 * compiles this file alone for AVX-512, with -ffp-contract=off (the set
 * includes FMA).
 */
#include "row_distance.h"

#if defined(__x86_64__)
/* GCC 12's AVX-512 intrinsics start from a self-initialised "undefined" vector (GCC bug 105593). */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>

namespace pgkm
{
namespace
{

constexpr int GROUPS = 4;
constexpr int ROWS = 8 * GROUPS;

/* s[lane b] += q[b][f] for f < NF in order: the 8 x 8 squares transposed to rows in lanes. */
template <int NF>
static inline __m512d
add_transposed(__m512d s, const __m512d q[8])
{
	/* t: pairs of rows interleaved; u: features {f, f + 4} of rows 0-3 or 4-7 by 128-bit lane */
	__m512d		t[8], u[8];
	for (int p = 0; p < 4; p++)
	{
		t[2 * p] = _mm512_unpacklo_pd(q[2 * p], q[2 * p + 1]);	/* features 0 2 4 6 */
		t[2 * p + 1] = _mm512_unpackhi_pd(q[2 * p], q[2 * p + 1]);	/* features 1 3 5 7 */
	}
	for (int h = 0; h < 2; h++)
		for (int o = 0; o < 2; o++)
		{
			const __m512d a = t[4 * h + o], b = t[4 * h + 2 + o];
			u[4 * h + o] = _mm512_shuffle_f64x2(a, b, 0x88);	/* features o, o + 4 */
			u[4 * h + 2 + o] = _mm512_shuffle_f64x2(a, b, 0xdd);	/* features o + 2, o + 6 */
		}
	/* feature f: u[f % 4] of rows 0-3 and u[4 + f % 4] of rows 4-7, half f / 4 */
	for (int f = 0; f < NF; f++)
	{
		const int	i = f & 3;
		const __m512d v = f < 4 ? _mm512_shuffle_f64x2(u[i], u[4 + i], 0x88)
			: _mm512_shuffle_f64x2(u[i], u[4 + i], 0xdd);
		s = _mm512_add_pd(s, v);
	}
	return s;
}

/* The same for the last nf < 8 features (the unused shuffles compiled out). */
static inline __m512d
add_transposed_tail(__m512d s, const __m512d q[8], int nf)
{
	switch (nf)
	{
		case 1:
			return add_transposed<1>(s, q);
		case 2:
			return add_transposed<2>(s, q);
		case 3:
			return add_transposed<3>(s, q);
		case 4:
			return add_transposed<4>(s, q);
		case 5:
			return add_transposed<5>(s, q);
		case 6:
			return add_transposed<6>(s, q);
		default:
			return add_transposed<7>(s, q);
	}
}

static inline __m512d
square_diff(__m256 x, __m512d c)
{
	const __m512d t = _mm512_sub_pd(_mm512_cvtps_pd(x), c);
	return _mm512_mul_pd(t, t);
}

/*
 * Below 8 features: 8 rows in the lanes of one vector, feature j of each
 * taken from the rows' floats (permuted out of the block's 8 d floats, or
 * gathered above 4 features) and from its centroid (permuted out of two
 * registers when k d <= 16, else gathered), so the sum runs lane by lane
 * with no transpose; the last rows past a block of 8 go one at a time.
 */
template <int D>
static void
small_rows(const float *x, int64_t rows, int32_t dd, const double *centroids, int32_t kd,
		   const int32_t *labels, double *out)
{
	const int32_t d = D > 0 ? D : dd;
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256i xoff = _mm256_mullo_epi32(lane, _mm256_set1_epi32(d));
	const bool	cent_in_regs = kd <= 16;
	__m512d		c0 = _mm512_setzero_pd(), c1 = _mm512_setzero_pd();
	if (cent_in_regs)
	{
		c0 = _mm512_maskz_loadu_pd((__mmask8) ((1u << std::min(kd, 8)) - 1), centroids);
		if (kd > 8)
			c1 = _mm512_maskz_loadu_pd((__mmask8) ((1u << (kd - 8)) - 1), centroids + 8);
	}
	int64_t		i0 = 0;
	for (; i0 + 8 <= rows; i0 += 8)
	{
		const __m256i coff = _mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *) (labels + i0)),
												_mm256_set1_epi32(d));
		const float *xb = x + i0 * d;
		__m512		xlo = _mm512_setzero_ps(), xhi = _mm512_setzero_ps();
		if (D > 0 && D <= 4)
		{
			/* the block's 8 D floats, never a float past them */
			xlo = D == 1 ? _mm512_maskz_loadu_ps(0xff, xb) : _mm512_loadu_ps(xb);
			if (D == 3)
				xhi = _mm512_maskz_loadu_ps(0xff, xb + 16);
			if (D == 4)
				xhi = _mm512_loadu_ps(xb + 16);
		}
		__m512d		s = _mm512_setzero_pd();
		for (int32_t j = 0; j < d; j++)
		{
			const __m256i xi = _mm256_add_epi32(xoff, _mm256_set1_epi32(j));
			const __m256 xf = D > 0 && D <= 4
				? _mm512_castps512_ps256(_mm512_permutex2var_ps(xlo, _mm512_castsi256_si512(xi), xhi))
				: _mm256_i32gather_ps(xb, xi, 4);
			const __m256i ci = _mm256_add_epi32(coff, _mm256_set1_epi32(j));
			const __m512d cv = cent_in_regs
				? _mm512_permutex2var_pd(c0, _mm512_cvtepi32_epi64(ci), c1)
				: _mm512_i32gather_pd(ci, centroids, 8);
			const __m512d t = _mm512_sub_pd(_mm512_cvtps_pd(xf), cv);
			s = _mm512_add_pd(s, _mm512_mul_pd(t, t));
		}
		_mm512_storeu_pd(out + i0, s);
	}
	for (; i0 < rows; i0++)
	{
		const float *xr = x + i0 * d;
		const double *cr = centroids + (size_t) labels[i0] * d;
		double		s = 0;
		for (int32_t j = 0; j < d; j++)
		{
			const double t = (double) xr[j] - cr[j];
			s += t * t;
		}
		out[i0] = s;
	}
}

}							/* namespace */

void
row_distance_avx512(const float *x, int64_t rows, int32_t d, const double *centroids,
					const int32_t *labels, double *out)
{
	if (d < 8)
	{
		/* the centroids these rows read: k d floats for the permutes, never read past */
		int32_t		top = 0;
		for (int64_t i = 0; i < rows; i++)
			top = std::max(top, labels[i]);
		const int32_t kd = (top + 1) * d;
		switch (d)
		{
			case 1: small_rows<1>(x, rows, d, centroids, kd, labels, out); return;
			case 2: small_rows<2>(x, rows, d, centroids, kd, labels, out); return;
			case 3: small_rows<3>(x, rows, d, centroids, kd, labels, out); return;
			case 4: small_rows<4>(x, rows, d, centroids, kd, labels, out); return;
			default: small_rows<0>(x, rows, d, centroids, kd, labels, out); return;
		}
	}
	const int32_t d8 = d & ~7, rem = d & 7;
	const __mmask8 mask = (__mmask8) ((1u << rem) - 1);
	for (int64_t i0 = 0; i0 < rows; i0 += ROWS)
	{
		const float *xr[ROWS];
		const double *cr[ROWS];
		const int	nb = row_block<ROWS>(x, rows, d, centroids, labels, i0, xr, cr);
		__m512d		s[GROUPS];
		for (int g = 0; g < GROUPS; g++)
			s[g] = _mm512_setzero_pd();
		for (int32_t j = 0; j < d8; j += 8)
			for (int g = 0; g < GROUPS; g++)
			{
				__m512d		q[8];
				for (int r = 0; r < 8; r++)
					q[r] = square_diff(_mm256_loadu_ps(xr[8 * g + r] + j),
									   _mm512_loadu_pd(cr[8 * g + r] + j));
				s[g] = add_transposed<8>(s[g], q);
			}
		if (rem)
			for (int g = 0; g < GROUPS; g++)
			{
				__m512d		q[8];
				for (int r = 0; r < 8; r++)
					q[r] = square_diff(_mm256_maskz_loadu_ps(mask, xr[8 * g + r] + d8),
									   _mm512_maskz_loadu_pd(mask, cr[8 * g + r] + d8));
				s[g] = add_transposed_tail(s[g], q, rem);
			}
		if (nb == ROWS)
			for (int g = 0; g < GROUPS; g++)
				_mm512_storeu_pd(out + i0 + 8 * g, s[g]);
		else
		{
			alignas(64) double tmp[ROWS];
			for (int g = 0; g < GROUPS; g++)
				_mm512_store_pd(tmp + 8 * g, s[g]);
			std::copy(tmp, tmp + nb, out + i0);
		}
	}
}

}							/* namespace pgkm */
#endif
