/*
 * relocate.h: where an empty cluster goes after an assignment: to a row far
 * from its own centroid (scikit-learn's choice), one distinct row per
 * cluster.
 */
#ifndef PGKM_RELOCATE_H
#define PGKM_RELOCATE_H

#include <cstdint>
#include <functional>
#include <vector>

namespace pgkm
{

/*
 * Up to m rows of x (n x d float32) with dist2 > 0 (the squared distance to
 * their own centroid): the farthest first, the lower row index on equal
 * distances, skipping a row equal to one already taken (-0 equals 0) and a
 * row that accept (if given, asked in that order) refuses. Fewer than m
 * only when fewer such distinct rows exist.
 */
std::vector<int64_t> farthest_distinct_rows(const float *x, int64_t n, int32_t d,
											const double *dist2, int32_t m,
											const std::function<bool(int64_t)> &accept = nullptr);

}							/* namespace pgkm */

#endif							/* PGKM_RELOCATE_H */
