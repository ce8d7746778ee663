/*
 * srf.cpp: kmeans() and kmeans_centroids(), the one-shot SQL functions.
 * Both are set-returning functions in materialize mode: the whole result is
 * known at once when the run ends, so a tuplestore (which spills to disk
 * past work_mem) is the natural output.
 */
#include "pg_kmeans.h"

extern "C"
{
PG_FUNCTION_INFO_V1(pgkm_kmeans);
PG_FUNCTION_INFO_V1(pgkm_kmeans_centroids);
}

#define PGKM_EMIT_CHECK_ROWS 4096

/* A float8[] from a C array of doubles. */
ArrayType *
pgkm_float8_array(const double *v, int n)
{
	Datum	   *elems = (Datum *) palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		elems[i] = Float8GetDatum(v[i]);
	return construct_array(elems, n, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
						   TYPALIGN_DOUBLE);
}

/*
 * Rows (cluster, centroid, size, inertia), clusters numbered from 0 like
 * scikit-learn and PostGIS. Shared by kmeans_centroids() and
 * kmeans_model_centroids(), which must return the same rows.
 */
void
pgkm_emit_centroid_rows(FunctionCallInfo fcinfo, int32 k, int32 d,
						const double *centroids, const int64 *sizes,
						const double *cluster_inertia)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	for (int32 c = 0; c < k; c++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = Int32GetDatum(c);
		values[1] = PointerGetDatum(pgkm_float8_array(centroids + (int64) c * d, d));
		values[2] = Int64GetDatum(sizes[c]);
		values[3] = Float8GetDatum(cluster_inertia[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * kmeans(relation, columns, k, ...) RETURNS TABLE (ctid, cluster, distance):
 * one row per clustered input row, joinable back to the table by ctid in
 * the same statement (same snapshot).
 */
extern "C" Datum
pgkm_kmeans(PG_FUNCTION_ARGS)
{
	PgkmArgs	args;
	PgkmClustering *c;
	ReturnSetInfo *rsinfo;

	pgkm_parse_args(fcinfo, 0, &args);
	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	c = pgkm_cluster(&args, true);
	for (int64 i = 0; i < c->result.n; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = PointerGetDatum(&c->data.tids[i]);
		values[1] = Int32GetDatum(c->result.labels[i]);
		values[2] = Float8GetDatum(c->result.distances[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if ((i + 1) % PGKM_EMIT_CHECK_ROWS == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pgkm_report_timing(c, c->result.n);
	pgkm_clustering_end(c);
	return (Datum) 0;
}

/*
 * kmeans_centroids(relation, columns, k, ...) RETURNS TABLE (cluster,
 * centroid, size, inertia); inertia is the cluster's own sum of squared
 * distances, so the rows sum to the total inertia.
 */
extern "C" Datum
pgkm_kmeans_centroids(PG_FUNCTION_ARGS)
{
	PgkmArgs	args;
	PgkmClustering *c;

	pgkm_parse_args(fcinfo, 0, &args);
	InitMaterializedSRF(fcinfo, 0);

	c = pgkm_cluster(&args, false);
	pgkm_emit_centroid_rows(fcinfo, c->result.k, c->result.d, c->result.centroids,
							c->result.sizes, c->cluster_inertia);
	pgkm_report_timing(c, c->result.k);
	pgkm_clustering_end(c);
	return (Datum) 0;
}
