/*
 * centroid_sums.h: the update's fp64 sums of rows per cluster, in row order
 * within each cluster (the bits every thread count must reproduce). Lanes run
 * across features, so vectors change no bit.
 */
#ifndef PGKM_CENTROID_SUMS_H
#define PGKM_CENTROID_SUMS_H

#include <cstdint>

namespace pgkm
{

/* sums[labels[i]] += x[i] (features 0..d) for i = 0..rows in order. */
void		add_rows_in_order(const float *x, int64_t rows, int32_t d, const int32_t *labels,
							  double *sums);

/*
 * sums[labels[rows[t]]][j0..j1) += x[rows[t]][j0..j1) for t = 0..m in order
 * (x and labels indexed from the same row).
 */
void		add_listed_rows(const float *x, int32_t d, int32_t j0, int32_t j1, const int32_t *rows,
							int32_t m, const int32_t *labels, double *sums);

}							/* namespace pgkm */

#endif							/* PGKM_CENTROID_SUMS_H */
