/*
 * srf.h: the result rows that kmeans_centroids() (srf.cpp) and the stored
 * models (model.cpp) share.
 */
#ifndef PGKM_SRF_H
#define PGKM_SRF_H

#include "pg_headers.h"

/* Rows (cluster, centroid, size, inertia) into the call's tuplestore. */
extern void pgkm_emit_centroid_rows(FunctionCallInfo fcinfo, int32 k, int32 d,
									const double *centroids,
									const int64 *sizes,
									const double *cluster_inertia);

#endif							/* PGKM_SRF_H */
