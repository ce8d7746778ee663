/*
 * exact_distance.h: the fp64 distance that defines a row's label on the CPU.
 *
 * The label of row x (float32, as stored) is the argmin over the centroids c
 * (fp64) of sqdist_exact(x, c), the lowest index on exact ties. Every CPU
 * assignment method (Lloyd's exhaustive search, the triangle-inequality
 * methods) returns exactly this label: the float32 kernels only narrow the
 * search, and any row they cannot decide with a proven error bound is
 * decided here. Keep the formula as it is: features in order, in fp64.
 */
#ifndef PGKM_EXACT_DISTANCE_H
#define PGKM_EXACT_DISTANCE_H

#include <cstddef>
#include <cstdint>
#include <limits>

namespace pgkm
{

/* sum over j in order of ((double) x_j - c_j)^2 */
static inline double
sqdist_exact(const float *x, const double *c, int32_t d)
{
	double		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		t = (double) x[j] - c[j];
		s += t * t;
	}
	return s;
}

/*
 * The same sum, stopped once it reaches bound (then the result is >= bound
 * and not the full sum). Exact for a centroid that can still win: the
 * partial sums of non-negative terms never decrease.
 */
static inline double
sqdist_exact_below(const float *x, const double *c, int32_t d, double bound)
{
	double		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		t = (double) x[j] - c[j];
		s += t * t;
		if (s >= bound)
			break;
	}
	return s;
}

/*
 * The label of x among the centroids listed in cand (increasing indices,
 * n >= 1) of the k x d fp64 centroids: the lowest sqdist_exact, the lowest
 * index on exact ties. cand = nullptr means all n centroids.
 */
static inline int32_t
nearest_exact(const float *x, const double *centroids, int32_t d, const int32_t *cand,
			  int32_t n)
{
	int32_t		best = -1;
	double		bd = std::numeric_limits<double>::infinity();
	for (int32_t i = 0; i < n; i++)
	{
		const int32_t c = cand ? cand[i] : i;
		const double v = sqdist_exact_below(x, centroids + (size_t) c * d, d, bd);
		if (v < bd || best < 0)
		{
			bd = v;
			best = c;
		}
	}
	return best;
}

}							/* namespace pgkm */

#endif							/* PGKM_EXACT_DISTANCE_H */
