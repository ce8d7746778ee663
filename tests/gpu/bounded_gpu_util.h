/*
 * bounded_gpu_util.h: what the tests of the bounded GPU methods (Hamerly,
 * Yinyang, Elkan, sort) share: engine runs of a method from given
 * centroids, the check that a method's run is GPU Lloyd's and the CPU
 * engine's, the streamed fallback's check, and the adversarial data (exact
 * ties on a grid, repeated rows).
 */
#ifndef PGKM_BOUNDED_GPU_UTIL_H
#define PGKM_BOUNDED_GPU_UTIL_H

#include "gpu_test_util.h"

#include <string>
#include <vector>

/* An engine run of method on device from init (k = init.size() / d), max_iter iterations. */
pgkm_test::EngineResult run_method(const std::vector<float> &x, int d, const std::vector<double> &init, int method,
								   int device, int max_iter, int64_t mem_limit = 0);

/*
 * method on the GPU is Lloyd on the GPU and on the CPU from init: the same
 * labels, iterations, moves per step and sizes, centroids bit-identical with
 * GPU Lloyd's and the CPU engine's (the same labels give the same
 * fixed-point sums), inertia to 1e-12 relatively, no more
 * distances than Lloyd's; the method's run is returned.
 */
pgkm_test::EngineResult expect_exact_method(int method, const std::vector<float> &x, int d,
											const std::vector<double> &init, int max_iter, const std::string &what);

/* The centroid counts of expect_exact_edge_shapes' cases (the defaults: small k). */
struct EdgeShapeKs
{
	int			grid = 12;		/* on the 6000-row integer grid, d = 3 */
	int			dup = 7;		/* on 5000 rows, 5 distinct, d = 8 */
	int64_t		line_rows = 5000;
	int			line = 10;		/* d = 1 */
	int			all = 64;		/* k = n */
};

/*
 * expect_exact_method on exact ties (an integer grid), duplicate rows
 * (k > distinct rows), d = 1, k = 1 and k = n.
 */
void		expect_exact_edge_shapes(int method, const EdgeShapeKs &ks = EdgeShapeKs());

/* expect_exact_method with empty clusters (repaired between passes) and with clusters that merge. */
void		expect_exact_empty_and_merging(int method);

/*
 * method on 100,000 x 32 blobs, k clusters, under a memory limit that
 * streams the rows: Lloyd's passes (reported as lloyd), GPU Lloyd's run.
 */
void		expect_streamed_runs_lloyd(int method, int k);

/* A near-tie data set's shape (near_ties.h): rows, dimension, centroids, every value shifted by offset. */
struct TieShape
{
	int64_t		n;
	int			d, k;
	double		offset;
};

/* The first k rows as centroids. */
std::vector<double> first_rows(const std::vector<float> &x, int d, int k);

/* n rows on an integer grid, (7 i + 13 j) mod m: many rows at equal distances. */
std::vector<float> integer_grid(int64_t n, int d, int m);

/* n rows, `distinct` of them distinct: row i is (i mod distinct) step + j col_step. */
std::vector<float> repeated_rows(int64_t n, int d, int distinct, int step, double col_step);

#endif
