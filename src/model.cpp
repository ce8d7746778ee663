/*
 * model.cpp: stored models. kmeans_fit() clusters and stores a row in the
 * extension's kmeans_models table; kmeans_predict() assigns rows to a stored
 * model; kmeans_model_centroids() and kmeans_drop_model() read and delete.
 *
 * All table access goes through SPI as the calling user (SECURITY INVOKER),
 * so the table's privileges and row-level security policies decide; the
 * explicit owner checks only turn a silent RLS no-op into a clear error.
 */
#include "pg_kmeans.h"

#include <cmath>

extern "C"
{
#include "access/xact.h"
#include "catalog/namespace.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(pgkm_kmeans_fit);
PG_FUNCTION_INFO_V1(pgkm_kmeans_predict);
PG_FUNCTION_INFO_V1(pgkm_kmeans_model_centroids);
PG_FUNCTION_INFO_V1(pgkm_kmeans_drop_model);
}

/*
 * The models table, schema-qualified. Why from the function's own schema:
 * the extension is not relocatable, so its functions and its table share a
 * schema, and this is immune to the caller's search_path.
 */
static char *
models_table(FunctionCallInfo fcinfo)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);

	return quote_qualified_identifier(get_namespace_name(nsp), "kmeans_models");
}

static void
connect_spi(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

static void
unknown_model(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("k-means model \"%s\" does not exist", name),
			 errhint("List the models with: SELECT model FROM kmeans_models;")));
}

/*
 * Owner of a model, or NULL when there is none. Must be called inside SPI;
 * the result is palloc'd in the caller's (upper) context.
 */
static char *
model_owner(const char *table, text *model)
{
	char	   *sql = psprintf("SELECT owner::text FROM %s WHERE model = $1", table);
	Oid			argtypes[1] = {TEXTOID};
	Datum		argvals[1] = {PointerGetDatum(model)};
	int			rc = SPI_execute_with_args(sql, 1, argtypes, argvals, NULL, true, 1);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "reading kmeans_models failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/*
 * Only a model's owner (or a superuser) may replace or drop it. Why check
 * here when RLS already forbids it: under RLS a DELETE of another role's row
 * silently deletes nothing, and an upsert fails with a generic policy error.
 */
static void
require_model_owner(const char *owner, const char *name, const char *action)
{
	char	   *me = GetUserNameFromId(GetUserId(), false);

	if (owner != NULL && strcmp(owner, me) != 0 && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of k-means model \"%s\" to %s it", name, action),
				 errdetail("The model belongs to role \"%s\".", owner),
				 errhint("Choose another model name, or ask its owner to drop it.")));
}

