/*
 * model_store.cpp: reading and writing stored k-means models.
 *
 * The models live in kmeans_model_store, on which PUBLIC has no privilege.
 * Reads that decide what a role may use go through the kmeans_models view,
 * as the calling role: the view is the one place that says who may use a
 * model. Writes run as the store's owner, after the caller's ownership was
 * checked here. Each model's token (a large object owned by the model's
 * owner) is created, granted and unlinked as the caller, so PostgreSQL's own
 * rules for large objects apply to it.
 *
 * Every statement runs with search_path = pg_catalog, pg_temp and names
 * every table, function, type and operator with its schema: no statement
 * here may run an operator or function that another role defined.
 */
#include "model_store.h"

extern "C"
{
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "utils/acl.h"
#include "utils/jsonb.h"
#include "utils/syscache.h"
}

#include <cmath>

#define PGKM_NONCE_BYTES 16

static Oid
relation_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Why from the calling function's schema: the extension is not relocatable,
 * so its functions, its table and its views share a schema, whatever the
 * caller's search_path says.
 */
void
pgkm_store_open(FunctionCallInfo fcinfo, PgkmStore *st)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	char	   *nspname = get_namespace_name(nsp);
	Oid			relid = get_relname_relid("kmeans_model_store", nsp);

	if (!OidIsValid(relid))
		elog(ERROR, "pg_kmeans model store is missing from schema \"%s\"", nspname);
	st->store = quote_qualified_identifier(nspname, "kmeans_model_store");
	st->owners = quote_qualified_identifier(nspname, "kmeans_model_owners");
	st->models = quote_qualified_identifier(nspname, "kmeans_models");
	st->store_owner = relation_owner(relid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	st->guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

void
pgkm_store_close(PgkmStore *st)
{
	AtEOXact_GUC(true, st->guc_level);
	SPI_finish();
}

/*
 * Run one statement, as the caller or as the store's owner. Why restricted
 * as the owner: nothing the statement triggers may change the session (no
 * SET ROLE, no temporary objects). A read-only statement sees the caller's
 * snapshot (kmeans_predict and kmeans_model_centroids are STABLE); any other
 * sees what this call wrote before it.
 */
static int
store_exec(PgkmStore *st, bool as_owner, const char *sql, int nargs, Oid *types,
		   Datum *vals, const char *nulls, bool read_only, int expected)
{
	Oid			saved_user;
	int			saved_sec;
	volatile int rc;

	if (!as_owner)
		rc = SPI_execute_with_args(sql, nargs, types, vals, nulls, read_only, 0);
	else
	{
		GetUserIdAndSecContext(&saved_user, &saved_sec);
		SetUserIdAndSecContext(st->store_owner, saved_sec | SECURITY_LOCAL_USERID_CHANGE |
							   SECURITY_RESTRICTED_OPERATION);
		PG_TRY();
		{
			rc = SPI_execute_with_args(sql, nargs, types, vals, nulls, read_only, 0);
		}
		PG_FINALLY();
		{
			SetUserIdAndSecContext(saved_user, saved_sec);
		}
		PG_END_TRY();
	}
	if (rc != expected)
		elog(ERROR, "pg_kmeans model store statement failed: %s", SPI_result_code_string(rc));
	return rc;
}

/* A statement with the model name as $1. */
static void
exec_on_model(PgkmStore *st, bool as_owner, const char *sql, text *model,
			  bool read_only, int expected)
{
	Oid			types[1] = {TEXTOID};
	Datum		vals[1] = {PointerGetDatum(model)};

	store_exec(st, as_owner, sql, 1, types, vals, NULL, read_only, expected);
}

static Oid
result_oid(int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);

	return isnull ? InvalidOid : DatumGetObjectId(d);
}

void
pgkm_unknown_model(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("k-means model \"%s\" does not exist", name),
			 errhint("List the models you may use with: SELECT model FROM kmeans_models;")));
}

/*
 * The owner's rights: the owner, roles that have its privileges (members
 * that inherit) and superusers, as for PostgreSQL's own objects.
 */
void
pgkm_require_model_owner(const char *name, Oid owner, const char *action, const char *hint)
{
	if (!has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of k-means model \"%s\" to %s", name, action),
				 errhint("%s", hint)));
}

