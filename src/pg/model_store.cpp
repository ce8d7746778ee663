/*
 * model_store.cpp: the store of k-means models: its statements, who owns a
 * model, the tokens, and the writes (model_load.cpp reads a model for use).
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
#include "errors.h"

extern "C"
{
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "utils/acl.h"
#include "utils/syscache.h"
}

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
 * Why restricted as the owner: nothing the statement triggers may change
 * the session (no SET ROLE, no temporary objects). A read-only statement
 * sees the caller's snapshot (kmeans_predict and kmeans_model_centroids are
 * STABLE); any other sees what this call wrote before it.
 */
int
pgkm_store_exec(PgkmStore *st, bool as_owner, const char *sql, int nargs, Oid *types,
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
		/* PG_CATCH, not PG_FINALLY: gcc's -Wclobbered flags PG_FINALLY's own flag */
		PG_TRY();
		{
			rc = SPI_execute_with_args(sql, nargs, types, vals, nulls, read_only, 0);
		}
		PG_CATCH();
		{
			SetUserIdAndSecContext(saved_user, saved_sec);
			PG_RE_THROW();
		}
		PG_END_TRY();
		SetUserIdAndSecContext(saved_user, saved_sec);
	}
	if (rc != expected)
		elog(ERROR, "pg_kmeans model store statement failed: %s", SPI_result_code_string(rc));
	return rc;
}