/* A 2-D float8[] k x d (lower bounds 1) from row-major doubles. */
static Datum
matrix_datum(const double *v, int32 k, int32 d)
{
	Datum	   *elems = (Datum *) palloc(sizeof(Datum) * (Size) k * d);
	int			dims[2] = {k, d};
	int			lbs[2] = {1, 1};

	for (int64 i = 0; i < (int64) k * d; i++)
		elems[i] = Float8GetDatum(v[i]);
	return PointerGetDatum(construct_md_array(elems, NULL, 2, dims, lbs, FLOAT8OID,
											  sizeof(float8), FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
}

static Datum
vector_datum_i8(const int64 *v, int32 n)
{
	Datum	   *elems = (Datum *) palloc(sizeof(Datum) * Max(n, 1));

	for (int32 i = 0; i < n; i++)
		elems[i] = Int64GetDatum(v[i]);
	return PointerGetDatum(construct_array(elems, n, INT8OID, sizeof(int64),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * kmeans_fit(model, relation, columns, k, ...) RETURNS kmeans_models: run
 * k-means like kmeans_centroids() and upsert the model row; returns the row
 * as stored. The owner check runs before the scan, so a name clash costs
 * nothing.
 */
extern "C" Datum
pgkm_kmeans_fit(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	char	   *name = text_to_cstring(model);
	char	   *table = models_table(fcinfo);
	PgkmArgs	args;
	PgkmClustering *c;
	TupleDesc	retdesc;
	MemoryContext upper = CurrentMemoryContext;
	HeapTuple	result;

	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model name must not be empty")));
	pgkm_parse_args(fcinfo, 1, &args);
	if (get_call_result_type(fcinfo, NULL, &retdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "kmeans_fit must return a composite type");
	retdesc = BlessTupleDesc(retdesc);

	connect_spi();
	require_model_owner(model_owner(table, model), name, "replace");
	SPI_finish();

	c = pgkm_cluster(&args, false);

	{
		const pgkm_result *r = &c->result;
		Datum	   *colelems = (Datum *) palloc(sizeof(Datum) * args.ncols);
		char	   *sql;
		Oid			types[23];
		Datum		vals[23];
		char		nulls[23];
		int			i = 0;
		int			rc;

		for (int j = 0; j < args.ncols; j++)
			colelems[j] = CStringGetTextDatum(args.colnames[j]);
		memset(nulls, ' ', sizeof(nulls));
#define ARG(t, v) (types[i] = (t), vals[i] = (v), i++)
		ARG(TEXTOID, PointerGetDatum(model));	/* $1 */
		ARG(TEXTOID, CStringGetTextDatum(c->data.relname));	/* $2 */
		ARG(TEXTARRAYOID, PointerGetDatum(construct_array(colelems, args.ncols, TEXTOID,
														  -1, false, TYPALIGN_INT)));
		ARG(INT4OID, Int32GetDatum(r->k));	/* $4 */
		ARG(INT4OID, Int32GetDatum(r->d));
		ARG(TEXTOID, CStringGetTextDatum(args.method_name));	/* $6 */
		ARG(INT4OID, Int32GetDatum(args.max_iter));
		ARG(FLOAT8OID, Float8GetDatum(args.tol));	/* $8 */
		ARG(TEXTOID, CStringGetTextDatum(args.init_name));
		ARG(INT4OID, Int32GetDatum(args.n_init));	/* $10 */
		ARG(INT8OID, Int64GetDatum(args.seed));
		ARG(TEXTOID, CStringGetTextDatum(args.device_name));	/* $12 */
		ARG(INT4OID, Int32GetDatum(r->k_requested));
		ARG(FLOAT8ARRAYOID, matrix_datum(r->centroids, r->k, r->d));	/* $14 */
		if (r->initial_centroids)
			ARG(FLOAT8ARRAYOID, matrix_datum(r->initial_centroids, r->k, r->d));
		else
		{
			nulls[i] = 'n';
			ARG(FLOAT8ARRAYOID, (Datum) 0);
		}
		ARG(INT8ARRAYOID, vector_datum_i8(r->sizes, r->k));	/* $16 */
		ARG(FLOAT8ARRAYOID, PointerGetDatum(pgkm_float8_array(c->cluster_inertia, r->k)));
		ARG(FLOAT8OID, Float8GetDatum(r->inertia));	/* $18 */
		ARG(INT4OID, Int32GetDatum(r->iterations));
		ARG(BOOLOID, BoolGetDatum(r->converged != 0));	/* $20 */
		ARG(FLOAT8OID, Float8GetDatum(r->elapsed_s));
		ARG(TEXTOID, CStringGetTextDatum(r->device ? r->device : "cpu"));	/* $22 */
		ARG(INT8OID, Int64GetDatum(r->n));
#undef ARG
		Assert(i == 23);

		sql = psprintf("INSERT INTO %s AS m (model, owner, relation, columns, k, d, method, options, "
					   "centroids, initial_centroids, sizes, cluster_inertia, inertia, iterations, "
					   "converged, elapsed_s, device, n_rows, n_skipped, trained_at) "
					   "VALUES ($1, current_user, $2, $3, $4, $5, $6, "
					   "pg_catalog.jsonb_build_object('max_iter', $7, 'tol', $8, 'init', $9, 'n_init', $10, "
					   "'seed', $11, 'device', $12, 'k', $13), "
					   "$14, $15, $16, $17, $18, $19, $20, $21, $22, $23, %lld, pg_catalog.now()) "
					   "ON CONFLICT (model) DO UPDATE SET owner = EXCLUDED.owner, "
					   "relation = EXCLUDED.relation, columns = EXCLUDED.columns, k = EXCLUDED.k, "
					   "d = EXCLUDED.d, method = EXCLUDED.method, options = EXCLUDED.options, "
					   "centroids = EXCLUDED.centroids, initial_centroids = EXCLUDED.initial_centroids, "
					   "sizes = EXCLUDED.sizes, cluster_inertia = EXCLUDED.cluster_inertia, "
					   "inertia = EXCLUDED.inertia, iterations = EXCLUDED.iterations, "
					   "converged = EXCLUDED.converged, elapsed_s = EXCLUDED.elapsed_s, "
					   "device = EXCLUDED.device, n_rows = EXCLUDED.n_rows, "
					   "n_skipped = EXCLUDED.n_skipped, trained_at = EXCLUDED.trained_at "
					   "RETURNING m.*",
					   table, (long long) c->data.n_skipped_null);

		connect_spi();
		rc = SPI_execute_with_args(sql, 23, types, vals, nulls, false, 0);
		if (rc != SPI_OK_INSERT_RETURNING || SPI_processed != 1)
			elog(ERROR, "storing the model failed: %s", SPI_result_code_string(rc));
		{
			HeapTuple	tup = SPI_tuptable->vals[0];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			Datum	   *rv = (Datum *) palloc(sizeof(Datum) * desc->natts);
			bool	   *rn = (bool *) palloc(sizeof(bool) * desc->natts);
			MemoryContext spicxt;

			if (desc->natts != retdesc->natts)
				elog(ERROR, "kmeans_models has %d columns, kmeans_fit returns %d",
					 desc->natts, retdesc->natts);
			heap_deform_tuple(tup, desc, rv, rn);
			spicxt = MemoryContextSwitchTo(upper);
			result = heap_form_tuple(retdesc, rv, rn);
			MemoryContextSwitchTo(spicxt);
		}
		SPI_finish();
	}
	pgkm_clustering_end(c);
	PG_RETURN_DATUM(HeapTupleGetDatum(result));
}

/*
 * A model as kmeans_predict() keeps it in fn_extra. Why the transaction and
 * command ids: the cache must not outlive a refit of the same name; any
 * write (a refit) advances the command id, so a stale entry is detected
 * without re-reading the table on every row.
 */
typedef struct PredictCache
{
	char	   *name;
	LocalTransactionId lxid;
	CommandId	cid;
	int32		k;
	int32		d;
	double	   *centroids;		/* k x d */
} PredictCache;

typedef struct ModelArrays
{
	int32		k;
	int32		d;
	double	   *centroids;
	int64	   *sizes;
	double	   *cluster_inertia;
} ModelArrays;

/*
 * Read and validate a model's arrays (the table is writable by owners, so a
 * row edited by hand must not crash a reader). Allocates in cxt.
 */
static void
load_model(FunctionCallInfo fcinfo, text *model, bool with_stats,
		   MemoryContext cxt, ModelArrays *out)
{
	char	   *name = text_to_cstring(model);
	char	   *sql = psprintf("SELECT centroids, sizes, cluster_inertia FROM %s WHERE model = $1",
							   models_table(fcinfo));
	Oid			argtypes[1] = {TEXTOID};
	Datum		argvals[1] = {PointerGetDatum(model)};
	bool		isnull;
	ArrayType  *cent;
	int			rc;
	MemoryContext old;

	connect_spi();
	rc = SPI_execute_with_args(sql, 1, argtypes, argvals, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "reading kmeans_models failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
		unknown_model(name);

	cent = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull || ARR_NDIM(cent) != 2 || ARR_ELEMTYPE(cent) != FLOAT8OID ||
		array_contains_nulls(cent))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("k-means model \"%s\" has malformed centroids", name),
				 errhint("Refit the model with kmeans_fit().")));
	old = MemoryContextSwitchTo(cxt);
	out->k = ARR_DIMS(cent)[0];
	out->d = ARR_DIMS(cent)[1];
	out->centroids = (double *) palloc(sizeof(double) * (Size) out->k * out->d);
	memcpy(out->centroids, ARR_DATA_PTR(cent), sizeof(double) * (Size) out->k * out->d);
	out->sizes = NULL;
	out->cluster_inertia = NULL;
	if (with_stats)
	{
		ArrayType  *sz = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0],
														  SPI_tuptable->tupdesc, 2, &isnull));
		ArrayType  *ci = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0],
														  SPI_tuptable->tupdesc, 3, &isnull));

		if (ArrayGetNItems(ARR_NDIM(sz), ARR_DIMS(sz)) != out->k ||
			ArrayGetNItems(ARR_NDIM(ci), ARR_DIMS(ci)) != out->k ||
			array_contains_nulls(sz) || array_contains_nulls(ci))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("k-means model \"%s\" has malformed sizes or inertia", name)));
		out->sizes = (int64 *) palloc(sizeof(int64) * out->k);
		memcpy(out->sizes, ARR_DATA_PTR(sz), sizeof(int64) * out->k);
		out->cluster_inertia = (double *) palloc(sizeof(double) * out->k);
		memcpy(out->cluster_inertia, ARR_DATA_PTR(ci), sizeof(double) * out->k);
	}
	MemoryContextSwitchTo(old);
	SPI_finish();
}

