/*
 * cpu_assign.h: the seam between the CPU device and its assignment methods.
 *
 * The CPU device (cpu_device.cpp) cuts the rows into chunks, asks an
 * assignment method for each row's nearest centroid, then records the label
 * with its exact fp64 distance, counts sizes and moved rows, and updates the
 * centroids. A method only answers "which centroid is nearest": Lloyd's
 * exhaustive search (lloyd_assign.cpp) today; a bounded method (Elkan,
 * Hamerly, Yinyang) implements the same interface, keeping its per-row
 * bounds between calls and reading the centroid drift in set_centroids.
 */
#ifndef PGKM_CPU_ASSIGN_H
#define PGKM_CPU_ASSIGN_H

#include <cstdint>
#include <memory>

namespace pgkm
{

class CpuAssign
{
public:
	virtual		~CpuAssign() {}
	/* The current centroids (k x d fp64, 1 <= k <= kmax), whenever they change. */
	virtual void set_centroids(const double *centroids, int32_t k) = 0;
	/*
	 * Nearest centroid of rows r0..r1-1 into out[0 .. r1-r0): the exact
	 * label of exact_distance.h (fp64 argmin, the lowest index on exact
	 * ties), however the method narrows the search. Disjoint ranges run
	 * concurrently; worker (0 .. workers-1) picks the scratch.
	 */
	virtual void nearest(int64_t r0, int64_t r1, int worker, int32_t *out) = 0;
};

/*
 * Lloyd's exhaustive search over x (n x d float32, row-major), direct or
 * GEMM form by shape (use_gemm); mean: the data's column means (the GEMM
 * form centres rows and centroids on them).
 */
std::unique_ptr<CpuAssign> make_lloyd_assign(const float *x, int32_t d, int32_t kmax,
											 const double *mean, int workers);

/* Rows per chunk of the CPU assignment pass: depends on the shape only. */
int64_t		assign_chunk_rows(int32_t d, int32_t k);

/*
 * Threads for a run of n rows: n_threads (0 = every core), but no more than
 * the assignment pass has chunks (more would only hold idle scratch).
 */
int			useful_threads(int32_t n_threads, int64_t n, int32_t d, int32_t k);

/* Use the GEMM distance form for this shape? */
bool		use_gemm(int32_t d, int32_t k);

}							/* namespace pgkm */

#endif							/* PGKM_CPU_ASSIGN_H */
