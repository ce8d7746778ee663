/*
 * srf.cpp: kmeans() and kmeans_centroids(), the one-shot SQL functions.
 * Both are set-returning functions in materialize mode: the whole result is
 * known at once when the run ends, so a tuplestore is the natural output
 * (kmeans() bounds its memory by pg_kmeans.memory_limit, not work_mem: see
 * pgkm_output_max_kbytes in budget.cpp).
 */
#include "srf.h"
#include "arrays.h"
#include "budget.h"
#include "clustering.h"

extern "C"
{
PG_FUNCTION_INFO_V1(pgkm_kmeans);
PG_FUNCTION_INFO_V1(pgkm_kmeans_centroids);
}

#define PGKM_EMIT_CHECK_ROWS 4096

/*
 * Clusters numbered from 0 like scikit-learn and PostGIS. Shared by
 * kmeans_centroids() and kmeans_model_centroids(), which must return the
 * same rows.
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
		values[1] = PointerGetDatum(pgkm_array_from(centroids + (int64) c * d, d, 0, FLOAT8OID));
		values[2] = Int64GetDatum(sizes[c]);
		values[3] = Float8GetDatum(cluster_inertia[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * Replace the work_mem tuplestore that InitMaterializedSRF made (kept for
 * its checks and error messages, before the scan) by one bounded by
 * pgkm_output_max_kbytes(). Still empty, so nothing is lost. Its tuples go to a
 * generation context (child of the per-query context, so it ends with the
 * query): rows are written once and freed in bulk, and a generation chunk
 * has no power-of-two rounding, so a 40-byte row takes 64 bytes instead of
 * 80 in aset.c. Why it matters: touching fresh pages (kernel page clearing)
 * is a large part of the output cost, so fewer bytes per row is less time.
 */
static void
resize_output_store(ReturnSetInfo *rsinfo, int max_kbytes)
{
	MemoryContext rowcxt = GenerationContextCreate(rsinfo->econtext->ecxt_per_query_memory,
												   "pg_kmeans output rows",
												   0,
												   ALLOCSET_DEFAULT_INITSIZE,
												   ALLOCSET_DEFAULT_MAXSIZE);
	MemoryContext oldcxt = MemoryContextSwitchTo(rowcxt);
	bool		random_access = (rsinfo->allowedModes & SFRM_Materialize_Random) != 0;

	tuplestore_end(rsinfo->setResult);
	rsinfo->setResult = tuplestore_begin_heap(random_access, false, max_kbytes);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Put rows (ctid, cluster, distance, tableoid) into the tuplestore. Why not
 * tuplestore_putvalues per row: it forms each tuple from scratch (palloc0,
 * size computation, per-attribute fill). Every row here has the same fixed
 * layout, so one heap tuple is formed once and only its fields are
 * overwritten in place (the table only when a new run of rows starts);
 * tuplestore_puttuple then makes its copy with one palloc and memcpy. The
 * offsets come from the result descriptor; should it ever hold a
 * variable-width or unexpected column, the generic path runs.
 */
static void
emit_label_rows(ReturnSetInfo *rsinfo, const PgkmClustering *c)
{
	TupleDesc	desc = rsinfo->setDesc;
	const PgkmData *data = &c->data;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	uint32		off[4];
	uint32		pos = 0;
	bool		fixed = (desc->natts == 4);
	const Oid	types[4] = {TIDOID, INT4OID, FLOAT8OID, OIDOID};
	int32		run = -1;
	int64		next_run = 0;	/* first row of the next run */
	Oid			tableoid = InvalidOid;
	HeapTuple	row = NULL;
	char	   *tup = NULL;

	for (int a = 0; fixed && a < 4; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (att->atttypid != types[a] || att->attlen <= 0)
			fixed = false;
		else
		{
			pos = att_align_nominal(pos, att->attalign);
			off[a] = pos;
			pos += att->attlen;
		}
	}
	for (int64 i = 0; i < c->result.n; i++)
	{
		int32		label = c->result.labels[i];
		double		dist = c->result.distances[i];
		bool		new_table = false;

		while (i >= next_run && run + 1 < data->ntables)
		{
			run++;
			tableoid = data->tables[run].tableoid;
			next_run = run + 1 < data->ntables ? data->tables[run + 1].first : PG_INT64_MAX;
			new_table = true;
		}
		values[0] = PointerGetDatum(&data->tids[i]);
		values[1] = Int32GetDatum(label);
		values[2] = Float8GetDatum(dist);
		values[3] = ObjectIdGetDatum(tableoid);
		if (!fixed)
			tuplestore_putvalues(rsinfo->setResult, desc, values, nulls);
		else
		{
			if (row == NULL)
			{
				row = heap_form_tuple(desc, values, nulls);
				tup = (char *) row->t_data + row->t_data->t_hoff;
				Assert(row->t_len == row->t_data->t_hoff + pos);
			}
			memcpy(tup + off[0], &data->tids[i], sizeof(ItemPointerData));
			memcpy(tup + off[1], &label, sizeof(label));
			memcpy(tup + off[2], &dist, sizeof(dist));
			if (new_table)
				memcpy(tup + off[3], &tableoid, sizeof(tableoid));
			tuplestore_puttuple(rsinfo->setResult, row);
		}
		if ((i + 1) % PGKM_EMIT_CHECK_ROWS == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (row != NULL)
		heap_freetuple(row);
}

/*
 * kmeans(relation, columns, k, ...) RETURNS TABLE (ctid, cluster, distance,
 * tableoid): one row per clustered input row, joinable back to the relation
 * by tableoid and ctid in the same statement (same snapshot).
 */
extern "C" Datum
pgkm_kmeans(PG_FUNCTION_ARGS)
{
	PgkmArgs	args;
	PgkmClustering *c;
	ReturnSetInfo *rsinfo;

	if (pgkm_args_have_null(fcinfo, 0))
	{
		InitMaterializedSRF(fcinfo, 0);
		return (Datum) 0;
	}
	pgkm_parse_args(fcinfo, 0, &args);
	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	c = pgkm_cluster(&args, true);
	resize_output_store(rsinfo, pgkm_output_max_kbytes(&args, &c->data));
	emit_label_rows(rsinfo, c);
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

	if (pgkm_args_have_null(fcinfo, 0))
	{
		InitMaterializedSRF(fcinfo, 0);
		return (Datum) 0;
	}
	pgkm_parse_args(fcinfo, 0, &args);
	InitMaterializedSRF(fcinfo, 0);

	c = pgkm_cluster(&args, false);
	pgkm_emit_centroid_rows(fcinfo, c->result.k, c->result.d, c->result.centroids,
							c->result.sizes, c->result.cluster_inertia);
	pgkm_report_timing(c, c->result.k);
	pgkm_clustering_end(c);
	return (Datum) 0;
}
