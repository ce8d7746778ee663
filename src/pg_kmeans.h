/*
 * pg_kmeans.h: shared declarations of the PostgreSQL glue (the src .cpp files).
 *
 * Every glue file includes this header first. It pulls in the C++ standard
 * headers the glue needs BEFORE the PostgreSQL headers (PostgreSQL redefines
 * snprintf and friends, <cstdio> would undo that), then the PostgreSQL
 * headers inside extern "C", then the engine's plain C API.
 */
#ifndef PG_KMEANS_H
#define PG_KMEANS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>

extern "C"
{
#include "postgres.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
}

#include "pgkm_engine.h"

/* ---- GUCs (pg_kmeans.cpp) ---- */
extern int	pgkm_guc_threads;
extern int	pgkm_guc_memory_limit_kb;	/* 0 = no limit */
extern int	pgkm_guc_gpu_memory_limit_kb;	/* 0 = device limit */
extern bool pgkm_guc_progress;
extern char *pgkm_guc_gpu_plugin;	/* "" = $libdir/pg_kmeans_cuda.so */

/* ---- arguments (args.cpp) ---- */

/* Kind of one requested feature column. */
typedef enum PgkmColKind
{
	PGKM_COL_INT2,
	PGKM_COL_INT4,
	PGKM_COL_INT8,
	PGKM_COL_FLOAT4,
	PGKM_COL_FLOAT8,
	PGKM_COL_NUMERIC,
	PGKM_COL_FLOAT4_ARRAY,
	PGKM_COL_FLOAT8_ARRAY
} PgkmColKind;

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

/* ---- scan (read.cpp, with relation.cpp, scan.cpp, buffer.cpp) ---- */

/* Rows first .. (the next run's first - 1) came from table tableoid. */
typedef struct PgkmTableRun
{
	int64		first;
	Oid			tableoid;
} PgkmTableRun;

typedef struct PgkmData
{
	int64		n;				/* usable rows read */
	int32		d;				/* features per row */
	float	   *x;				/* n x d row-major */
	ItemPointerData *tids;		/* n, or NULL when not requested */
	PgkmTableRun *tables;		/* with tids: the table of every row, in runs */
	int32		ntables;
	int64		n_skipped_null; /* rows skipped for a NULL feature */
	double	   *shift;			/* d, or NULL (0): x = float((value - shift) * 2^scale_log2) */
	int32		scale_log2;
	int64		distinct_rows;	/* distinct rows in fp64, counted up to k */
	char	   *relname;		/* schema-qualified, quoted where needed */
} PgkmData;

/*
 * The engine's options for a call over data (the rows read so far): the
 * arguments, the GUCs, and what pg_kmeans.memory_limit leaves the engine
 * once the data buffer is counted (kernel k-means stores K only within it).
 */
extern void pgkm_build_options(const PgkmArgs *args, const PgkmData *data, bool need_tids,
							   pgkm_options *opt, char *plugin_path, size_t plugin_len);

/* Bytes of the data buffer for rows rows: the features, and the ctids if kept. */
extern int64 pgkm_data_bytes(int64 rows, int32 d, bool need_tids);

extern void pgkm_scan(const PgkmArgs *args, bool need_tids,
					  MemoryContext datacxt, PgkmData *out);
extern void pgkm_check_budget(const PgkmArgs *args, const PgkmData *data,
							  bool need_tids);

/* ---- engine driving (run.cpp) ---- */
typedef struct PgkmClustering
{
	MemoryContext cxt;			/* owns the data and the engine run */
	PgkmData	data;
	pgkm_result result;			/* pointers valid until pgkm_clustering_end */
	double	   *cluster_inertia;	/* k, per-cluster sum of squared distances */
	instr_time	started;		/* phase clock, for the timing report */
	double		scan_s;			/* reading the relation into the buffer */
	double		setup_s;		/* engine create + first init (incl. upload to a GPU) */
	double		iterate_s;		/* remaining steps: iterations, final assignment */
} PgkmClustering;

extern PgkmClustering *pgkm_cluster(const PgkmArgs *args, bool need_tids);
extern void pgkm_clustering_end(PgkmClustering *c);
extern void pgkm_report_timing(const PgkmClustering *c, int64 rows_out);

/* ---- output helpers (srf.cpp) ---- */
extern ArrayType *pgkm_float8_array(const double *v, int n);
extern void pgkm_emit_centroid_rows(FunctionCallInfo fcinfo, int32 k, int32 d,
									const double *centroids,
									const int64 *sizes,
									const double *cluster_inertia);

#endif							/* PG_KMEANS_H */
