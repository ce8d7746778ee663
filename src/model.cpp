/*
 * model.cpp: the SQL functions of stored models. kmeans_fit() clusters and
 * stores a model; kmeans_predict() assigns rows to one; kmeans_model_centroids()
 * reads one; kmeans_drop_model(), kmeans_grant_model() and
 * kmeans_revoke_model() drop one and say who else may use it. Reading and
 * writing the store, and who may do what, is model_store.cpp's.
 */
#include "model_store.h"

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
 * A plain array of n (rows x cols when cols > 0) pass-by-value 4-byte
 * elements copied from v in one piece: a kernel model's training rows can
 * be millions of values, too many to go through a Datum each.
 */
static Datum
plain_array_datum(const void *v, int64 rows, int32 cols, Oid elemtype)
{
	int			ndim = cols > 0 ? 2 : 1;
	Size		nbytes = (Size) rows * Max(cols, 1) * 4;
	Size		size = ARR_OVERHEAD_NONULLS(ndim) + nbytes;
	ArrayType  *a = (ArrayType *) palloc0(size);

	SET_VARSIZE(a, size);
	a->ndim = ndim;
	a->dataoffset = 0;
	a->elemtype = elemtype;
	ARR_DIMS(a)[0] = (int) rows;
	ARR_LBOUND(a)[0] = 1;
	if (cols > 0)
	{
		ARR_DIMS(a)[1] = cols;
		ARR_LBOUND(a)[1] = 1;
	}
	memcpy(ARR_DATA_PTR(a), v, nbytes);
	return PointerGetDatum(a);
}

/*
 * A kernel model stores its training rows: at most this many values (rows x
 * features, 40 MB of real), so that one prediction, O(rows x features),
 * stays in the milliseconds.
 */
#define PGKM_KERNEL_MODEL_MAX_VALUES 10000000

/* The stored columns kmeans_fit() writes, and their values ($1-$3: see pgkm_store_save). */
#define FIT_COLUMNS \
	"relation, columns, k, d, method, options, centroids, initial_centroids, sizes, " \
	"cluster_inertia, inertia, iterations, converged, elapsed_s, device, n_rows, n_skipped, " \
	"trained_at, kernel_rows, kernel_members, kernel_norms, kernel_shift, kernel_scale_log2"
#define FIT_VALUES \
	"$4, $5, $6, $7, $8, pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(" \
	"'max_iter', $9, 'tol', $10, 'init', $11, 'n_init', $12, 'seed', $13, 'device', $14, " \
	"'k', $15, 'kernel', $27, 'gamma', $28, 'coef0', $29, 'degree', $30, 'kernel_matrix', $31)), " \
	"$16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, pg_catalog.now(), $32, $33, $34, " \
	"$35, $36"
#define FIT_NVALS 33

/*
 * The kernel values of a fit (the options jsonb drops the NULLs): the
 * kernel and the parameters it uses (gamma in the table's units), where K
 * lived, and what prediction needs: the rows as clustered, float((v -
 * shift) * 2^scale_log2), with that shift (NULL for none) and scale, the
 * partition of the final feature-space centroids and their norms (in the
 * same units as the rows). All NULL for another method.
 */