bool
pgkm_store_owner_of(PgkmStore *st, text *model, Oid *owner)
{
	exec_on_model(st, true,
				  psprintf("SELECT owner FROM %s WHERE model OPERATOR(pg_catalog.=) $1", st->owners),
				  model, false, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	*owner = result_oid(0, 1);
	return true;
}

bool
pgkm_store_find(PgkmStore *st, text *model, Oid *token, Oid *owner)
{
	exec_on_model(st, false,
				  psprintf("SELECT token, owner::pg_catalog.oid FROM %s "
						   "WHERE model OPERATOR(pg_catalog.=) $1", st->models),
				  model, false, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	*token = result_oid(0, 1);
	*owner = result_oid(0, 2);
	return true;
}

/* Column col of the one result row, which must be of type typid. */
static Datum
model_column(const char *name, int col, Oid typid, bool *isnull)
{
	if (SPI_gettypeid(SPI_tuptable->tupdesc, col) != typid)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("k-means model store column \"%s\" has an unexpected type",
						SPI_fname(SPI_tuptable->tupdesc, col)),
				 errdetail("Reading k-means model \"%s\".", name)));
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, isnull);
}

static ArrayType *
model_array(const char *name, int col, Oid typid)
{
	bool		isnull;
	Datum		d = model_column(name, col, typid, &isnull);

	return isnull ? NULL : DatumGetArrayTypeP(d);
}

static void
report_corrupt(const char *name, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("k-means model \"%s\" is corrupt", name),
			 errdetail("%s", problem),
			 errhint("Drop it with kmeans_drop_model() and fit it again.")));
}

/* The value of key in the options jsonb of the row just read (column 10), or NULL. */
static JsonbValue *
find_option(const char *name, const char *key)
{
	bool		isnull;
	Jsonb	   *j = DatumGetJsonbP(model_column(name, 10, JSONBOID, &isnull));
	JsonbValue	k;

	if (isnull)
		report_corrupt(name, "Its options are NULL.");
	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = (int) strlen(key);
	return findJsonbValueFromContainer(&j->root, JB_FOBJECT, &k);
}

/* A number among the options, dflt when absent. */
static double
option_number(const char *name, const char *key, double dflt)
{
	JsonbValue *v = find_option(name, key);

	if (v == NULL)
		return dflt;
	if (v->type != jbvNumeric)
		report_corrupt(name, psprintf("Its option %s is not a number.", key));
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric)));
}

/*
 * The kernel k-means part of a model the caller may use (the row just read
 * from kmeans_models): the kernel from its options, then the training rows,
 * members and norms from the store, as its owner (the view leaves them out:
 * they are large) and only for the same token, so for the same model.
 */
