/*
 * init.h: the initial centroids computed on the host. Random init works on
 * the host for every device (the driver hands its rows to the device);
 * k-means++ is a device operation (Device::kmeanspp): the CPU device's is
 * here, the GPU's lives in the CUDA plugin; k-means|| runs on the host with
 * CPU device passes for every device; and the k-means++ trial pick
 * that the CPU and feature-space k-means++ share.
 */
#ifndef PGKM_INIT_H
#define PGKM_INIT_H

#include "internal_hooks.h"
#include "phase_clock.h"

#include <cstdint>

namespace pgkm
{

class ThreadPool;

/*
 * 'random' init: k distinct rows of x (n x d) in a seeded random order,
 * written to centers (k x d fp64); returns how many were found (fewer than k
 * when the data has fewer distinct rows). Polls the pool for interrupts.
 */
int32_t		random_init(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed,
						ThreadPool *pool, double *centers);

/*
 * Greedy k-means++ on the CPU (scikit-learn's variant): writes the centers
 * (k x d fp64) and the final potential, returns the number found. weights
 * (n values >= 0, or NULL for all 1) weight each row's D^2.
 */
int32_t		kmeanspp_cpu(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed,
						 ThreadPool *pool, double *centers, double *potential,
						 const double *weights);

/*
 * The CPU device's k-means++ (Device::kmeanspp): kmeanspp_cpu on
 * kpp_sample_size(n, k) rows drawn by kpp_strata_rows (rng.h) from seed, or on
 * every row when that is n (kmeanspp_sample.cpp). The centers are rows of x;
 * potential is NaN when sampled (it would be the sample's).
 */
int32_t		kmeanspp_sampled_cpu(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed,
								 ThreadPool *pool, double *centers, double *potential);

/* k-means++'s sample: max(KPP_SAMPLE_MIN, KPP_SAMPLE_PER_CENTER k) rows, at most n. */
constexpr int64_t KPP_SAMPLE_PER_CENTER = 32;
constexpr int64_t KPP_SAMPLE_MIN = 16384;

/* Rows of k-means++'s sample of n rows for k centers (pgkm_internal_set_kpp_sample may change the rule). */
int64_t		kpp_sample_size(int64_t n, int32_t k);


/* k-means++'s phases (pgkm_internal_kpp_phase_ns), and their process-wide totals. */
enum KppPhase
{
	KPP_DRAW, KPP_CENTER_DISTANCES, KPP_PLAN, KPP_GROUPED, KPP_ROW_PASS, KPP_TAKE, KPP_SUMS,
	KPP_UPDATE, KPP_SAMPLE, KPP_START
};
extern PhaseTotals<PGKM_KPP_PHASES> kpp_phase_totals;

/* k-means||'s default rounds and oversampling factor l / k (pgkm_internal_set_kmeans_parallel). */
constexpr int KPAR_ROUNDS = 4;
constexpr double KPAR_OVERSAMPLING = 0.5;

/*
 * k-means|| (Bahmani et al.) on the host: writes up to k centers (k x d
 * fp64, distinct rows of x), returns how many. mean: the column means (for
 * the CPU device's nearest-centroid passes).
 */
int32_t		kmeans_parallel_init(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed,
								 const double *mean, ThreadPool *pool, double *centers);

/*
 * Greedy k-means++'s pick among trials candidates: the one whose potential,
 * the per-chunk partials tpart[chunk * trials + t] summed in chunk order,
 * is lowest (the first on ties). Both k-means++ (input and feature space)
 * use it, so that their choice is reduced the same way for any thread count.
 */
int			best_trial(const double *tpart, int64_t nchunks, int trials);

}							/* namespace pgkm */

#endif							/* PGKM_INIT_H */
