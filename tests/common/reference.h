/*
 * reference.h: an independent brute-force k-means in fp64, the yardstick
 * the engine is tested against: scikit-learn 1.2's _kmeans_single_lloyd
 * (tol scaled by the mean per-feature variance, strict convergence when no
 * label changes, a final assignment). Plain C++ (no test framework), so the
 * GPU tests, the CPU stand-in plugin and the benchmarks can use it too.
 */
#ifndef PGKM_TEST_REFERENCE_H
#define PGKM_TEST_REFERENCE_H

#include <cstdint>
#include <vector>

namespace pgkm_test
{

/* Squared Euclidean distance in fp64 between a float row and an fp64 centroid. */
double		sqdist_fp64(const float *x, const double *c, int32_t d);

/* Index of the nearest of k centroids (lowest on ties); its squared distance in *dist2 if asked. */
int32_t		nearest_fp64(const float *x, const double *centroids, int32_t k, int32_t d,
						 double *dist2 = nullptr);

/*
 * Lloyd update: each centroid becomes the mean of its rows (an empty
 * cluster keeps its centroid), sizes counted. The rows are summed as the
 * engine does, exactly, in 64-bit fixed point: value v of column j as
 * llrint(v * 2^(min(50, 61 - e_n) - e_m)), n + 1 < 2^e_n and the column's
 * max |v| < 2^e_m. Returns the sum of squared centroid shifts.
 */
double		ref_update(const float *x, int64_t n, int32_t d, const int32_t *labels, int32_t k,
					   double *centroids, int64_t *sizes);

/*
 * x on its sums' grid, as the engine rounds its data before Lloyd: each
 * value llrint(v * scale) / scale with ref_update's scale, so that the sums
 * are exact and the assignment sees the values the update adds.
 */
std::vector<float> ref_on_sum_grid(const std::vector<float> &x, int32_t d);

struct RefResult
{
	std::vector<int32_t> labels;
	std::vector<double> centers;
	double		inertia = 0;
	int			iterations = 0;
	bool		converged = false;
};

/* Lloyd from the given centers (k x d), scikit-learn 1.2 semantics, all in fp64, on x on its sums' grid. */
RefResult	ref_lloyd(const std::vector<float> &x, int32_t d, std::vector<double> centers,
					  int max_iter, double tol);

}							/* namespace pgkm_test */

#endif							/* PGKM_TEST_REFERENCE_H */