void
pgkm_store_exec_on_model(PgkmStore *st, bool as_owner, const char *sql, text *model,
						 bool read_only, int expected)
{
	Oid			types[1] = {TEXTOID};
	Datum		vals[1] = {PointerGetDatum(model)};

	pgkm_store_exec(st, as_owner, sql, 1, types, vals, NULL, read_only, expected);
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
			 errmsg("k-means model \"%s\" does not exist", pgkm_echo_name(name)),
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
	pgkm_store_exec_on_model(st, true,
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
	pgkm_store_exec_on_model(st, false,
							 psprintf("SELECT token, owner::pg_catalog.oid FROM %s "
									  "WHERE model OPERATOR(pg_catalog.=) $1", st->models),
							 model, false, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	*token = result_oid(0, 1);
	*owner = result_oid(0, 2);
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

	pgkm_store_exec_on_model(st, false,
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
	pgkm_store_exec(st, true,
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
	pgkm_store_exec(st, false, "SELECT pg_catalog.lo_from_bytea(0, $1)", 1, types, vals, NULL,
					false, SPI_OK_SELECT);
	token = result_oid(0, 1);
	/* Backups: pg_dump reads every large object it dumps. */
	pgkm_store_exec(st, false,
					psprintf("GRANT SELECT ON LARGE OBJECT %u TO pg_database_owner, pg_read_all_data", token),
					0, NULL, NULL, NULL, false, SPI_OK_UTILITY);
	pgkm_store_exec(st, false,
					psprintf("COMMENT ON LARGE OBJECT %u IS "
							 "'pg_kmeans model token: it carries the owner and grants of a model; "
							 "unlinking it drops the model'", token),
					0, NULL, NULL, NULL, false, SPI_OK_UTILITY);
	return token;
}

static void
add_value(PgkmStoreRow *row, const char *name, bool option, Oid type, Datum value, bool isnull)
{
	PgkmStoreValue *v;

	if (row->n == PGKM_STORE_MAX_VALUES)
		elog(ERROR, "too many k-means model values (at most %d)", PGKM_STORE_MAX_VALUES);
	v = &row->values[row->n++];
	v->name = name;
	v->option = option;
	v->type = type;
	v->value = value;
	v->isnull = isnull;
}

void
pgkm_store_set(PgkmStoreRow *row, const char *column, Oid type, Datum value)
{
	add_value(row, column, false, type, value, false);
}

void
pgkm_store_set_null(PgkmStoreRow *row, const char *column, Oid type)
{
	add_value(row, column, false, type, (Datum) 0, true);
}

void
pgkm_store_set_option(PgkmStoreRow *row, const char *key, Oid type, Datum value)
{
	add_value(row, key, true, type, value, false);
}

/*
 * Why lock the row, then insert with ON CONFLICT DO NOTHING and try again:
 * the ownership check and the write must see the same row. A row of another
 * role is refused; a row whose token is gone is taken over with a new token;
 * a name another transaction inserted meanwhile is read again once it has
 * committed. Parameters: $1 the model, $2 its token and $3 its nonce (NULL
 * in a refit: kept), then row's values in order.
 */
void
pgkm_store_save(PgkmStore *st, text *model, const PgkmStoreRow *row)
{
	int			nargs = row->n + 3;
	Oid		   *t = (Oid *) palloc(sizeof(Oid) * nargs);
	Datum	   *v = (Datum *) palloc(sizeof(Datum) * nargs);
	char	   *n = (char *) palloc(nargs);
	StringInfoData columns,
				values,
				options;
	char	   *lock_sql;
	char	   *update_sql;
	char	   *insert_sql;

	initStringInfo(&columns);
	initStringInfo(&values);
	initStringInfo(&options);
	for (int i = 0; i < row->n; i++)
	{
		const PgkmStoreValue *val = &row->values[i];

		t[i + 3] = val->type;
		v[i + 3] = val->value;
		n[i + 3] = val->isnull ? 'n' : ' ';
		if (val->option)
			appendStringInfo(&options, "%s%s, $%d", options.len > 0 ? ", " : "",
							 quote_literal_cstr(val->name), i + 4);
		else
		{
			appendStringInfo(&columns, ", %s", quote_identifier(val->name));
			appendStringInfo(&values, ", $%d", i + 4);
		}
	}
	if (options.len > 0)
	{
		appendStringInfoString(&columns, ", options");
		appendStringInfo(&values, ", pg_catalog.jsonb_build_object(%s)", options.data);
	}
	lock_sql = psprintf("SELECT token FROM %s WHERE model OPERATOR(pg_catalog.=) $1 "
						"FOR UPDATE", st->store);
	update_sql = psprintf("UPDATE %s SET (token, nonce%s) = "
						  "(COALESCE($2, token), COALESCE($3, nonce)%s) "
						  "WHERE model OPERATOR(pg_catalog.=) $1",
						  st->store, columns.data, values.data);
	insert_sql = psprintf("INSERT INTO %s (model, token, nonce%s) "
						  "VALUES ($1, $2, $3%s) ON CONFLICT (model) DO NOTHING",
						  st->store, columns.data, values.data);
	t[0] = TEXTOID;
	t[1] = OIDOID;
	t[2] = BYTEAOID;
	v[0] = PointerGetDatum(model);
	n[0] = ' ';

	delete_orphans(st);
	for (int attempt = 1;; attempt++)
	{
		bytea	   *nonce;
		Oid			owner;

		pgkm_store_exec_on_model(st, true, lock_sql, model, false, SPI_OK_SELECT);
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
			pgkm_store_exec(st, true, update_sql, nargs, t, v, n, false, SPI_OK_UPDATE);
			return;
		}
		v[1] = ObjectIdGetDatum(create_token(st, &nonce));
		v[2] = PointerGetDatum(nonce);
		n[1] = n[2] = ' ';
		pgkm_store_exec(st, true, insert_sql, nargs, t, v, n, false, SPI_OK_INSERT);
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
	pgkm_store_exec(st, true,
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

	pgkm_store_exec(st, false,
					psprintf(grant ? "GRANT SELECT ON LARGE OBJECT %u TO %s"
							 : "REVOKE SELECT ON LARGE OBJECT %u FROM %s", token, role),
					0, NULL, NULL, NULL, false, SPI_OK_UTILITY);
}

void
pgkm_token_unlink(PgkmStore *st, Oid token)
{
	Oid			types[1] = {OIDOID};
	Datum		vals[1] = {ObjectIdGetDatum(token)};

	pgkm_store_exec(st, false, "SELECT pg_catalog.lo_unlink($1)", 1, types, vals, NULL, false,
					SPI_OK_SELECT);
}