static void
load_kernel(PgkmStore *st, text *model, const char *name, MemoryContext cxt, PgkmModel *out)
{
	bool		isnull;
	Datum		d = model_column(name, 8, TEXTOID, &isnull);
	PgkmKernelValues kv;
	const char *problem;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		vals[2];
	JsonbValue *kernel;
	double		degree;
	MemoryContext old;
	int64		n;

	memset(&kv, 0, sizeof(kv));
	kv.method = isnull ? NULL : TextDatumGetCString(d);
	if (kv.method == NULL || strcmp(kv.method, "kernel") != 0)
		return;
	vals[0] = PointerGetDatum(model);
	vals[1] = model_column(name, 9, OIDOID, &isnull);
	pgkm_options_default(&out->kernel);
	kernel = find_option(name, "kernel");
	if (kernel == NULL || kernel->type != jbvString ||
		!pgkm_kernel_by_name(pnstrdup(kernel->val.string.val, kernel->val.string.len),
							 &out->kernel.kernel))
		report_corrupt(name, "Its options name no kernel.");
	out->kernel.gamma = option_number(name, "gamma", 1.0);
	out->kernel.coef0 = option_number(name, "coef0", 1.0);
	degree = option_number(name, "degree", 3.0);
	if (!(out->kernel.gamma > 0) || std::isinf(out->kernel.gamma) ||
		!std::isfinite(out->kernel.coef0) || !(degree >= 1 && degree <= PG_INT32_MAX) ||
		degree != std::floor(degree))
		report_corrupt(name, "Its kernel parameters are out of range.");
	out->kernel.degree = (int32) degree;

	store_exec(st, true,
			   psprintf("SELECT kernel_rows, kernel_members, kernel_norms, kernel_shift, kernel_scale_log2 FROM %s "
						"WHERE model OPERATOR(pg_catalog.=) $1 AND token OPERATOR(pg_catalog.=) $2",
						st->store),
			   2, types, vals, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		pgkm_unknown_model(name);
	kv.k = out->k;
	kv.d = out->d;
	kv.rows = model_array(name, 1, FLOAT4ARRAYOID);
	kv.members = model_array(name, 2, INT4ARRAYOID);
	kv.norms = model_array(name, 3, FLOAT8ARRAYOID);
	kv.shift = model_array(name, 4, FLOAT8ARRAYOID);
	d = model_column(name, 5, INT4OID, &kv.scale_null);
	kv.scale_log2 = kv.scale_null ? 0 : DatumGetInt32(d);
	problem = pgkm_model_kernel_problem(&kv);
	if (problem != NULL)
		report_corrupt(name, problem);
	if (kv.shift != NULL && pgkm_kernel_needs_origin(out->kernel.kernel))
		report_corrupt(name, "Its kernel depends on the origin, but its rows are shifted.");
	n = ARR_DIMS(kv.rows)[0];
	old = MemoryContextSwitchTo(cxt);
	out->kernel_n = n;
	out->kernel_rows = (float *) palloc(sizeof(float) * (Size) n * out->d);
	memcpy(out->kernel_rows, ARR_DATA_PTR(kv.rows), sizeof(float) * (Size) n * out->d);
	out->kernel_members = (int32 *) palloc(sizeof(int32) * (Size) n);
	memcpy(out->kernel_members, ARR_DATA_PTR(kv.members), sizeof(int32) * (Size) n);
	out->kernel_norms = (double *) palloc(sizeof(double) * out->k);
	memcpy(out->kernel_norms, ARR_DATA_PTR(kv.norms), sizeof(double) * out->k);
	if (kv.shift != NULL)
	{
		double	   *shift = (double *) palloc(sizeof(double) * out->d);

		memcpy(shift, ARR_DATA_PTR(kv.shift), sizeof(double) * out->d);
		out->kernel.shift = shift;
	}
	out->kernel.scale_log2 = kv.scale_log2;
	MemoryContextSwitchTo(old);
}

bool
pgkm_store_load(PgkmStore *st, text *model, MemoryContext cxt, PgkmModel *out)
{
	char	   *name = text_to_cstring(model);
	PgkmModelValues v;
	const char *problem;
	Datum		d;
	MemoryContext old;
	Size		kd;

	memset(out, 0, sizeof(*out));
	exec_on_model(st, false,
				  psprintf("SELECT k, d, centroids, initial_centroids, sizes, cluster_inertia, inertia, "
						   "method, token, options "
						   "FROM %s WHERE model OPERATOR(pg_catalog.=) $1", st->models),
				  model, true, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	d = model_column(name, 1, INT4OID, &v.k_null);
	v.k = v.k_null ? 0 : DatumGetInt32(d);
	d = model_column(name, 2, INT4OID, &v.d_null);
	v.d = v.d_null ? 0 : DatumGetInt32(d);
	v.centroids = model_array(name, 3, FLOAT8ARRAYOID);
	v.initial_centroids = model_array(name, 4, FLOAT8ARRAYOID);
	v.sizes = model_array(name, 5, INT8ARRAYOID);
	v.cluster_inertia = model_array(name, 6, FLOAT8ARRAYOID);
	d = model_column(name, 7, FLOAT8OID, &v.inertia_null);
	v.inertia = v.inertia_null ? 0 : DatumGetFloat8(d);
	problem = pgkm_model_values_problem(&v);
	if (problem != NULL)
		report_corrupt(name, problem);

	kd = (Size) v.k * v.d;
	old = MemoryContextSwitchTo(cxt);
	out->k = v.k;
	out->d = v.d;
	out->centroids = (double *) palloc(sizeof(double) * kd);
	memcpy(out->centroids, ARR_DATA_PTR(v.centroids), sizeof(double) * kd);
	out->sizes = (int64 *) palloc(sizeof(int64) * v.k);
	memcpy(out->sizes, ARR_DATA_PTR(v.sizes), sizeof(int64) * v.k);
	out->cluster_inertia = (double *) palloc(sizeof(double) * v.k);
	memcpy(out->cluster_inertia, ARR_DATA_PTR(v.cluster_inertia), sizeof(double) * v.k);
	MemoryContextSwitchTo(old);
	load_kernel(st, model, name, cxt, out);
	return true;
}

HeapTuple
pgkm_store_model_row(PgkmStore *st, text *model, TupleDesc desc, MemoryContext cxt)
{
	TupleDesc	got;
	Datum	   *vals;
	bool	   *nulls;
	MemoryContext old;
	HeapTuple	row;

	exec_on_model(st, false,
				  psprintf("SELECT * FROM %s WHERE model OPERATOR(pg_catalog.=) $1", st->models),
				  model, false, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return NULL;
	got = SPI_tuptable->tupdesc;
	if (got->natts != desc->natts)
		elog(ERROR, "kmeans_models has %d columns, expected %d", got->natts, desc->natts);
	vals = (Datum *) palloc(sizeof(Datum) * got->natts);
	nulls = (bool *) palloc(sizeof(bool) * got->natts);
	heap_deform_tuple(SPI_tuptable->vals[0], got, vals, nulls);
	old = MemoryContextSwitchTo(cxt);
	row = heap_form_tuple(desc, vals, nulls);
	MemoryContextSwitchTo(old);
	return row;
}

/*
 * Forget the rows whose token is gone (DROP OWNED, lo_unlink): those models
 * were dropped. Why SKIP LOCKED: a row another transaction holds (a refit
 * taking the name over) must not make this call wait; why by token: a row
 * taken over since this statement's snapshot has a new token and stays.
 */
static void
delete_orphans(PgkmStore *st)
{
	store_exec(st, true,
			   psprintf("DELETE FROM %s s USING (SELECT x.model, x.token FROM %s x "
						"WHERE NOT EXISTS (SELECT FROM %s o WHERE o.model OPERATOR(pg_catalog.=) x.model) "
						"FOR UPDATE OF x SKIP LOCKED) g "
						"WHERE s.model OPERATOR(pg_catalog.=) g.model AND s.token OPERATOR(pg_catalog.=) g.token",
						st->store, st->store, st->owners),
			   0, NULL, NULL, NULL, false, SPI_OK_DELETE);
}

/* A new token owned by the caller: a large object holding a random nonce. */
static Oid
create_token(PgkmStore *st, bytea **nonce)
{
	Oid			types[1] = {BYTEAOID};
	Datum		vals[1];
	Oid			token;

	*nonce = (bytea *) palloc(VARHDRSZ + PGKM_NONCE_BYTES);
	SET_VARSIZE(*nonce, VARHDRSZ + PGKM_NONCE_BYTES);
	if (!pg_strong_random(VARDATA(*nonce), PGKM_NONCE_BYTES))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random k-means model token")));
	vals[0] = PointerGetDatum(*nonce);
	store_exec(st, false, "SELECT pg_catalog.lo_from_bytea(0, $1)", 1, types, vals, NULL,
			   false, SPI_OK_SELECT);
	token = result_oid(0, 1);
	/* Backups: pg_dump reads every large object it dumps. */
	store_exec(st, false,
			   psprintf("GRANT SELECT ON LARGE OBJECT %u TO pg_database_owner, pg_read_all_data", token),
			   0, NULL, NULL, NULL, false, SPI_OK_UTILITY);
	store_exec(st, false,
			   psprintf("COMMENT ON LARGE OBJECT %u IS "
						"'pg_kmeans model token: it carries the owner and grants of a model; "
						"unlinking it drops the model'", token),
			   0, NULL, NULL, NULL, false, SPI_OK_UTILITY);
	return token;
}

/*
 * Why lock the row, then insert with ON CONFLICT DO NOTHING and try again:
 * the ownership check and the write must see the same row. A row of another
 * role is refused; a row whose token is gone is taken over with a new token;
 * a name another transaction inserted meanwhile is read again once it has
 * committed.
 */
void
pgkm_store_save(PgkmStore *st, text *model, const char *columns, const char *values_sql,
				int nvals, Oid *types, Datum *vals, const char *nulls)
{
	int			nargs = nvals + 3;
	Oid		   *t = (Oid *) palloc(sizeof(Oid) * nargs);
	Datum	   *v = (Datum *) palloc(sizeof(Datum) * nargs);
	char	   *n = (char *) palloc(nargs);
	char	   *lock_sql = psprintf("SELECT token FROM %s WHERE model OPERATOR(pg_catalog.=) $1 "
									"FOR UPDATE", st->store);
	char	   *update_sql = psprintf("UPDATE %s SET (token, nonce, %s) = "
									  "(COALESCE($2, token), COALESCE($3, nonce), %s) "
									  "WHERE model OPERATOR(pg_catalog.=) $1",
									  st->store, columns, values_sql);
	char	   *insert_sql = psprintf("INSERT INTO %s (model, token, nonce, %s) "
									  "VALUES ($1, $2, $3, %s) ON CONFLICT (model) DO NOTHING",
									  st->store, columns, values_sql);

	t[0] = TEXTOID;
	t[1] = OIDOID;
	t[2] = BYTEAOID;
	v[0] = PointerGetDatum(model);
	n[0] = ' ';
	memcpy(t + 3, types, sizeof(Oid) * nvals);
	memcpy(v + 3, vals, sizeof(Datum) * nvals);
	memcpy(n + 3, nulls, nvals);

	delete_orphans(st);
	for (int attempt = 1;; attempt++)
	{
		bytea	   *nonce;
		Oid			owner;

		exec_on_model(st, true, lock_sql, model, false, SPI_OK_SELECT);
		if (SPI_processed == 1)
		{
			if (pgkm_store_owner_of(st, model, &owner))
			{
				pgkm_require_model_owner(text_to_cstring(model), owner, "replace it",
										 PGKM_HINT_REPLACE);
				n[1] = n[2] = 'n';	/* a refit keeps token, owner and grants */
			}
			else
			{
				v[1] = ObjectIdGetDatum(create_token(st, &nonce));
				v[2] = PointerGetDatum(nonce);
				n[1] = n[2] = ' ';
			}
			store_exec(st, true, update_sql, nargs, t, v, n, false, SPI_OK_UPDATE);
			return;
		}
		v[1] = ObjectIdGetDatum(create_token(st, &nonce));
		v[2] = PointerGetDatum(nonce);
		n[1] = n[2] = ' ';
		store_exec(st, true, insert_sql, nargs, t, v, n, false, SPI_OK_INSERT);
		if (SPI_processed == 1)
			return;
		pgkm_token_unlink(st, DatumGetObjectId(v[1]));
		if (attempt == 3)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not store k-means model \"%s\": its name is being changed concurrently",
							text_to_cstring(model)),
					 errhint("Try again.")));
	}
}

