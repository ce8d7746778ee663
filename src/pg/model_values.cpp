/*
 * model_values.cpp: what the stored values of a k-means model must be. One
 * test serves the store's CHECK constraint (kmeans_model_values_ok) and the
 * readers (kmeans_predict, kmeans_model_centroids), which re-check whatever
 * they read: a superuser may drop the constraint and edit a row by hand,
 * and no stored value may crash a reader.
 */
#include "model_store.h"

#include <cmath>

extern "C"
{
PG_FUNCTION_INFO_V1(pgkm_kmeans_model_values_ok);
PG_FUNCTION_INFO_V1(pgkm_kmeans_model_kernel_ok);
PG_FUNCTION_INFO_V1(pgkm_kmeans_model_grid_ok);
}

/* Problem of a float8 array that must be rows x cols (cols 0: 1-D of rows). */
static const char *
float8_array_problem(const ArrayType *a, int32 rows, int32 cols, bool nonnegative,
					 const char *what_null, const char *what_shape,
					 const char *what_value)
{
	int			ndim = cols > 0 ? 2 : 1;
	const double *v;
	int64		n = (int64) rows * Max(cols, 1);

	if (a == NULL)
		return what_null;
	if (ARR_ELEMTYPE(a) != FLOAT8OID || ARR_NDIM(a) != ndim ||
		ARR_DIMS(a)[0] != rows || (cols > 0 && ARR_DIMS(a)[1] != cols))
		return what_shape;
	if (ARR_HASNULL(a))
		return what_value;
	v = (const double *) ARR_DATA_PTR(a);
	for (int64 i = 0; i < n; i++)
		if (!std::isfinite(v[i]) || (nonnegative && v[i] < 0))
			return what_value;
	return NULL;
}

const char *
pgkm_model_values_problem(const PgkmModelValues *v)
{
	const char *p;

	if (v->k_null || v->d_null || v->k < 1 || v->d < 1)
		return "Its k and d are not both positive.";
	if ((Size) v->k * v->d > MaxAllocSize / sizeof(double))
		return "Its k and d are too large.";
	p = float8_array_problem(v->centroids, v->k, v->d, false,
							 "Its centroids are NULL.",
							 "Its centroids are not a k x d array of double precision.",
							 "Its centroids contain a NULL or non-finite value.");
	if (p == NULL && v->initial_centroids != NULL)
		p = float8_array_problem(v->initial_centroids, v->k, v->d, false, NULL,
								 "Its initial centroids are not a k x d array of double precision.",
								 "Its initial centroids contain a NULL or non-finite value.");
	if (p == NULL)
		p = float8_array_problem(v->cluster_inertia, v->k, 0, true,
								 "Its cluster inertias are NULL.",
								 "Its cluster inertias are not k double precision values.",
								 "Its cluster inertias contain a NULL, negative or non-finite value.");
	if (p != NULL)
		return p;
	if (v->sizes == NULL)
		return "Its sizes are NULL.";
	if (ARR_ELEMTYPE(v->sizes) != INT8OID || ARR_NDIM(v->sizes) != 1 ||
		ARR_DIMS(v->sizes)[0] != v->k)
		return "Its sizes are not k bigint values.";
	if (ARR_HASNULL(v->sizes))
		return "Its sizes contain a NULL or negative value.";
	for (int32 c = 0; c < v->k; c++)
		if (((const int64 *) ARR_DATA_PTR(v->sizes))[c] < 0)
			return "Its sizes contain a NULL or negative value.";
	if (v->inertia_null || !std::isfinite(v->inertia) || v->inertia < 0)
		return "Its inertia is NULL, negative or not finite.";
	return NULL;
}

/*
 * kmeans_model_values_ok(k, d, centroids, initial_centroids, sizes,
 * cluster_inertia, inertia): the store's CHECK. Not strict: a NULL where a
 * value is needed is false, not NULL (a NULL would pass a CHECK).
 */
extern "C" Datum
pgkm_kmeans_model_values_ok(PG_FUNCTION_ARGS)
{
	PgkmModelValues v;

	memset(&v, 0, sizeof(v));
	v.k_null = PG_ARGISNULL(0);
	v.d_null = PG_ARGISNULL(1);
	v.inertia_null = PG_ARGISNULL(6);
	v.k = v.k_null ? 0 : PG_GETARG_INT32(0);
	v.d = v.d_null ? 0 : PG_GETARG_INT32(1);
	v.centroids = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
	v.initial_centroids = PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P(3);
	v.sizes = PG_ARGISNULL(4) ? NULL : PG_GETARG_ARRAYTYPE_P(4);
	v.cluster_inertia = PG_ARGISNULL(5) ? NULL : PG_GETARG_ARRAYTYPE_P(5);
	v.inertia = v.inertia_null ? 0 : PG_GETARG_FLOAT8(6);
	PG_RETURN_BOOL(pgkm_model_values_problem(&v) == NULL);
}

/*
 * Every model may keep the transform of its float buffer (a shift of d
 * finite values or none, a scale_log2 in range; a NULL scale: unknown,
 * with no shift). A kernel model must, and keeps its training rows (n x d,
 * finite), each row's cluster (n values in -1..k-1, every cluster with at
 * least one row) and the k finite centroid norms; a model of another method
 * keeps none of those.
 */