/*
 * kmeans_predict(model, features) RETURNS integer: the 0-based cluster of
 * the nearest centroid, or NULL when a feature is NULL. Called once per row,
 * so the model is cached per call site (fn_extra) and only the distance
 * computation runs per row.
 */
extern "C" Datum
pgkm_kmeans_predict(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	ArrayType  *feat = PG_GETARG_ARRAYTYPE_P(1);
	PredictCache *cache = (PredictCache *) fcinfo->flinfo->fn_extra;
	int			nfeat;
	const double *x;
	double		dist2;

	if (cache == NULL ||
		cache->lxid != MyProc->lxid ||
		cache->cid != GetCurrentCommandId(false) ||
		strlen(cache->name) != VARSIZE_ANY_EXHDR(model) ||
		memcmp(cache->name, VARDATA_ANY(model), VARSIZE_ANY_EXHDR(model)) != 0)
	{
		MemoryContext fcxt = fcinfo->flinfo->fn_mcxt;
		ModelArrays m;

		if (cache != NULL)
		{
			pfree(cache->name);
			pfree(cache->centroids);
		}
		else
			cache = (PredictCache *) MemoryContextAllocZero(fcxt, sizeof(PredictCache));
		fcinfo->flinfo->fn_extra = NULL;	/* no half-built cache on error */
		load_model(fcinfo, model, false, fcxt, &m);
		cache->name = MemoryContextStrdup(fcxt, text_to_cstring(model));
		cache->lxid = MyProc->lxid;
		cache->cid = GetCurrentCommandId(false);
		cache->k = m.k;
		cache->d = m.d;
		cache->centroids = m.centroids;
		fcinfo->flinfo->fn_extra = cache;
	}

	if (ARR_NDIM(feat) > 1 || ARR_ELEMTYPE(feat) != FLOAT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a one-dimensional array")));
	if (array_contains_nulls(feat))
		PG_RETURN_NULL();
	nfeat = ArrayGetNItems(ARR_NDIM(feat), ARR_DIMS(feat));
	if (nfeat != cache->d)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("features have %d elements, but k-means model \"%s\" has %d",
						nfeat, cache->name, cache->d)));
	x = (const double *) ARR_DATA_PTR(feat);
	for (int i = 0; i < nfeat; i++)
		if (!std::isfinite(x[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("features contain a non-finite value (%s) at position %d",
							std::isnan(x[i]) ? "NaN" : (x[i] > 0 ? "Infinity" : "-Infinity"),
							i + 1)));
	PG_RETURN_INT32(pgkm_nearest(cache->centroids, cache->k, cache->d, x, &dist2));
}

