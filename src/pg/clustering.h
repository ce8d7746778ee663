/*
 * clustering.h: one clustering call (clustering.cpp): read the rows, run the
 * engine step by step, and hold the result until the caller's rows are out.
 */
#ifndef PGKM_CLUSTERING_H
#define PGKM_CLUSTERING_H

#include "read.h"

typedef struct PgkmClustering
{
	MemoryContext cxt;			/* owns the data and the engine run */
	PgkmData	data;
	pgkm_result result;			/* pointers valid until pgkm_clustering_end */
	instr_time	started;		/* when the call started, for the timing report */
	double		scan_s;			/* reading the relation into the buffer */
	double		setup_s;		/* engine create + first init (incl. upload to a GPU) */
	double		iterate_s;		/* remaining steps: iterations, final assignment */
} PgkmClustering;

extern PgkmClustering *pgkm_cluster(const PgkmArgs *args, bool need_tids);
/*
 * A model of k centroids x d features fits one stored row, or an ERROR
 * (kmeans_fit calls it before the scan with d = the columns, a lower bound,
 * and pgkm_cluster after it with the real d, before the engine runs).
 */
extern void pgkm_check_model_size(int32 k, int64 d);
extern void pgkm_clustering_end(PgkmClustering *c);
extern void pgkm_report_timing(const PgkmClustering *c, int64 rows_out);

#endif							/* PGKM_CLUSTERING_H */