const char *
pgkm_model_kernel_problem(const PgkmKernelValues *v)
{
	const bool	kernel = v->method != NULL && strcmp(v->method, "kernel") == 0;
	int64		n;

	if (v->scale_null && v->shift != NULL)
		return "It has a shift but no scale.";
	if (!v->scale_null &&
		(v->scale_log2 < -PGKM_MAX_SCALE_LOG2 || v->scale_log2 > PGKM_MAX_SCALE_LOG2))
		return "Its scale is out of range.";
	if (v->shift != NULL &&
		float8_array_problem(v->shift, v->d, 0, false, NULL, "", "") != NULL)
		return "Its shift is not d finite double precision values.";
	if (!kernel)
		return v->rows || v->members || v->norms ?
			"It has kernel k-means values but its method is not kernel." : NULL;
	if (!v->rows || !v->members || !v->norms || v->scale_null)
		return "Its kernel k-means rows, members, norms or scale are NULL.";
	if (ARR_ELEMTYPE(v->rows) != FLOAT4OID || ARR_NDIM(v->rows) != 2 ||
		ARR_DIMS(v->rows)[1] != v->d || ARR_HASNULL(v->rows))
		return "Its kernel k-means rows are not an n x d array of real.";
	n = ARR_DIMS(v->rows)[0];
	for (int64 i = 0; i < n * v->d; i++)
		if (!std::isfinite(((const float *) ARR_DATA_PTR(v->rows))[i]))
			return "Its kernel k-means rows contain a non-finite value.";
	if (ARR_ELEMTYPE(v->members) != INT4OID || ARR_NDIM(v->members) != 1 ||
		ARR_DIMS(v->members)[0] != n || ARR_HASNULL(v->members))
		return "Its kernel k-means members are not n integers.";
	{
		const int32 *m = (const int32 *) ARR_DATA_PTR(v->members);
		int64	   *count = (int64 *) palloc0(sizeof(int64) * v->k);

		for (int64 i = 0; i < n; i++)
		{
			if (m[i] < -1 || m[i] >= v->k)
				return "Its kernel k-means members are not all in -1 .. k - 1.";
			if (m[i] >= 0)
				count[m[i]]++;
		}
		for (int32 c = 0; c < v->k; c++)
			if (count[c] == 0)
				return "A cluster of its kernel k-means members has no row.";
		pfree(count);
	}
	return float8_array_problem(v->norms, v->k, 0, false, NULL,
								"Its kernel k-means norms are not k double precision values.",
								"Its kernel k-means norms contain a NULL or non-finite value.");
}

/*
 * kmeans_model_kernel_ok(method, k, d, kernel_rows, kernel_members,
 * kernel_norms, shift, scale_log2): the store's second CHECK. Not strict
 * (NULLs are the non-kernel case). k and d are kmeans_model_values_ok's to
 * judge, except that a shift or a kernel model's arrays cannot be checked
 * without them.
 */
extern "C" Datum
pgkm_kmeans_model_kernel_ok(PG_FUNCTION_ARGS)
{
	PgkmKernelValues v;
	bool		kd_ok = !PG_ARGISNULL(1) && !PG_ARGISNULL(2) &&
		PG_GETARG_INT32(1) >= 1 && PG_GETARG_INT32(2) >= 1;

	v.method = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	v.k = kd_ok ? PG_GETARG_INT32(1) : 0;
	v.d = kd_ok ? PG_GETARG_INT32(2) : 0;
	v.rows = PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P(3);
	v.members = PG_ARGISNULL(4) ? NULL : PG_GETARG_ARRAYTYPE_P(4);
	v.norms = PG_ARGISNULL(5) ? NULL : PG_GETARG_ARRAYTYPE_P(5);
	v.shift = PG_ARGISNULL(6) ? NULL : PG_GETARG_ARRAYTYPE_P(6);
	v.scale_null = PG_ARGISNULL(7);
	v.scale_log2 = v.scale_null ? 0 : PG_GETARG_INT32(7);
	if (!kd_ok && ((v.method != NULL && strcmp(v.method, "kernel") == 0) || v.shift != NULL))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(pgkm_model_kernel_problem(&v) == NULL);
}

/* The sums' grid of a model: NULL, or d integer exponents within double's range. */
const char *
pgkm_model_grid_problem(int32 d, const ArrayType *g)
{
	if (g == NULL)
		return NULL;
	if (d < 1 || ARR_ELEMTYPE(g) != INT4OID || ARR_NDIM(g) != 1 || ARR_DIMS(g)[0] != d ||
		ARR_HASNULL(g))
		return "Its sums' grid is not d integers.";
	for (int32 j = 0; j < d; j++)
	{
		const int32 e = ((const int32 *) ARR_DATA_PTR(g))[j];

		if (e < -1000 || e > 1000)
			return "Its sums' grid is out of range.";
	}
	return NULL;
}

/* kmeans_model_grid_ok(d, sum_scale_log2): the store's third CHECK (not strict: NULL is no grid). */
extern "C" Datum
pgkm_kmeans_model_grid_ok(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1))
		PG_RETURN_BOOL(true);
	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(pgkm_model_grid_problem(PG_GETARG_INT32(0), PG_GETARG_ARRAYTYPE_P(1)) == NULL);
}