/*
 * kmeans_model_centroids(model): the same rows kmeans_centroids() returned
 * when the model was fitted.
 */
extern "C" Datum
pgkm_kmeans_model_centroids(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	ModelArrays m;

	InitMaterializedSRF(fcinfo, 0);
	load_model(fcinfo, model, true, CurrentMemoryContext, &m);
	pgkm_emit_centroid_rows(fcinfo, m.k, m.d, m.centroids, m.sizes, m.cluster_inertia);
	return (Datum) 0;
}

/*
 * kmeans_drop_model(model): delete a model; unknown names and other roles'
 * models are errors rather than silent no-ops.
 */
extern "C" Datum
pgkm_kmeans_drop_model(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	char	   *name = text_to_cstring(model);
	char	   *table = models_table(fcinfo);
	char	   *owner;
	Oid			argtypes[1] = {TEXTOID};
	Datum		argvals[1] = {PointerGetDatum(model)};
	int			rc;

	connect_spi();
	owner = model_owner(table, model);
	if (owner == NULL)
		unknown_model(name);
	require_model_owner(owner, name, "drop");
	rc = SPI_execute_with_args(psprintf("DELETE FROM %s WHERE model = $1", table),
							   1, argtypes, argvals, NULL, false, 0);
	if (rc != SPI_OK_DELETE)
		elog(ERROR, "deleting the model failed: %s", SPI_result_code_string(rc));
	SPI_finish();
	PG_RETURN_VOID();
}
