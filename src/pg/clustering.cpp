/*
 * clustering.cpp: one clustering call: scan, create the engine run, step it
 * with interrupt checks and progress reports in between, and expose the
 * result until the caller has emitted its rows.
 */
#include "clustering.h"
#include "args.h"
#include "budget.h"
#include "errors.h"
#include "module.h"
#include "row_convert.h"

#include <cmath>

/* Wall-clock seconds since the call started (its phases, for the timing report). */
static double
seconds_into_call(const PgkmClustering *c)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, c->started);
	return INSTR_TIME_GET_DOUBLE(now);
}

/* Lives in the run's memory context; the reset callback frees the run. */
typedef struct RunHolder
{
	pgkm_run   *run;
} RunHolder;

/*
 * Memory-context reset callback. Why: an ERROR, a query cancel or a
 * statement_timeout can longjmp out of any point after pgkm_run_create; the
 * context is then reset or deleted with the statement, and this releases
 * every host and GPU allocation of the engine with it.
 */
static void
free_run_callback(void *arg)
{
	RunHolder  *h = (RunHolder *) arg;

	if (h->run != NULL)
	{
		pgkm_run *r = h->run;

		h->run = NULL;
		pgkm_run_free(r);
	}
}

/*
 * Interrupt poll handed to the engine. It only reads the backend's signal
 * flags (it runs on the calling thread, deep in C++ frames, where nothing
 * may ereport); the glue calls CHECK_FOR_INTERRUPTS once the engine has
 * returned PGKM_INTERRUPTED. Only cancel and termination stop the run, so
 * unrelated interrupts (e.g. a barrier) do not abort it.
 */
static int
interrupt_requested(void *ctx)
{
	(void) ctx;
	return (InterruptPending && (QueryCancelPending || ProcDiePending)) ? 1 : 0;
}

/*
 * device => 'gpu' with no usable GPU engine fails before the table is read:
 * a configuration mistake should cost nothing.
 */
static void
require_gpu(void)
{
	char		plugin[MAXPGPATH];
	char		info[PGKM_ERRBUF] = {0};
	int			ok = 0;
	bool		guarded;

	pgkm_gpu_plugin_path(plugin, sizeof(plugin));
	guarded = glue_guard(info, sizeof(info),
						 [&] { ok = pgkm_gpu_available(plugin, info, sizeof(info)); });
	if (!guarded || !ok)
		pgkm_report_engine_error(PGKM_ERR_GPU_UNAVAILABLE, info);
}

/* Is per-iteration progress wanted? (pg_kmeans.progress, or client_min_messages <= INFO) */
static bool
progress_wanted(void)
{
	return pgkm_guc_progress || client_min_messages <= INFO;
}

/*
 * One progress line per step. The elapsed time goes in the DETAIL so that
 * tests can pin the message with VERBOSITY terse. The engine's steps are:
 * init (iteration 0; random init has no inertia yet), Lloyd iterations, and
 * a final assignment that repeats the last iteration number.
 */
static void
report_progress(const pgkm_progress *p, int n_init, int *last_run, int *last_iter)
{
	bool		final = (p->iteration > 0 && p->run == *last_run && p->iteration == *last_iter);

	*last_run = p->run;
	*last_iter = p->iteration;
	if (p->iteration == 0 && std::isnan(p->inertia))
		ereport(INFO,
				(errmsg("pg_kmeans run %d/%d init", p->run + 1, n_init),
				 errdetail("elapsed %.3f s", p->elapsed_s)));
	else if (p->iteration == 0)
		ereport(INFO,
				(errmsg("pg_kmeans run %d/%d init: inertia %.6g",
						p->run + 1, n_init, p->inertia),
				 errdetail("elapsed %.3f s", p->elapsed_s)));
	else if (final)
		ereport(INFO,
				(errmsg("pg_kmeans run %d/%d finished after %d iterations: inertia %.6g",
						p->run + 1, n_init, p->iteration, p->inertia),
				 errdetail("elapsed %.3f s", p->elapsed_s)));
	else if (p->method == PGKM_METHOD_KERNEL)	/* no input-space distances to count */
		ereport(INFO,
				(errmsg("pg_kmeans run %d/%d iteration %d: inertia %.6g, %lld points moved",
						p->run + 1, n_init, p->iteration, p->inertia,
						(long long) p->moved),
				 errdetail("elapsed %.3f s, kernel k-means", p->elapsed_s)));
	else
		ereport(INFO,
				(errmsg("pg_kmeans run %d/%d iteration %d: inertia %.6g, %lld points moved",
						p->run + 1, n_init, p->iteration, p->inertia,
						(long long) p->moved),
				 errdetail("elapsed %.3f s, %s: %lld distance computations",
						   p->elapsed_s, pgkm_method_name(p->method),
						   (long long) p->distance_computations)));
}