static void
add_kernel_values(const PgkmArgs *args, const PgkmClustering *c, Oid *types, Datum *vals,
				  char *nulls, int *i)
{
	const pgkm_result *r = &c->result;
	const pgkm_kernel_result *kr = r->kernel;
	const bool	gamma = args->kernel != PGKM_KERNEL_LINEAR;
	const bool	coef0 = args->kernel == PGKM_KERNEL_POLYNOMIAL || args->kernel == PGKM_KERNEL_SIGMOID;
	const bool	degree = args->kernel == PGKM_KERNEL_POLYNOMIAL;

#define KARG(t, present, v) (types[*i] = (t), nulls[*i] = (kr && (present)) ? ' ' : 'n', \
							 vals[*i] = nulls[*i] == ' ' ? (v) : (Datum) 0, (*i)++)
	KARG(TEXTOID, true, CStringGetTextDatum(args->kernel_name));	/* $27 */
	KARG(FLOAT8OID, gamma, Float8GetDatum(kr->gamma));
	KARG(FLOAT8OID, coef0, Float8GetDatum(args->coef0));	/* $29 */
	KARG(INT4OID, degree, Int32GetDatum(args->degree));
	KARG(TEXTOID, true, CStringGetTextDatum(kr->matrix));	/* $31 */
	KARG(FLOAT4ARRAYOID, true, plain_array_datum(c->data.x, r->n, r->d, FLOAT4OID));
	KARG(INT4ARRAYOID, true, plain_array_datum(kr->members, r->n, 0, INT4OID));	/* $33 */
	KARG(FLOAT8ARRAYOID, true, PointerGetDatum(pgkm_float8_array(kr->centroid_norms, r->k)));
	KARG(FLOAT8ARRAYOID, c->data.shift != NULL,	/* $35 */
		 PointerGetDatum(pgkm_float8_array(c->data.shift, r->d)));
	KARG(INT4OID, true, Int32GetDatum(c->data.scale_log2));
