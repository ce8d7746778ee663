/*
 * budget.h: pg_kmeans.memory_limit, accounted in one place (budget.cpp).
 *
 * One call's host memory is its data buffer (features and, for kmeans(),
 * the ctids), the engine's own allocations, and the result rows kmeans()
 * keeps in memory before its tuplestore spills. Each is counted here, and
 * nowhere else: while reading (the buffer), after it (buffer and engine,
 * before the engine starts), for the engine's options (its share), and for
 * the output (what is left).
 */
#ifndef PGKM_BUDGET_H
#define PGKM_BUDGET_H

#include "read.h"

/* Bytes of the data buffer for rows rows: the features, and the ctids if kept. */
extern int64 pgkm_data_bytes(int64 rows, int32 d, bool need_tids);

/* Does a data buffer of rows rows fit pg_kmeans.memory_limit? */
extern bool pgkm_buffer_fits(int64 rows, int32 d, bool need_tids);

/* The error for a relation with more usable rows than the buffer may hold. */
extern void pgkm_refuse_buffer(int64 rows, int32 d, bool need_tids,
							   const char *relname) pg_attribute_noreturn();

/*
 * What the limit leaves the engine once the data buffer is counted (at
 * least 1), or 0 when there is no limit: pgkm_options.memory_limit.
 */
extern int64 pgkm_engine_memory_limit(const PgkmData *data, bool need_tids);

/*
 * The whole call, once the rows are read and k is known to fit them: an
 * error when the data buffer and the engine's estimate exceed the limit.
 */
extern void pgkm_check_budget(const PgkmArgs *args, const PgkmData *data, bool need_tids);

/* kB of kmeans() result rows the tuplestore may keep in memory (see budget.cpp). */
extern int	pgkm_output_max_kbytes(const PgkmArgs *args, const PgkmData *data);

#endif							/* PGKM_BUDGET_H */
