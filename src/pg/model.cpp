/*
 * model.cpp: the SQL functions of stored models. kmeans_fit() clusters and
 * stores a model; kmeans_predict() assigns rows to one; kmeans_model_centroids()
 * reads one; kmeans_drop_model(), kmeans_grant_model() and
 * kmeans_revoke_model() drop one and say who else may use it. Reading and
 * writing the store, and who may do what, is model_store.cpp's.
 */
#include "model_store.h"
#include "arrays.h"
#include "clustering.h"
#include "errors.h"
#include "srf.h"

#include <cmath>

extern "C"
{
#include "access/xact.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(pgkm_kmeans_fit);
PG_FUNCTION_INFO_V1(pgkm_kmeans_predict);
PG_FUNCTION_INFO_V1(pgkm_kmeans_model_centroids);
PG_FUNCTION_INFO_V1(pgkm_kmeans_drop_model);
PG_FUNCTION_INFO_V1(pgkm_kmeans_grant_model);
PG_FUNCTION_INFO_V1(pgkm_kmeans_revoke_model);
}

/*
 * The functions that write refuse at once in a read-only transaction (and
 * so on a hot standby) or in parallel mode, before any scan or clustering.
 */
static void
prevent_write(const char *function)
{
	PreventCommandIfReadOnly(function);
	PreventCommandIfParallelMode(function);
}

/*
 * A kernel model stores its training rows: at most this many values (rows x
 * features, 40 MB of real), so that one prediction, O(rows x features),
 * stays in the milliseconds.
 */
#define PGKM_KERNEL_MODEL_MAX_VALUES 10000000

/* Longest model name: the store's primary key must stay within a btree entry (2,704 bytes). */
#define PGKM_MODEL_NAME_MAX_BYTES 1024

/*
 * The units of the fit's float buffer, float((v - shift) * 2^scale_log2),
 * with that shift (NULL for none) and scale, and the sums' grid the data was
 * put on: prediction rounds its features as the training rows were rounded,
 * so that they get their fitted labels.
 */
static void
add_units(const PgkmClustering *c, PgkmStoreRow *row)
{
	if (c->data.shift != NULL)
		pgkm_store_set(row, "shift", FLOAT8ARRAYOID,
					   PointerGetDatum(pgkm_array_from(c->data.shift, c->result.d, 0, FLOAT8OID)));
	else
		pgkm_store_set_null(row, "shift", FLOAT8ARRAYOID);
	pgkm_store_set(row, "scale_log2", INT4OID, Int32GetDatum(c->data.scale_log2));
	if (c->result.sum_scales != NULL)
	{
		int32	   *e = (int32 *) palloc(sizeof(int32) * c->result.d);

		for (int32 j = 0; j < c->result.d; j++)
			e[j] = std::ilogb(c->result.sum_scales[j]);	/* powers of two */
		pgkm_store_set(row, "sum_scale_log2", INT4ARRAYOID,
					   PointerGetDatum(pgkm_array_from(e, c->result.d, 0, INT4OID)));
	}
	else
		pgkm_store_set_null(row, "sum_scale_log2", INT4ARRAYOID);
}

/*
 * The kernel values of a fit: among the options, the kernel and the
 * parameters it uses (gamma in the table's units) and where K lived; in
 * their columns, what prediction needs: the rows as clustered (in the
 * buffer's units), the partition of the final feature-space centroids and
 * their norms (in the same units). For another method no option, and the
 * columns NULL (a refit may replace a kernel model).
 */