#undef KARG
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
	pgkm_parse_args(fcinfo, 1, &args);
	if (args.method == PGKM_METHOD_KERNEL)
		args.max_model_values = PGKM_KERNEL_MODEL_MAX_VALUES;
	if (get_call_result_type(fcinfo, NULL, &retdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "kmeans_fit must return a composite type");
	retdesc = BlessTupleDesc(retdesc);

	pgkm_store_open(fcinfo, &st);
	if (pgkm_store_owner_of(&st, model, &owner))
		pgkm_require_model_owner(name, owner, "replace it", PGKM_HINT_REPLACE);
	pgkm_store_close(&st);

	c = pgkm_cluster(&args, false);

	{
		const pgkm_result *r = &c->result;
		Datum	   *colelems = (Datum *) palloc(sizeof(Datum) * args.ncols);
		Oid			types[FIT_NVALS];
		Datum		vals[FIT_NVALS];
		char		nulls[FIT_NVALS];
		int			i = 0;

		for (int j = 0; j < args.ncols; j++)
			colelems[j] = CStringGetTextDatum(args.colnames[j]);
		memset(nulls, ' ', sizeof(nulls));
#define ARG(t, v) (types[i] = (t), vals[i] = (v), i++)
		ARG(TEXTOID, CStringGetTextDatum(c->data.relname));	/* $4 */
		ARG(TEXTARRAYOID, PointerGetDatum(construct_array(colelems, args.ncols, TEXTOID,
														  -1, false, TYPALIGN_INT)));
		ARG(INT4OID, Int32GetDatum(r->k));	/* $6 */
		ARG(INT4OID, Int32GetDatum(r->d));
		ARG(TEXTOID, CStringGetTextDatum(args.method_name));	/* $8 */
		ARG(INT4OID, Int32GetDatum(args.max_iter));
		ARG(FLOAT8OID, Float8GetDatum(args.tol));	/* $10 */
		ARG(TEXTOID, CStringGetTextDatum(args.init_name));
		ARG(INT4OID, Int32GetDatum(args.n_init));	/* $12 */
		ARG(INT8OID, Int64GetDatum(args.seed));
		ARG(TEXTOID, CStringGetTextDatum(args.device_name));	/* $14 */
		ARG(INT4OID, Int32GetDatum(r->k_requested));
		ARG(FLOAT8ARRAYOID, matrix_datum(r->centroids, r->k, r->d));	/* $16 */
		if (r->initial_centroids)
			ARG(FLOAT8ARRAYOID, matrix_datum(r->initial_centroids, r->k, r->d));
		else
		{
			nulls[i] = 'n';
			ARG(FLOAT8ARRAYOID, (Datum) 0);
		}
		ARG(INT8ARRAYOID, vector_datum_i8(r->sizes, r->k));	/* $18 */
		ARG(FLOAT8ARRAYOID, PointerGetDatum(pgkm_float8_array(c->cluster_inertia, r->k)));
		ARG(FLOAT8OID, Float8GetDatum(r->inertia));	/* $20 */
		ARG(INT4OID, Int32GetDatum(r->iterations));
		ARG(BOOLOID, BoolGetDatum(r->converged != 0));	/* $22 */
		ARG(FLOAT8OID, Float8GetDatum(r->elapsed_s));
		ARG(TEXTOID, CStringGetTextDatum(r->device ? r->device : "cpu"));	/* $24 */
		ARG(INT8OID, Int64GetDatum(r->n));
		ARG(INT8OID, Int64GetDatum(c->data.n_skipped_null));	/* $26 */
		add_kernel_values(&args, c, types, vals, nulls, &i);	/* $27 - $36 */
#undef ARG
		Assert(i == FIT_NVALS);

		pgkm_store_open(fcinfo, &st);
		pgkm_store_save(&st, model, FIT_COLUMNS, FIT_VALUES, FIT_NVALS, types, vals, nulls);
		result = pgkm_store_model_row(&st, model, retdesc, upper);
		if (result == NULL)
			elog(ERROR, "stored k-means model \"%s\" is not visible to its owner", name);
		pgkm_store_close(&st);
	}
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
	double		dist2;

	if (!predict_cache_current(cache, model))
	{
		MemoryContext fcxt = fcinfo->flinfo->fn_mcxt;

		fcinfo->flinfo->fn_extra = NULL;	/* no half-built cache on error */
		if (cache != NULL)
		{
			pfree(cache->name);
			pfree(cache->seen.xids);
			pfree(cache->m.centroids);
			pfree(cache->m.sizes);
			pfree(cache->m.cluster_inertia);
			if (cache->m.kernel_rows)
			{
				pfree(cache->m.kernel_rows);
				pfree(cache->m.kernel_members);
				pfree(cache->m.kernel_norms);
				if (cache->m.kernel.shift)
					pfree((void *) cache->m.kernel.shift);
			}
			memset(&cache->m, 0, sizeof(cache->m));
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
	if (array_contains_nulls(feat))
		PG_RETURN_NULL();
	nfeat = ArrayGetNItems(ARR_NDIM(feat), ARR_DIMS(feat));
	if (nfeat != cache->m.d)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("features have %d elements, but k-means model \"%s\" has %d",
						nfeat, cache->name, cache->m.d)));
	x = (const double *) ARR_DATA_PTR(feat);
	for (int i = 0; i < nfeat; i++)
		if (!std::isfinite(x[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("features contain a non-finite value (%s) at position %d",
							std::isnan(x[i]) ? "NaN" : (x[i] > 0 ? "Infinity" : "-Infinity"),
							i + 1)));
	if (cache->m.kernel_rows)
	{
		/* -1 only when the engine could not allocate its k sums (the model was checked) */
		int32		c = pgkm_kernel_nearest(&cache->m.kernel, cache->m.kernel_rows,
											cache->m.kernel_members, cache->m.kernel_n,
											cache->m.d, cache->m.k, cache->m.kernel_norms,
											x, &dist2);

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
	PG_RETURN_INT32(pgkm_nearest(cache->m.centroids, cache->m.k, cache->m.d, x, &dist2));
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

/* kmeans_grant_model / kmeans_revoke_model(model, grantee): 'public' is every role. */
static void
grant_or_revoke(FunctionCallInfo fcinfo, bool grant)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	Oid			grantee;
	PgkmStore	st;
	Oid			token;

	prevent_write(grant ? "kmeans_grant_model()" : "kmeans_revoke_model()");
	grantee = get_role_oid_or_public(text_to_cstring(PG_GETARG_TEXT_PP(1)));
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
