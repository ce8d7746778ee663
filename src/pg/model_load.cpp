/*
 * model_load.cpp: a stored model as kmeans_predict() and
 * kmeans_model_centroids() use it. The row is read through kmeans_models as
 * the caller (who may use it is the view's business), a kernel model's rows
 * from the store as its owner for the same token, and every value is
 * checked again (model_values.cpp): a superuser may have edited it by hand,
 * and no stored value may crash a reader (XX001 instead).
 */
#include "model_store.h"
#include "args.h"
#include "arrays.h"

extern "C"
{
#include "utils/jsonb.h"
}

#include <cmath>

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

/* An integer column of the row, 0 when NULL (*isnull says which). */
static int32
model_int4(const char *name, int col, bool *isnull)
{
	Datum		d = model_column(name, col, INT4OID, isnull);

	return *isnull ? 0 : DatumGetInt32(d);
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
 * What prediction needs beyond the view's row, for a model the caller may
 * use (the row just read from kmeans_models): the fit's buffer units, and
 * for a kernel model the kernel from its options, then the training rows,
 * members and norms. From the store, as its owner (the view leaves them
 * out: the rows are large) and only for the same token, so for the same
 * model.
 */
static void
load_store_values(PgkmStore *st, text *model, const char *name, MemoryContext cxt,
				  PgkmModel *out)
{
	bool		isnull;
	Datum		d = model_column(name, 8, TEXTOID, &isnull);
	PgkmKernelValues kv;
	const char *problem;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		vals[2];
	bool		kernel;

	memset(&kv, 0, sizeof(kv));
	kv.method = isnull ? NULL : TextDatumGetCString(d);
	kernel = kv.method != NULL && strcmp(kv.method, "kernel") == 0;
	vals[0] = PointerGetDatum(model);
	vals[1] = model_column(name, 9, OIDOID, &isnull);
	pgkm_options_default(&out->opts);
	if (kernel)
	{
		JsonbValue *kname = find_option(name, "kernel");
		double		degree;

		if (kname == NULL || kname->type != jbvString ||
			!pgkm_kernel_by_name(pnstrdup(kname->val.string.val, kname->val.string.len),
								 &out->opts.kernel))
			report_corrupt(name, "Its options name no kernel.");
		out->opts.gamma = option_number(name, "gamma", 1.0);
		out->opts.coef0 = option_number(name, "coef0", 1.0);
		degree = option_number(name, "degree", 3.0);
		if (!(out->opts.gamma > 0) || std::isinf(out->opts.gamma) ||
			!std::isfinite(out->opts.coef0) || !(degree >= 1 && degree <= PG_INT32_MAX) ||
			degree != std::floor(degree))
			report_corrupt(name, "Its kernel parameters are out of range.");
		out->opts.degree = (int32) degree;
	}

	pgkm_store_exec(st, true,
					psprintf("SELECT kernel_rows, kernel_members, kernel_norms, shift, scale_log2, sum_scale_log2 FROM %s "
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
	kv.scale_log2 = model_int4(name, 5, &kv.scale_null);
	problem = pgkm_model_kernel_problem(&kv);
	if (problem != NULL)
		report_corrupt(name, problem);
	out->units_known = !kv.scale_null;
	{
		ArrayType  *grid = model_array(name, 6, INT4ARRAYOID);

		problem = pgkm_model_grid_problem(out->d, grid);
		if (problem != NULL)
			report_corrupt(name, problem);
		if (grid != NULL)
		{
			out->sum_scales = (double *) MemoryContextAlloc(cxt, sizeof(double) * out->d);
			for (int32 j = 0; j < out->d; j++)
				out->sum_scales[j] = std::ldexp(1.0, ((const int32 *) ARR_DATA_PTR(grid))[j]);
		}
	}
	if (kv.shift != NULL)
		out->opts.shift = (double *)
			pgkm_array_data_copy(kv.shift, sizeof(double) * out->d, cxt);
	out->opts.scale_log2 = kv.scale_log2;
	if (!kernel)
		return;
	if (kv.shift != NULL && pgkm_kernel_needs_origin(out->opts.kernel))
		report_corrupt(name, "Its kernel depends on the origin, but its rows are shifted.");
	out->kernel_n = ARR_DIMS(kv.rows)[0];
	out->kernel_rows = (float *)
		pgkm_array_data_copy(kv.rows, sizeof(float) * (Size) out->kernel_n * out->d, cxt);
	out->kernel_members = (int32 *)
		pgkm_array_data_copy(kv.members, sizeof(int32) * (Size) out->kernel_n, cxt);
	out->kernel_norms = (double *)
		pgkm_array_data_copy(kv.norms, sizeof(double) * out->k, cxt);
}

bool
pgkm_store_load(PgkmStore *st, text *model, MemoryContext cxt, PgkmModel *out)
{
	char	   *name = text_to_cstring(model);
	PgkmModelValues v;
	const char *problem;
	Datum		d;
	Size		kd;

	memset(out, 0, sizeof(*out));
	pgkm_store_exec_on_model(st, false,
							 psprintf("SELECT k, d, centroids, initial_centroids, sizes, cluster_inertia, inertia, "
									  "method, token, options "
									  "FROM %s WHERE model OPERATOR(pg_catalog.=) $1", st->models),
							 model, true, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	v.k = model_int4(name, 1, &v.k_null);
	v.d = model_int4(name, 2, &v.d_null);
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
	out->k = v.k;
	out->d = v.d;
	out->centroids = (double *) pgkm_array_data_copy(v.centroids, sizeof(double) * kd, cxt);
	out->sizes = (int64 *) pgkm_array_data_copy(v.sizes, sizeof(int64) * v.k, cxt);
	out->cluster_inertia = (double *)
		pgkm_array_data_copy(v.cluster_inertia, sizeof(double) * v.k, cxt);
	load_store_values(st, model, name, cxt, out);
	return true;
}

void
pgkm_model_free(PgkmModel *m)
{
	if (m->centroids)
		pfree(m->centroids);
	if (m->sizes)
		pfree(m->sizes);
	if (m->cluster_inertia)
		pfree(m->cluster_inertia);
	if (m->kernel_rows)
		pfree(m->kernel_rows);
	if (m->kernel_members)
		pfree(m->kernel_members);
	if (m->kernel_norms)
		pfree(m->kernel_norms);
	if (m->opts.shift)
		pfree((void *) m->opts.shift);
	if (m->sum_scales)
		pfree(m->sum_scales);
	memset(m, 0, sizeof(*m));
}