bool
pgkm_store_delete(PgkmStore *st, text *model, Oid token)
{
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		vals[2] = {PointerGetDatum(model), ObjectIdGetDatum(token)};

	delete_orphans(st);
	store_exec(st, true,
			   psprintf("DELETE FROM %s WHERE model OPERATOR(pg_catalog.=) $1 "
						"AND token OPERATOR(pg_catalog.=) $2", st->store),
			   2, types, vals, NULL, false, SPI_OK_DELETE);
	return SPI_processed == 1;
}

void
pgkm_token_grant(PgkmStore *st, Oid token, Oid grantee, bool grant)
{
	const char *role = grantee == ACL_ID_PUBLIC ? "PUBLIC" :
		quote_identifier(GetUserNameFromId(grantee, false));

	store_exec(st, false,
			   psprintf(grant ? "GRANT SELECT ON LARGE OBJECT %u TO %s"
						: "REVOKE SELECT ON LARGE OBJECT %u FROM %s", token, role),
			   0, NULL, NULL, NULL, false, SPI_OK_UTILITY);
}

void
pgkm_token_unlink(PgkmStore *st, Oid token)
{
	Oid			types[1] = {OIDOID};
	Datum		vals[1] = {ObjectIdGetDatum(token)};

	store_exec(st, false, "SELECT pg_catalog.lo_unlink($1)", 1, types, vals, NULL, false,
			   SPI_OK_SELECT);
}
