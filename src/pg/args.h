/*
 * args.h: the SQL arguments shared by kmeans(), kmeans_centroids() and
 * kmeans_fit(), read and checked by args.cpp, and the engine options they
 * make.
 */
#ifndef PGKM_ARGS_H
#define PGKM_ARGS_H

#include "pg_headers.h"

typedef struct PgkmData PgkmData;	/* read.h */

typedef struct PgkmArgs
{
	Oid			relid;
	int			ncols;
	char	  **colnames;		/* as given by the caller */
	int32		k;
	int32		max_iter;
	double		tol;
	int32		n_init;
	int64		seed;
	int32		method;			/* pgkm_method */
	int32		init;			/* pgkm_init_method */
	int32		device;			/* pgkm_device */
	const char *method_name;	/* canonical spelling, for the model row */
	const char *init_name;
	const char *device_name;
	/* method kernel: the kernel and its parameters, defaults resolved but gamma's */
	int32		kernel;			/* pgkm_kernel */
	const char *kernel_name;
	double		gamma;			/* 0 = 1 / d (the engine resolves it) */
	double		coef0;
	int32		degree;
	int64		max_model_values;	/* > 0: refuse more than this many n x d after the scan */
	bool		stores_model;	/* kmeans_fit: refuse k x d beyond pgkm_check_model_size */
} PgkmArgs;

/* Number of arguments of kmeans() before the kernel ones (STRICT behaviour applies to them). */
#define PGKM_STRICT_ARGS 10

extern bool pgkm_args_have_null(FunctionCallInfo fcinfo, int first);
extern void pgkm_parse_args(FunctionCallInfo fcinfo, int first, PgkmArgs *args);

/* The pgkm_kernel of a canonical kernel name (as a model stores it); false if none. */
extern bool pgkm_kernel_by_name(const char *name, int32 *kernel);

/*
 * Does the kernel depend on the origin? The polynomial and sigmoid kernels
 * do (through x.y); the linear and RBF kernels' feature-space distances,
 * like Lloyd's, do not change with a translation.
 */
extern bool pgkm_kernel_needs_origin(int32 kernel);

/* May the values be shifted per column before narrowing (row_convert.h)? */
extern bool pgkm_shift_allowed(const PgkmArgs *args);
extern void pgkm_gpu_plugin_path(char *buf, size_t len);

/*
 * The engine's options for a call over data (the rows read so far): the
 * arguments, the GUCs, and the engine's share of pg_kmeans.memory_limit
 * (budget.h; kernel k-means stores K only within it). plugin_path is
 * caller-owned storage that must outlive the run.
 */
extern void pgkm_build_options(const PgkmArgs *args, const PgkmData *data, bool need_tids,
							   pgkm_options *opt, char *plugin_path, size_t plugin_len);

#endif							/* PGKM_ARGS_H */
