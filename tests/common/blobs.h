/*
 * blobs.h: seeded test data shared by the unit tests and the benchmarks.
 * Plain C++ (no test framework), so any test or benchmark can use it.
 */
#ifndef PGKM_TEST_BLOBS_H
#define PGKM_TEST_BLOBS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pgkm_test
{

/*
 * Gaussian blobs, float32 row-major n x d: `centers` centres uniform in
 * [-box, box]^d, then each row picks a centre uniformly and adds N(0, spread)
 * per feature. The same arguments give the same data everywhere
 * (std::mt19937_64 and libstdc++'s distributions). The centres are written
 * to *centres_out (centers x d) when asked.
 */
std::vector<float> blobs(int64_t n, int32_t d, int centers, uint64_t seed, double spread = 1.5,
						 double box = 5.0, std::vector<double> *centres_out = nullptr);

/*
 * Wu & Hong's generator (seed 003 of the project notes, section 4): `centers`
 * centres uniform in the unit cube [0, 1]^d, n / centers rows around each
 * with N(0, sigma2) per feature; row i belongs to centre i % centers (no
 * locality in the row order).
 */
std::vector<float> wu_hong_blobs(int64_t n, int32_t d, int centers, double sigma2, uint64_t seed);

/* k distinct row indices of x picked with a fixed generator, copied as fp64 centroids (k x d). */
std::vector<double> pick_rows(const std::vector<float> &x, int32_t d, int k, uint64_t seed);

/* FNV-1a of len bytes: the benchmarks print it so that two builds' outputs can be compared. */
uint64_t	fnv1a(const void *p, size_t len);

/*
 * Two concentric rings in the plane (scikit-learn's make_circles shape):
 * n rows (n/2 per ring, outer radius 1, inner radius factor) at uniform
 * random angles, plus N(0, noise) per coordinate; the ring of each row
 * (0 outer, 1 inner) in *labels.
 */
std::vector<float> rings(int64_t n, double factor, double noise, uint64_t seed,
						 std::vector<int32_t> *labels);

}							/* namespace pgkm_test */

#endif							/* PGKM_TEST_BLOBS_H */
