/*
 * model_store.h: stored k-means models, shared by model.cpp (the SQL
 * functions), model_store.cpp (the store's statements, owners, tokens,
 * writes), model_load.cpp (a model read for use) and model_values.cpp (what
 * a stored model's values must be).
 */
#ifndef PGKM_MODEL_STORE_H
#define PGKM_MODEL_STORE_H

#include "pg_headers.h"

/* A model's arrays as the readers use them. */
typedef struct PgkmModel
{
	int32		k;
	int32		d;
	double	   *centroids;		/* k x d, row-major */
	int64	   *sizes;			/* k */
	double	   *cluster_inertia;	/* k */
	/*
	 * What prediction needs: opts holds the fit's float buffer units (shift,
	 * scale_log2; units_known false: features are not rounded) and, for a
	 * kernel model, its kernel, gamma, coef0 and degree
	 */
	pgkm_options opts;
	bool		units_known;
	double	   *sum_scales;		/* d: the fit's sums' grid in the buffer's units, or NULL */
	/* a kernel k-means model (kernel_rows NULL otherwise) */
	int64		kernel_n;		/* training rows */
	float	   *kernel_rows;	/* kernel_n x d */
	int32	   *kernel_members; /* kernel_n, cluster in 0..k-1 or -1 */
	double	   *kernel_norms;	/* k */
} PgkmModel;

/* ---- stored values (model_values.cpp) ---- */

/* The stored values of one model; a NULL pointer or *_null flag is SQL NULL. */
typedef struct PgkmModelValues
{
	bool		k_null;
	bool		d_null;
	bool		inertia_null;
	int32		k;
	int32		d;
	double		inertia;
	ArrayType  *centroids;
	ArrayType  *initial_centroids;	/* may be NULL */
	ArrayType  *sizes;
	ArrayType  *cluster_inertia;
} PgkmModelValues;

/* Why these values are not a usable model (a sentence), or NULL when they are. */
extern const char *pgkm_model_values_problem(const PgkmModelValues *v);

/* A model's buffer units and kernel k-means values; NULL pointers are SQL NULLs. */
typedef struct PgkmKernelValues
{
	const char *method;			/* NULL when NULL */
	int32		k;
	int32		d;
	ArrayType  *rows;			/* real[] n x d */
	ArrayType  *members;		/* integer[] n */
	ArrayType  *norms;			/* double precision[] k */
	ArrayType  *shift;			/* double precision[] d, NULL for none */
	bool		scale_null;		/* units unknown */
	int32		scale_log2;
} PgkmKernelValues;

/* Why these are not what the model needs (a sentence), or NULL. k, d valid. */
extern const char *pgkm_model_kernel_problem(const PgkmKernelValues *v);

/* Why a model's sums' grid (integer[] of d exponents, or NULL) is not usable, or NULL. */
extern const char *pgkm_model_grid_problem(int32 d, const ArrayType *g);

/* ---- the store (model_store.cpp) ---- */

/*
 * An open connection to the store: SPI connected, search_path pinned to
 * pg_catalog for every statement pg_kmeans runs.
 */
typedef struct PgkmStore
{
	char	   *store;			/* kmeans_model_store, schema-qualified */
	char	   *owners;			/* kmeans_model_owners */
	char	   *models;			/* kmeans_models */
	Oid			store_owner;	/* role the writes run as */
	int			guc_level;
} PgkmStore;

extern void pgkm_store_open(FunctionCallInfo fcinfo, PgkmStore *st);
extern void pgkm_store_close(PgkmStore *st);

/* Run one statement, as the caller or as the store's owner; SPI's code must be expected. */
extern int	pgkm_store_exec(PgkmStore *st, bool as_owner, const char *sql, int nargs,
							Oid *types, Datum *vals, const char *nulls, bool read_only,
							int expected);

/* The same with the model name as $1, the only parameter. */
extern void pgkm_store_exec_on_model(PgkmStore *st, bool as_owner, const char *sql,
									 text *model, bool read_only, int expected);

/* The owner of a model whatever the caller may see; false when none. */
extern bool pgkm_store_owner_of(PgkmStore *st, text *model, Oid *owner);

/* Token and owner of a model the caller may use; false when none. */
extern bool pgkm_store_find(PgkmStore *st, text *model, Oid *token, Oid *owner);

/*
 * A model the caller may use, checked (ERRCODE_DATA_CORRUPTED otherwise),
 * its arrays allocated in cxt; false when there is none (model_load.cpp).
 */
extern bool pgkm_store_load(PgkmStore *st, text *model, MemoryContext cxt,
							PgkmModel *out);

/* Free what pgkm_store_load allocated, and zero the model. */
extern void pgkm_model_free(PgkmModel *m);

/*
 * The values of a model row by name, as kmeans_fit() writes them: columns
 * of kmeans_model_store, and keys of its options jsonb. Why by name: the
 * statements are made from this list, so a value cannot land in the wrong
 * column or parameter.
 */
#define PGKM_STORE_MAX_VALUES 40

typedef struct PgkmStoreValue
{
	const char *name;			/* column, or options key */
	bool		option;
	Oid			type;
	Datum		value;
	bool		isnull;
} PgkmStoreValue;

typedef struct PgkmStoreRow
{
	int			n;
	PgkmStoreValue values[PGKM_STORE_MAX_VALUES];
} PgkmStoreRow;

extern void pgkm_store_set(PgkmStoreRow *row, const char *column, Oid type, Datum value);
extern void pgkm_store_set_null(PgkmStoreRow *row, const char *column, Oid type);
extern void pgkm_store_set_option(PgkmStoreRow *row, const char *key, Oid type, Datum value);

/*
 * Store a model: a new one owned by the caller, or a refit of one the caller
 * owns (keeping its owner and grants), with the values of row.
 */
extern void pgkm_store_save(PgkmStore *st, text *model, const PgkmStoreRow *row);

/* The caller's kmeans_models row of a model, formed in cxt; NULL when none. */
extern HeapTuple pgkm_store_model_row(PgkmStore *st, text *model, TupleDesc desc,
									  MemoryContext cxt);

/* Delete the model if its token is still token; false when it was not there. */
extern bool pgkm_store_delete(PgkmStore *st, text *model, Oid token);

/* GRANT or REVOKE use of a model's token, as the caller. */
extern void pgkm_token_grant(PgkmStore *st, Oid token, Oid grantee, bool grant);

/* Remove a token, as the caller. */
extern void pgkm_token_unlink(PgkmStore *st, Oid token);

/* The standard errors. */
extern void pgkm_unknown_model(const char *name) pg_attribute_noreturn();
extern void pgkm_require_model_owner(const char *name, Oid owner, const char *action,
									 const char *hint);

#define PGKM_HINT_REPLACE "Choose another model name, or ask its owner to drop it."
#define PGKM_HINT_OWNER "Only its owner, members of the owner role and superusers may."


#endif							/* PGKM_MODEL_STORE_H */
