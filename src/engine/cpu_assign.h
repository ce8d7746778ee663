/*
 * cpu_assign.h: the seam between the CPU device and its assignment methods.
 *
 * The CPU device (cpu_device.cpp) cuts the rows into chunks, asks an
 * assignment method for each row's nearest centroid, then records the label
 * with its exact fp64 distance, counts sizes and moved rows, and updates the
 * centroids. A method only answers "which centroid is nearest": Lloyd's
 * exhaustive search (lloyd_assign.cpp), or a bounded method (Elkan,
 * Hamerly, Yinyang, sort: bounded_assign.h) that keeps per-row bounds
 * between calls and reads the centroid drift in set_centroids.
 */
#ifndef PGKM_CPU_ASSIGN_H
#define PGKM_CPU_ASSIGN_H

#include "pgkm_engine.h"

#include <cstdint>
#include <memory>
#include <string>

namespace pgkm
{

/* Distance computations of the passes since the last take_counts(). */
struct AssignCounts
{
	int64_t		distances = -1;	/* float32 distances; -1: every row against every centroid */
	int64_t		exact = 0;		/* fp64 near-tie rechecks */
	int32_t		method = 0;		/* the pgkm_method that ran the last pass */
};

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
	/*
	 * Before each pass's nearest calls (single-threaded); last: the run's
	 * final assignment, after which no counts are taken.
	 */
	virtual void begin_pass(bool last) { (void) last; }
	/*
	 * Counts of the passes since the last call (single-threaded, between
	 * passes); moved: the rows whose label the last pass changed (-1: not
	 * known).
	 */
	virtual AssignCounts take_counts(int64_t moved) { (void) moved; return AssignCounts(); }
};

/*
 * Lloyd's exhaustive search over x (n x d float32, row-major), direct or
 * GEMM form by shape (use_gemm); mean: the data's column means (the GEMM
 * form centres rows and centroids on them).
 */
std::unique_ptr<CpuAssign> make_lloyd_assign(const float *x, int32_t d, int32_t kmax,
											 const double *mean, int workers);

class ThreadPool;

/*
 * The assignment method of opt->method (NULL: Lloyd) for x (n x d), at most
 * kmax centroids (assign_methods.cpp).
 */
std::unique_ptr<CpuAssign> make_cpu_assign(const pgkm_options *opt, const float *x,
										   int64_t n, int32_t d, int32_t kmax,
										   const double *mean, ThreadPool *pool);

/*
 * Can the GPU device run this method? Lloyd, every pruned method and AUTO
 * (which is Lloyd there); anything else (kernel k-means has its own GPU
 * path, kernel_kmeans.cpp) gets false and *why.
 */
bool		method_on_gpu(int32_t method, std::string *why);

/* Rows per chunk of the CPU assignment pass: depends on the shape only. */
int64_t		assign_chunk_rows(int32_t d, int32_t k);

/* The CPU device's scratch for rows gathered to recompute their distances (per worker, floats). */
constexpr int64_t GATHER_FLOATS = 16384;

/*
 * Threads for a run of n rows: n_threads (0 = every core), but no more than
 * the assignment pass has chunks (more would only hold idle scratch).
 */
int			useful_threads(int32_t n_threads, int64_t n, int32_t d, int32_t k);

/* Use the GEMM distance form for this shape? */
bool		use_gemm(int32_t d, int32_t k);

}							/* namespace pgkm */

#endif							/* PGKM_CPU_ASSIGN_H */