static void
add_kernel_values(const PgkmArgs *args, const PgkmClustering *c, PgkmStoreRow *row)
{
	const pgkm_result *r = &c->result;
	const pgkm_kernel_result *kr = r->kernel;

	if (kr == NULL)
	{
		pgkm_store_set_null(row, "kernel_rows", FLOAT4ARRAYOID);
		pgkm_store_set_null(row, "kernel_members", INT4ARRAYOID);
		pgkm_store_set_null(row, "kernel_norms", FLOAT8ARRAYOID);
		return;
	}
	pgkm_store_set_option(row, "kernel", TEXTOID, CStringGetTextDatum(args->kernel_name));
	if (args->kernel != PGKM_KERNEL_LINEAR)
		pgkm_store_set_option(row, "gamma", FLOAT8OID, Float8GetDatum(kr->gamma));
	if (args->kernel == PGKM_KERNEL_POLYNOMIAL || args->kernel == PGKM_KERNEL_SIGMOID)
		pgkm_store_set_option(row, "coef0", FLOAT8OID, Float8GetDatum(args->coef0));
	if (args->kernel == PGKM_KERNEL_POLYNOMIAL)
		pgkm_store_set_option(row, "degree", INT4OID, Int32GetDatum(args->degree));
	pgkm_store_set_option(row, "kernel_matrix", TEXTOID, CStringGetTextDatum(kr->matrix));
	pgkm_store_set(row, "kernel_rows", FLOAT4ARRAYOID,
				   PointerGetDatum(pgkm_array_from(c->data.x, r->n, r->d, FLOAT4OID)));
	pgkm_store_set(row, "kernel_members", INT4ARRAYOID,
				   PointerGetDatum(pgkm_array_from(kr->members, r->n, 0, INT4OID)));
	pgkm_store_set(row, "kernel_norms", FLOAT8ARRAYOID,
				   PointerGetDatum(pgkm_array_from(kr->centroid_norms, r->k, 0, FLOAT8OID)));
}

/*
 * The row kmeans_fit() stores: the call (relation, columns, method and
 * options as given, canonical spellings), the result (the method that ran,
 * centroids, initial centroids of the winning run when the engine kept
 * them, sizes, inertias, iterations, the device that ran), the rows
 * clustered and skipped, the time, and the buffer's units.
 */
static void
fit_values(const PgkmArgs *args, const PgkmClustering *c, PgkmStoreRow *row)
{
	const pgkm_result *r = &c->result;
	Datum	   *colelems = (Datum *) palloc(sizeof(Datum) * args->ncols);

	for (int j = 0; j < args->ncols; j++)
		colelems[j] = CStringGetTextDatum(args->colnames[j]);
	row->n = 0;
	pgkm_store_set(row, "relation", TEXTOID, CStringGetTextDatum(c->data.relname));
	pgkm_store_set(row, "columns", TEXTARRAYOID,
				   PointerGetDatum(construct_array(colelems, args->ncols, TEXTOID,
												   -1, false, TYPALIGN_INT)));
	pgkm_store_set(row, "k", INT4OID, Int32GetDatum(r->k));
	pgkm_store_set(row, "d", INT4OID, Int32GetDatum(r->d));
	pgkm_store_set(row, "method", TEXTOID, CStringGetTextDatum(args->method_name));
	pgkm_store_set(row, "method_used", TEXTOID,
				   CStringGetTextDatum(r->method_used ? r->method_used : args->method_name));
	pgkm_store_set_option(row, "max_iter", INT4OID, Int32GetDatum(args->max_iter));
	pgkm_store_set_option(row, "tol", FLOAT8OID, Float8GetDatum(args->tol));
	pgkm_store_set_option(row, "init", TEXTOID, CStringGetTextDatum(args->init_name));
	pgkm_store_set_option(row, "n_init", INT4OID, Int32GetDatum(args->n_init));
	pgkm_store_set_option(row, "seed", INT8OID, Int64GetDatum(args->seed));
	pgkm_store_set_option(row, "device", TEXTOID, CStringGetTextDatum(args->device_name));
	pgkm_store_set_option(row, "k", INT4OID, Int32GetDatum(r->k_requested));
	pgkm_store_set(row, "centroids", FLOAT8ARRAYOID,
				   PointerGetDatum(pgkm_array_from(r->centroids, r->k, r->d, FLOAT8OID)));
	if (r->initial_centroids)
		pgkm_store_set(row, "initial_centroids", FLOAT8ARRAYOID,
					   PointerGetDatum(pgkm_array_from(r->initial_centroids, r->k, r->d,
													   FLOAT8OID)));
	else
		pgkm_store_set_null(row, "initial_centroids", FLOAT8ARRAYOID);
	pgkm_store_set(row, "sizes", INT8ARRAYOID,
				   PointerGetDatum(pgkm_array_from(r->sizes, r->k, 0, INT8OID)));
	pgkm_store_set(row, "cluster_inertia", FLOAT8ARRAYOID,
				   PointerGetDatum(pgkm_array_from(r->cluster_inertia, r->k, 0, FLOAT8OID)));
	pgkm_store_set(row, "inertia", FLOAT8OID, Float8GetDatum(r->inertia));
	pgkm_store_set(row, "iterations", INT4OID, Int32GetDatum(r->iterations));
	pgkm_store_set(row, "converged", BOOLOID, BoolGetDatum(r->converged != 0));
	pgkm_store_set(row, "elapsed_s", FLOAT8OID, Float8GetDatum(r->elapsed_s));
	pgkm_store_set(row, "device", TEXTOID, CStringGetTextDatum(r->device ? r->device : "cpu"));
	pgkm_store_set(row, "n_rows", INT8OID, Int64GetDatum(r->n));
	pgkm_store_set(row, "n_skipped", INT8OID, Int64GetDatum(c->data.n_skipped_null));
	/* now(): the transaction's start */
	pgkm_store_set(row, "trained_at", TIMESTAMPTZOID,
				   TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()));
	add_units(c, row);
	add_kernel_values(args, c, row);
}

