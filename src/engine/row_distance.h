/*
 * row_distance.h: per row, the fp64 squared distance to its labelled
 * centroid with sqdist_exact's arithmetic (exact_distance.h), bit for bit.
 *
 * SIMD lanes hold rows, never features: lane b sums row b's terms
 * ((double) x_j - c_j)^2 for j in order, so each row's sum goes through the
 * same roundings as the scalar loop. The difference and its square do not
 * depend on the layout, so they are computed from contiguous loads of a row
 * and only the squares are transposed (rows to lanes) before the sums. No
 * fused multiply-add: CMakeLists.txt compiles these files with
 * -ffp-contract=off. One translation unit per instruction set, picked at run
 * time like the argmin kernels (argmin_kernels.h).
 */
#ifndef PGKM_ROW_DISTANCE_H
#define PGKM_ROW_DISTANCE_H

#include "argmin_kernels.h"

#include <algorithm>
#include <cstdint>

namespace pgkm
{

/*
 * out[i] = sqdist_exact(x + i * d, centroids + labels[i] * d, d) for
 * i < rows; x holds rows x d floats, centroids k x d doubles.
 */
typedef void (*RowDistanceRun) (const float *x, int64_t rows, int32_t d, const double *centroids,
								const int32_t *labels, double *out);

/*
 * The row and centroid pointers of the block of R rows from i0; a short last
 * block repeats its last row in the spare places. Returns the rows present.
 */
template <int R>
inline int
row_block(const float *x, int64_t rows, int32_t d, const double *centroids,
		  const int32_t *labels, int64_t i0, const float *xr[R], const double *cr[R])
{
	const int	nb = (int) std::min<int64_t>(R, rows - i0);
	for (int b = 0; b < R; b++)
	{
		const int64_t i = i0 + std::min(b, nb - 1);
		xr[b] = x + i * d;
		cr[b] = centroids + (size_t) labels[i] * d;
	}
	return nb;
}

/* The kernel of isa, or of the best set the CPU has when it lacks isa. */
RowDistanceRun row_distance_kernel(Isa isa);

/* The kernel of the set the argmin kernels use now (current_argmin_kernel). */
RowDistanceRun current_row_distance_kernel();

void		row_distance_portable(const float *x, int64_t rows, int32_t d, const double *centroids,
								  const int32_t *labels, double *out);
#if defined(__x86_64__)
void		row_distance_avx2(const float *x, int64_t rows, int32_t d, const double *centroids,
							  const int32_t *labels, double *out);
void		row_distance_avx512(const float *x, int64_t rows, int32_t d, const double *centroids,
								const int32_t *labels, double *out);
#endif

}							/* namespace pgkm */

#endif							/* PGKM_ROW_DISTANCE_H */
