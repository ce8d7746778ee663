/*
 * internal_hooks.h: tuning and test hooks, deliberately not in pgkm_engine.h.
 * Each is process-wide and returns the previous value.
 */
#ifndef PGKM_INTERNAL_HOOKS_H
#define PGKM_INTERNAL_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The smallest d that uses the GEMM distance form (-1, default: by shape, d >= 6 or k >= 32). */
int32_t		pgkm_internal_set_gemm_min_d(int32_t d);

/*
 * Bytes the CPU device's workers may hold in their own centroid sums
 * (cpu_device.cpp; -1: the default, 32 MiB); past it the update splits the
 * clusters among the threads instead.
 */
int64_t		pgkm_internal_set_worker_sums_budget(int64_t bytes);

/*
 * The share of a run's work that CPU 'auto' may lose on tries of its
 * bounded method that do not pay (auto_assign.cpp; default 0.03, a
 * negative value restores it). Read when a run's method is made.
 */
double		pgkm_internal_set_auto_try_budget(double share);

/*
 * CPU 'auto' times each pass as its count price, a bounded pass's plus
 * bounded_factor - 1 Lloyd passes (0, default: the clock), so that tests
 * see the same choices on any machine; read when a run's method is made.
 */
double		pgkm_internal_set_auto_counted_seconds(double bounded_factor);

/* k-means++ skipping: groups and rows (1, default), rows only (2) or off (0). */
int32_t		pgkm_internal_set_kpp_pruning(int32_t on);

/* Near pairs a k-means++ worker keeps per grouped step (default and most 2^15; 0: the winner's rows are searched again). */
int64_t		pgkm_internal_set_kpp_near_room(int64_t pairs);

/* k-means++ steps evaluated over groups, and those of them whose pick the row-order pass made, since the last call. */
void		pgkm_internal_kpp_steps(int64_t *grouped, int64_t *undecided);

/* Worker `worker` of the next pool sleeps `microseconds` once before it takes part in a call (a helper that comes late). */
void		pgkm_internal_pool_late_start(int worker, int64_t microseconds);

/* k-means++ steps on the pool or the calling thread: 0 timed (default), 1 pool, 2 calling thread (benchmarks). */
int32_t		pgkm_internal_set_kpp_step_choice(int32_t choice);

/* k-means++ steps run on the calling thread since the last call. */
int64_t		pgkm_internal_kpp_serial_steps(void);

/*
 * Nanoseconds that greedy k-means++ spent per phase since the last call (for
 * benchmarks): its steps' draw, candidate-center distances, plan, grouped
 * evaluation, row-order pass, winner taken and regrouped, chunk sums, row
 * update; then, outside the steps, drawing and gathering the sample, and
 * the start (buffers, the first center's pass, the groups). Fills
 * PGKM_KPP_PHASES values (init.h's KppPhase).
 */
#define PGKM_KPP_PHASES 10
void		pgkm_internal_kpp_phase_ns(int64_t *ns);

/*
 * Nanoseconds that the CPU device's iterations (cpu_device.cpp) spent per
 * phase since the last call (for benchmarks): the assignment pass (with the
 * sums it fuses), the centroid update, the rest of iterate. Fills
 * PGKM_ITER_PHASES values.
 */
#define PGKM_ITER_PHASES 3
void		pgkm_internal_iter_phase_ns(int64_t *ns);

/*
 * k-means++'s sample on the CPU: max(min_rows, per_center k) rows, at most n;
 * per_center 0: every row (full-data greedy k-means++); -1 and -1: the
 * defaults (init.h). Returns the previous per_center.
 */
int64_t		pgkm_internal_set_kpp_sample(int64_t per_center, int64_t min_rows);

/* k-means||'s rounds and oversampling factor l / k (0 and 0: the defaults); returns the previous rounds. */
int32_t		pgkm_internal_set_kmeans_parallel(int32_t rounds, double oversampling);

/* Instruction set of the CPU kernels: -1 the best the CPU runs (default), 0 portable, 1 AVX2, 2 AVX-512. */
int32_t		pgkm_internal_set_isa(int32_t isa);

/* Exact CPU labels on (1, default) or the float32 argmin only (0). */
int32_t		pgkm_internal_set_exact_labels(int32_t on);

/* Rows the CPU assignment labelled, and how many of them it decided in fp64, since the last call. */
void		pgkm_internal_label_rechecks(int64_t *rows, int64_t *rechecked);

/* The driver library required before loading the plugin ("" = none). */
const char *pgkm_internal_set_driver_library(const char *soname);

#ifdef __cplusplus
}
#endif

#endif							/* PGKM_INTERNAL_HOOKS_H */
