/*
 * row_distance_avx2.cpp: the row distance kernel (row_distance.h) for AVX2:
 * 4 rows per vector, GROUPS vectors of rows in flight. Per row, 4 features
 * at a time: x converted to fp64, minus the centroid, squared; the 4 x 4
 * squares are transposed so that lane b holds row b, then added feature by
 * feature. CMakeLists.txt compiles this file alone for AVX2, without FMA.
 */
#include "row_distance.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>

namespace pgkm
{
namespace
{

/* Vectors of 4 rows per block: independent sums, so one row's chain never stalls the others. */
constexpr int GROUPS = 2;
constexpr int ROWS = 4 * GROUPS;

/* s[lane b] += q[b][f] for f < NF in order: the 4 x 4 squares transposed to rows in lanes. */
template <int NF>
static inline __m256d
add_transposed(__m256d s, const __m256d q[4])
{
	const __m256d t0 = _mm256_unpacklo_pd(q[0], q[1]), t1 = _mm256_unpackhi_pd(q[0], q[1]);
	const __m256d t2 = _mm256_unpacklo_pd(q[2], q[3]), t3 = _mm256_unpackhi_pd(q[2], q[3]);
	s = _mm256_add_pd(s, _mm256_permute2f128_pd(t0, t2, 0x20));
	if (NF > 1)
		s = _mm256_add_pd(s, _mm256_permute2f128_pd(t1, t3, 0x20));
	if (NF > 2)
		s = _mm256_add_pd(s, _mm256_permute2f128_pd(t0, t2, 0x31));
	if (NF > 3)
		s = _mm256_add_pd(s, _mm256_permute2f128_pd(t1, t3, 0x31));
	return s;
}

/* The same for the last nf < 4 features. */
static inline __m256d
add_transposed_tail(__m256d s, const __m256d q[4], int nf)
{
	return nf == 1 ? add_transposed<1>(s, q) : nf == 2 ? add_transposed<2>(s, q) : add_transposed<3>(s, q);
}

static inline __m256d
square_diff(__m128 x, __m256d c)
{
	const __m256d t = _mm256_sub_pd(_mm256_cvtps_pd(x), c);
	return _mm256_mul_pd(t, t);
}

}							/* namespace */

void
row_distance_avx2(const float *x, int64_t rows, int32_t d, const double *centroids,
				  const int32_t *labels, double *out)
{
	const int32_t d4 = d & ~3, rem = d & 3;
	const __m128i mx = _mm_setr_epi32(rem > 0 ? -1 : 0, rem > 1 ? -1 : 0, rem > 2 ? -1 : 0, 0);
	const __m256i mc = _mm256_cvtepi32_epi64(mx);
	for (int64_t i0 = 0; i0 < rows; i0 += ROWS)
	{
		const float *xr[ROWS];
		const double *cr[ROWS];
		const int	nb = row_block<ROWS>(x, rows, d, centroids, labels, i0, xr, cr);
		__m256d		s[GROUPS];
		for (int g = 0; g < GROUPS; g++)
			s[g] = _mm256_setzero_pd();
		for (int32_t j = 0; j < d4; j += 4)
			for (int g = 0; g < GROUPS; g++)
			{
				__m256d		q[4];
				for (int r = 0; r < 4; r++)
					q[r] = square_diff(_mm_loadu_ps(xr[4 * g + r] + j),
									   _mm256_loadu_pd(cr[4 * g + r] + j));
				s[g] = add_transposed<4>(s[g], q);
			}
		if (rem)
			for (int g = 0; g < GROUPS; g++)
			{
				__m256d		q[4];
				for (int r = 0; r < 4; r++)
					q[r] = square_diff(_mm_maskload_ps(xr[4 * g + r] + d4, mx),
									   _mm256_maskload_pd(cr[4 * g + r] + d4, mc));
				s[g] = add_transposed_tail(s[g], q, rem);
			}
		if (nb == ROWS)
			for (int g = 0; g < GROUPS; g++)
				_mm256_storeu_pd(out + i0 + 4 * g, s[g]);
		else
		{
			alignas(32) double tmp[ROWS];
			for (int g = 0; g < GROUPS; g++)
				_mm256_store_pd(tmp + 4 * g, s[g]);
			std::copy(tmp, tmp + nb, out + i0);
		}
	}
}

}							/* namespace pgkm */
#endif