/*
 * Scan the relation and run k-means on it. The returned clustering owns the
 * data and the engine run in its own memory context; its result pointers
 * stay valid until pgkm_clustering_end(). Why the caller emits rows straight
 * from the engine's arrays: no second copy of n labels and distances.
 */
PgkmClustering *
pgkm_cluster(const PgkmArgs *args, bool need_tids)
{
	PgkmClustering *c;
	RunHolder  *holder;
	MemoryContextCallback *cb;
	pgkm_options opt;
	char	   *plugin;
	char		err[PGKM_ERRBUF];
	int			rc = PGKM_OK;
	bool		guarded;
	int			last_run = -1,
				last_iter = -1;

	if (args->device == PGKM_DEVICE_GPU)
		require_gpu();

	c = (PgkmClustering *) palloc0(sizeof(PgkmClustering));
	c->cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_kmeans run",
								   ALLOCSET_DEFAULT_SIZES);
	INSTR_TIME_SET_CURRENT(c->started);
	pgkm_scan(args, need_tids, c->cxt, &c->data);
	c->scan_s = seconds_into_call(c);
	if (args->k > c->data.n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k (%d) is larger than the number of usable rows (%lld)",
						args->k, (long long) c->data.n),
				 c->data.n_skipped_null > 0 ?
				 errdetail_plural("%lld row was skipped because a feature was NULL.",
								  "%lld rows were skipped because a feature was NULL.",
								  (unsigned long) c->data.n_skipped_null,
								  (long long) c->data.n_skipped_null) : 0,
				 errhint("Choose k between 1 and the number of rows.")));
	if (args->max_model_values > 0 && c->data.n * (int64) c->data.d > args->max_model_values)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a kernel k-means model of %lld rows x %d features is too large to store",
						(long long) c->data.n, c->data.d),
				 errdetail("Prediction evaluates the kernel against every training row, so the model keeps them all; it may keep at most %lld values (rows x features).",
						   (long long) args->max_model_values),
				 errhint("Fit the model on a sample of the rows (e.g. a view with TABLESAMPLE), or cluster without a model with kmeans() or kmeans_centroids().")));
	if (args->stores_model)
		pgkm_check_model_size(args->k, c->data.d);
	pgkm_check_budget(args, &c->data, need_tids);

	plugin = (char *) MemoryContextAlloc(c->cxt, MAXPGPATH);
	pgkm_build_options(args, &c->data, need_tids, &opt, plugin, MAXPGPATH);
	opt.shift = c->data.shift;
	opt.scale_log2 = c->data.scale_log2;
	holder = (RunHolder *) MemoryContextAllocZero(c->cxt, sizeof(RunHolder));
	cb = (MemoryContextCallback *) MemoryContextAlloc(c->cxt, sizeof(MemoryContextCallback));
	cb->func = free_run_callback;
	cb->arg = holder;
	MemoryContextRegisterResetCallback(c->cxt, cb);

	err[0] = '\0';
	guarded = glue_guard(err, sizeof(err), [&] {
		rc = pgkm_run_create(c->data.x, c->data.n, c->data.d, &opt,
							 interrupt_requested, NULL, &holder->run,
							 err, sizeof(err));
	});
	if (!guarded)
		rc = PGKM_ERR_INTERNAL;
	if (rc != PGKM_OK)
		pgkm_report_engine_error(rc, err);

	for (;;)
	{
		pgkm_progress p;

		memset(&p, 0, sizeof(p));
		err[0] = '\0';
		guarded = glue_guard(err, sizeof(err), [&] {
			rc = pgkm_run_step(holder->run, &p, err, sizeof(err));
		});
		if (!guarded)
			rc = PGKM_ERR_INTERNAL;
		if (rc != PGKM_OK && rc != PGKM_DONE)
			pgkm_report_engine_error(rc, err);
		if (c->setup_s == 0)
			c->setup_s = seconds_into_call(c) - c->scan_s;
		if (rc == PGKM_OK && progress_wanted())
			report_progress(&p, args->n_init, &last_run, &last_iter);
		if (rc == PGKM_DONE)
			break;
		CHECK_FOR_INTERRUPTS();
	}

	c->iterate_s = seconds_into_call(c) - c->scan_s - c->setup_s;
	rc = pgkm_run_result(holder->run, &c->result);
	if (rc != PGKM_OK && rc != PGKM_DONE)
		pgkm_report_engine_error(rc, "no result after the run finished");

	pgkm_report_fewer_clusters(&c->data, &c->result);
	if (args->device == PGKM_DEVICE_AUTO && c->result.fallback_reason &&
		c->result.fallback_reason[0] != '\0')
		ereport(DEBUG1,
				(errmsg("pg_kmeans: device \"auto\" ran on the CPU: %s",
						c->result.fallback_reason)));
	if (progress_wanted())
		ereport(INFO,
				(errmsg("pg_kmeans done: %d iterations, inertia %.6g, %s",
						c->result.iterations, c->result.inertia,
						c->result.converged ? "converged" : "not converged"),
				 errdetail("device %s (%s), elapsed %.3f s",
						   c->result.device ? c->result.device : "?",
						   c->result.device_detail ? c->result.device_detail : "",
						   c->result.elapsed_s)));
	return c;
}

