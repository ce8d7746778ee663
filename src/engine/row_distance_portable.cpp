/*
 * row_distance_portable.cpp: the row distance kernel (row_distance.h) in
 * scalar code: BANKS rows interleaved, so that their dependency chains
 * overlap.
 */
#include "row_distance.h"

namespace pgkm
{

void
row_distance_portable(const float *x, int64_t rows, int32_t d, const double *centroids,
					  const int32_t *labels, double *out)
{
	constexpr int BANKS = 4;
	for (int64_t i0 = 0; i0 < rows; i0 += BANKS)
	{
		const float *xr[BANKS];
		const double *cr[BANKS];
		const int	nb = row_block<BANKS>(x, rows, d, centroids, labels, i0, xr, cr);
		double		s[BANKS] = {};
		for (int32_t j = 0; j < d; j++)
			for (int b = 0; b < BANKS; b++)
			{
				const double t = (double) xr[b][j] - cr[b][j];
				s[b] += t * t;
			}
		for (int b = 0; b < nb; b++)
			out[i0 + b] = s[b];
	}
}

}							/* namespace pgkm */