/*
 * kmeans_fit(model, relation, columns, k, ...) RETURNS kmeans_models: run
 * k-means like kmeans_centroids() and store the model; returns its row. The
 * owner check runs before the scan, so a name clash costs nothing; the
 * table is scanned as the caller (its privileges and row-level security).
 */
extern "C" Datum
pgkm_kmeans_fit(PG_FUNCTION_ARGS)
{
	text	   *model;
	char	   *name;
	PgkmArgs	args;
	PgkmClustering *c;
	PgkmStore	st;
	PgkmStoreRow row;
	TupleDesc	retdesc;
	MemoryContext upper = CurrentMemoryContext;
	HeapTuple	result;
	Oid			owner;

	if (PG_ARGISNULL(0) || pgkm_args_have_null(fcinfo, 1))
		PG_RETURN_NULL();
	model = PG_GETARG_TEXT_PP(0);
	name = text_to_cstring(model);
	prevent_write("kmeans_fit()");
	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model name must not be empty")));
	if (strlen(name) > PGKM_MODEL_NAME_MAX_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("model name is too long (%zu bytes)", strlen(name)),
				 errdetail("A model name may have at most %d bytes.", PGKM_MODEL_NAME_MAX_BYTES)));
	pgkm_parse_args(fcinfo, 1, &args);
	if (args.method == PGKM_METHOD_KERNEL)
		args.max_model_values = PGKM_KERNEL_MODEL_MAX_VALUES;
	args.stores_model = true;
	pgkm_check_model_size(args.k, args.ncols);	/* each column is one feature at least */
	if (get_call_result_type(fcinfo, NULL, &retdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "kmeans_fit must return a composite type");
	retdesc = BlessTupleDesc(retdesc);

	pgkm_store_open(fcinfo, &st);
	if (pgkm_store_owner_of(&st, model, &owner))
		pgkm_require_model_owner(name, owner, "replace it", PGKM_HINT_REPLACE);
	pgkm_store_close(&st);

	c = pgkm_cluster(&args, false);
	fit_values(&args, c, &row);
	pgkm_store_open(fcinfo, &st);
	pgkm_store_save(&st, model, &row);
	result = pgkm_store_model_row(&st, model, retdesc, upper);
	if (result == NULL)
		elog(ERROR, "stored k-means model \"%s\" is not visible to its owner", name);
	pgkm_store_close(&st);
	pgkm_clustering_end(c);
	PG_RETURN_DATUM(HeapTupleGetDatum(result));
}

/*
 * What an MVCC snapshot sees: two snapshots of one transaction with the
 * same xmin, xmax, in-progress transactions and command id see the same
 * rows. Why compare contents: a PL/pgSQL loop under READ COMMITTED reuses
 * one kmeans_predict call site across statements, each with a new snapshot
 * that may see another session's refit, drop or revoke, and a new snapshot
 * may be allocated where the old one was.
 */
typedef struct SnapshotSeen
{
	TransactionId xmin;
	TransactionId xmax;
	CommandId	curcid;
	bool		suboverflowed;
	uint32		xcnt;
	int32		subxcnt;
	TransactionId *xids;		/* xip, then subxip */
} SnapshotSeen;

static bool
snapshot_sees_same(const SnapshotSeen *seen, Snapshot snap)
{
	return snap->snapshot_type == SNAPSHOT_MVCC &&
		seen->xmin == snap->xmin && seen->xmax == snap->xmax &&
		seen->curcid == snap->curcid && seen->suboverflowed == snap->suboverflowed &&
		seen->xcnt == snap->xcnt && seen->subxcnt == snap->subxcnt &&
		memcmp(seen->xids, snap->xip, sizeof(TransactionId) * snap->xcnt) == 0 &&
		memcmp(seen->xids + snap->xcnt, snap->subxip,
			   sizeof(TransactionId) * Max(snap->subxcnt, 0)) == 0;
}