/*
 * The phase split of one call, when progress is wanted. Why: users (and the
 * end-to-end benchmark) need to see whether time goes to reading the table,
 * to moving it to the GPU, to the iterations or to returning rows.
 */
void
pgkm_report_timing(const PgkmClustering *c, int64 rows_out)
{
	double		total = seconds_into_call(c);

	if (!progress_wanted())
		return;
	ereport(INFO,
			(errmsg("pg_kmeans timing: %lld rows read, %lld rows returned",
					(long long) c->data.n, (long long) rows_out),
			 errdetail("scan %.3f s, setup %.3f s, iterations %.3f s, output %.3f s "
					   "(setup: engine buffers, upload to the GPU, initial centroids)",
					   c->scan_s, c->setup_s, c->iterate_s,
					   total - c->scan_s - c->setup_s - c->iterate_s)));
}

/* Free the data buffer and the engine run (through the reset callback). */
void
pgkm_clustering_end(PgkmClustering *c)
{
	MemoryContextDelete(c->cxt);
	c->cxt = NULL;
}

/*
 * A model row holds its centroids and initial centroids (2 k d doubles) and
 * a row must stay under PostgreSQL's 1 GB allocation limit: at most this
 * many values k x d (960 MB of both), beside the row's small columns.
 */
#define PGKM_MODEL_MAX_CENTROID_VALUES INT64CONST(60000000)

void
pgkm_check_model_size(int32 k, int64 d)
{
	if ((int64) k * d > PGKM_MODEL_MAX_CENTROID_VALUES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a k-means model of %d centroids x %lld features is too large to store",
						k, (long long) d),
				 errdetail("A model keeps its centroids and initial centroids in one row: at most %lld values (centroids x features).",
						   (long long) PGKM_MODEL_MAX_CENTROID_VALUES),
				 errhint("Use fewer clusters or features, or cluster without a model with kmeans_centroids().")));
}
