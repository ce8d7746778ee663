/*
 * centroid_sums.cpp: the update's per-cluster fp64 row sums (centroid_sums.h),
 * built for AVX-512, AVX2 and the baseline and picked at load time: each
 * feature's sum is the same chain of fp64 adds in every build.
 */
#include "centroid_sums.h"
#include "simd.h"

namespace pgkm
{

/* D > 0 fixes d at compile time: at small d the loop's own overhead was most of a row's cost */
template <int D>
__attribute__((always_inline)) static inline void
add_rows(const float *x, int64_t rows, int32_t dd, const int32_t *labels, double *sums)
{
	const int32_t d = D > 0 ? D : dd;
	for (int64_t i = 0; i < rows; i++)
	{
		const float *xi = x + i * d;
		double	   *__restrict sr = sums + (int64_t) labels[i] * d;
		for (int32_t j = 0; j < d; j++)
			sr[j] += (double) xi[j];
	}
}

PGKM_TARGET_CLONES_V4 void
add_rows_in_order(const float *x, int64_t rows, int32_t d, const int32_t *labels, double *sums)
{
	switch (d)
	{
		case 1: add_rows<1>(x, rows, d, labels, sums); break;
		case 2: add_rows<2>(x, rows, d, labels, sums); break;
		case 3: add_rows<3>(x, rows, d, labels, sums); break;
		case 4: add_rows<4>(x, rows, d, labels, sums); break;
		default: add_rows<0>(x, rows, d, labels, sums); break;
	}
}

/* Listed rows ahead whose first line add_listed asks for. */
static constexpr int32_t LISTED_PREFETCH = 8;

/* D > 0: every feature of d = D rows (j0 = 0, j1 = D) */
template <int D>
__attribute__((always_inline)) static inline void
add_listed(const float *x, int32_t d, int32_t j0, int32_t j1, const int32_t *rows, int32_t m,
		   const int32_t *labels, double *sums)
{
	if (D > 0)
		d = D, j0 = 0, j1 = D;
	for (int32_t t = 0; t < m; t++)
	{
		/* the listed rows are far apart: their loads would wait one at a time behind the sums */
		if (D == 0 && t + LISTED_PREFETCH < m)
			__builtin_prefetch(x + (int64_t) rows[t + LISTED_PREFETCH] * d + j0);
		const float *xi = x + (int64_t) rows[t] * d;
		double	   *__restrict sr = sums + (int64_t) labels[rows[t]] * d;
		for (int32_t j = j0; j < j1; j++)
			sr[j] += (double) xi[j];
	}
}

/* fixed below 5 features only: at d = 16 the fixed loop took twice as long */
PGKM_TARGET_CLONES_V4 void
add_listed_rows(const float *x, int32_t d, int32_t j0, int32_t j1, const int32_t *rows, int32_t m,
				const int32_t *labels, double *sums)
{
	switch (j0 == 0 && j1 == d ? d : 0)
	{
		case 1: add_listed<1>(x, d, j0, j1, rows, m, labels, sums); break;
		case 2: add_listed<2>(x, d, j0, j1, rows, m, labels, sums); break;
		case 3: add_listed<3>(x, d, j0, j1, rows, m, labels, sums); break;
		case 4: add_listed<4>(x, d, j0, j1, rows, m, labels, sums); break;
		default: add_listed<0>(x, d, j0, j1, rows, m, labels, sums); break;
	}
}

}							/* namespace pgkm */