static void
snapshot_remember(SnapshotSeen *seen, Snapshot snap, MemoryContext cxt)
{
	int32		subxcnt = Max(snap->subxcnt, 0);

	seen->xmin = snap->xmin;
	seen->xmax = snap->xmax;
	seen->curcid = snap->curcid;
	seen->suboverflowed = snap->suboverflowed;
	seen->xcnt = snap->xcnt;
	seen->subxcnt = snap->subxcnt;
	seen->xids = (TransactionId *)
		MemoryContextAlloc(cxt, sizeof(TransactionId) * Max(snap->xcnt + subxcnt, 1));
	memcpy(seen->xids, snap->xip, sizeof(TransactionId) * snap->xcnt);
	memcpy(seen->xids + snap->xcnt, snap->subxip, sizeof(TransactionId) * subxcnt);
}

/*
 * A model as kmeans_predict() keeps it in fn_extra, with who read it under
 * which snapshot: within one statement the snapshot stays, so the model is
 * read once, not per row.
 */
typedef struct PredictCache
{
	char	   *name;
	LocalTransactionId lxid;
	Oid			userid;
	SnapshotSeen seen;
	PgkmModel	m;
} PredictCache;

static bool
predict_cache_current(const PredictCache *cache, text *model)
{
	return cache != NULL && ActiveSnapshotSet() &&
		cache->lxid == MyProc->lxid &&
		cache->userid == GetUserId() &&
		snapshot_sees_same(&cache->seen, GetActiveSnapshot()) &&
		strlen(cache->name) == VARSIZE_ANY_EXHDR(model) &&
		memcmp(cache->name, VARDATA_ANY(model), VARSIZE_ANY_EXHDR(model)) == 0;
}

static void
load_or_fail(FunctionCallInfo fcinfo, text *model, MemoryContext cxt, PgkmModel *m)
{
	PgkmStore	st;

	pgkm_store_open(fcinfo, &st);
	if (!pgkm_store_load(&st, model, cxt, m))
		pgkm_unknown_model(text_to_cstring(model));
	pgkm_store_close(&st);
}

/*
 * kmeans_predict(model, features) RETURNS integer: the 0-based cluster of
 * the nearest centroid, or NULL when a feature is NULL.
 */
extern "C" Datum
pgkm_kmeans_predict(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	ArrayType  *feat = PG_GETARG_ARRAYTYPE_P(1);
	PredictCache *cache = (PredictCache *) fcinfo->flinfo->fn_extra;
	int			nfeat;
	const double *x;

	if (!predict_cache_current(cache, model))
	{
		MemoryContext fcxt = fcinfo->flinfo->fn_mcxt;

		fcinfo->flinfo->fn_extra = NULL;	/* no half-built cache on error */
		if (cache != NULL)
		{
			pfree(cache->name);
			pfree(cache->seen.xids);
			pgkm_model_free(&cache->m);
		}
		else
			cache = (PredictCache *) MemoryContextAllocZero(fcxt, sizeof(PredictCache));
		load_or_fail(fcinfo, model, fcxt, &cache->m);
		cache->name = MemoryContextStrdup(fcxt, text_to_cstring(model));
		cache->lxid = MyProc->lxid;
		cache->userid = GetUserId();
		if (ActiveSnapshotSet())
			snapshot_remember(&cache->seen, GetActiveSnapshot(), fcxt);
		else
		{
			cache->seen.xids = (TransactionId *) MemoryContextAlloc(fcxt, sizeof(TransactionId));
			cache->lxid = InvalidLocalTransactionId;	/* never current */
		}
		fcinfo->flinfo->fn_extra = cache;
	}

	if (ARR_NDIM(feat) > 1 || ARR_ELEMTYPE(feat) != FLOAT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a one-dimensional array")));
	/* the length first: a wrong one is an error even where a NULL would give NULL */
	nfeat = ArrayGetNItems(ARR_NDIM(feat), ARR_DIMS(feat));
	if (nfeat != cache->m.d)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("features have %d elements, but k-means model \"%s\" has %d",
						nfeat, pgkm_echo_name(cache->name), cache->m.d)));
	if (array_contains_nulls(feat))
		PG_RETURN_NULL();
	x = (const double *) ARR_DATA_PTR(feat);
	for (int i = 0; i < nfeat; i++)
		if (!std::isfinite(x[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("features contain a non-finite value (%s) at position %d",
							pgkm_nonfinite_name(x[i]), i + 1)));
	if (cache->m.kernel_rows)
	{
		/* -1 only when the engine could not allocate its k sums (the model was checked) */
		int32		c = pgkm_kernel_nearest(&cache->m.opts, cache->m.kernel_rows,
											cache->m.kernel_members, cache->m.kernel_n,
											cache->m.d, cache->m.k, cache->m.kernel_norms,
											x, NULL);

		if (c == -2)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("features are too far from the training rows of kernel k-means model \"%s\" to compare",
							cache->name),
					 errdetail("Their kernel values with the training rows are beyond the range of double precision.")));
		if (c < 0)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory predicting with kernel k-means model \"%s\"",
							cache->name)));
		PG_RETURN_INT32(c);
	}
	{
		int32		c = pgkm_nearest(cache->m.centroids, cache->m.k, cache->m.d,
									 cache->m.units_known ? &cache->m.opts : NULL,
									 cache->m.units_known ? cache->m.sum_scales : NULL, x, NULL);

		if (c < 0)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory predicting with k-means model \"%s\"", cache->name)));
		PG_RETURN_INT32(c);
	}
}

