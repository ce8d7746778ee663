/*
 * near_ties.h: adversarial data for exact labels, shared by the CPU and GPU
 * tests. Plain C++ (no test framework).
 */
#ifndef PGKM_TEST_NEAR_TIES_H
#define PGKM_TEST_NEAR_TIES_H

#include <cstdint>
#include <vector>

namespace pgkm_test
{

/*
 * k centroids (fp64, not float values) around an offset; each row is picked
 * near the bisector of two of them, at a distance from it of 1e-4 .. 1e-10
 * of their separation, sometimes with the centroid pair moved a hair apart
 * (near-duplicate centroids), then rounded to float.
 */
struct NearTies
{
	std::vector<float> x;		/* n x d */
	std::vector<double> c;		/* k x d */
};

NearTies	near_ties(int64_t n, int32_t d, int32_t k, double offset, uint64_t seed);

/*
 * n rows of d features, row i in the unit cube at i mod 16: (i mod 16) +
 * U[0, 1) per feature (float draws). Centroids that are means of disjoint
 * groups of a cube's rows are then nearly equidistant from its rows, so
 * many rows stay open for the exact decision.
 */
std::vector<float> mod16_rows(int64_t n, int32_t d, uint64_t seed);

}							/* namespace pgkm_test */

#endif							/* PGKM_TEST_NEAR_TIES_H */
