/*
 * nearest.h: the nearest of k fp64 centroids to one fp64 point, for any
 * finite values (pgkm_nearest, behind kmeans_predict).
 */
#ifndef PGKM_NEAREST_H
#define PGKM_NEAREST_H

#include <cstdint>

namespace pgkm
{

/*
 * Sign of ||x - a||^2 - ||x - b||^2 (-1, 0, +1), evaluated as
 * sum_j (a_j - b_j)(a_j + b_j - 2 x_j) with each term scaled by a power of
 * two: no intermediate overflows or underflows, and a coordinate where
 * a_j = b_j contributes exactly nothing, however large x_j is.
 */
int			compare_distances(const double *x, const double *a, const double *b, int32_t d);

/* The nearest centroid by compare_distances, the lowest index on ties. */
int32_t		nearest_centroid(const double *centroids, int32_t k, int32_t d, const double *x);

/* ||x - c||^2 in fp64 without intermediate overflow; +inf only beyond double's range. */
double		squared_distance(const double *x, const double *c, int32_t d);

}							/* namespace pgkm */

#endif							/* PGKM_NEAREST_H */