/*
 * kmeans_model_centroids(model): the same rows kmeans_centroids() returned
 * when the model was fitted.
 */
extern "C" Datum
pgkm_kmeans_model_centroids(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	PgkmModel	m;

	InitMaterializedSRF(fcinfo, 0);
	load_or_fail(fcinfo, model, CurrentMemoryContext, &m);
	pgkm_emit_centroid_rows(fcinfo, m.k, m.d, m.centroids, m.sizes, m.cluster_inertia);
	return (Datum) 0;
}

/*
 * A model the caller may use and own, for the functions that change it:
 * unknown (or not usable) is 42704, usable but not owned 42501.
 */
static Oid
owned_model_token(PgkmStore *st, text *model, const char *action)
{
	char	   *name = text_to_cstring(model);
	Oid			token;
	Oid			owner;

	if (!pgkm_store_find(st, model, &token, &owner))
		pgkm_unknown_model(name);
	pgkm_require_model_owner(name, owner, action, PGKM_HINT_OWNER);
	return token;
}

/*
 * kmeans_drop_model(model): delete a model and its token. Of two concurrent
 * drops the second finds the row gone once the first commits: 42704.
 */
extern "C" Datum
pgkm_kmeans_drop_model(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	PgkmStore	st;
	Oid			token;

	prevent_write("kmeans_drop_model()");
	pgkm_store_open(fcinfo, &st);
	token = owned_model_token(&st, model, "drop it");
	if (!pgkm_store_delete(&st, model, token))
		pgkm_unknown_model(text_to_cstring(model));
	pgkm_token_unlink(&st, token);
	pgkm_store_close(&st);
	PG_RETURN_VOID();
}

/*
 * kmeans_grant_model / kmeans_revoke_model(model, grantee): 'public' in any
 * case is every role (as GRANT ... TO PUBLIC), unless a role has that exact
 * name (a quoted "PUBLIC" may exist).
 */
static void
grant_or_revoke(FunctionCallInfo fcinfo, bool grant)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Oid			grantee;
	PgkmStore	st;
	Oid			token;

	prevent_write(grant ? "kmeans_grant_model()" : "kmeans_revoke_model()");
	if (pg_strcasecmp(name, "public") == 0 && !OidIsValid(get_role_oid(name, true)))
		grantee = ACL_ID_PUBLIC;
	else
		grantee = get_role_oid_or_public(name);
	pgkm_store_open(fcinfo, &st);
	token = owned_model_token(&st, model, grant ? "grant its use" : "revoke its use");
	pgkm_token_grant(&st, token, grantee, grant);
	pgkm_store_close(&st);
}

extern "C" Datum
pgkm_kmeans_grant_model(PG_FUNCTION_ARGS)
{
	grant_or_revoke(fcinfo, true);
	PG_RETURN_VOID();
}

extern "C" Datum
pgkm_kmeans_revoke_model(PG_FUNCTION_ARGS)
{
	grant_or_revoke(fcinfo, false);
	PG_RETURN_VOID();
}
