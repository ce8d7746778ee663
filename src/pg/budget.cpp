/*
 * budget.cpp: pg_kmeans.memory_limit (budget.h), the one place that counts
 * a call's host memory against it.
 *
 * Why a call is refused only on what it really holds: the relation's size
 * says little about the rows a call gets (row-level security may show 10 of
 * a million rows, dead rows count in the size until VACUUM). So the size
 * estimate only sizes the first allocation; the budget is checked each time
 * the buffer must grow (data only, while reading), and once after the scan
 * for the whole call (data and engine) with the real row count, after k has
 * been checked against it (the engine's need grows with k).
 */
#include "budget.h"
#include "module.h"

static const char *const budget_hint =
	"Raise pg_kmeans.memory_limit (superuser), or cluster a sample of the rows, e.g. a materialized view built with TABLESAMPLE.";

/* The limit in bytes; 0 = none. */
static int64
memory_limit_bytes(void)
{
	return (int64) pgkm_guc_memory_limit_kb * 1024;
}

int64
pgkm_data_bytes(int64 rows, int32 d, bool need_tids)
{
	return rows * d * (int64) sizeof(float) +
		(need_tids ? rows * (int64) sizeof(ItemPointerData) : 0);
}

/* A byte count for humans, rounded up like pg_size_pretty's units. */
static void
format_bytes(int64 bytes, char *buf, size_t len)
{
	if (bytes < 10 * 1024)
		snprintf(buf, len, "%lld bytes", (long long) bytes);
	else if (bytes < 10 * 1024 * 1024)
		snprintf(buf, len, "%lld kB", (long long) ((bytes + 1023) >> 10));
	else if (bytes < (int64) 10 * 1024 * 1024 * 1024)
		snprintf(buf, len, "%lld MB", (long long) ((bytes + (1 << 20) - 1) >> 20));
	else
		snprintf(buf, len, "%lld GB", (long long) ((bytes + (1 << 30) - 1) >> 30));
}

bool
pgkm_buffer_fits(int64 rows, int32 d, bool need_tids)
{
	int64		limit = memory_limit_bytes();

	return limit <= 0 || pgkm_data_bytes(rows, d, need_tids) <= limit;
}

void
pgkm_refuse_buffer(int64 rows, int32 d, bool need_tids, const char *relname)
{
	int64		need = pgkm_data_bytes(rows, d, need_tids);
	char		need_s[32],
				limit_s[32];

	format_bytes(need, need_s, sizeof(need_s));
	format_bytes(memory_limit_bytes(), limit_s, sizeof(limit_s));
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("k-means data buffer for %lld rows x %d features needs %s, over pg_kmeans.memory_limit (%s)",
					(long long) rows, d, need_s, limit_s),
			 errdetail("Relation \"%s\" has more usable rows than that; reading stopped at the limit, before the engine's own memory is counted.",
					   relname),
			 errhint("%s", budget_hint)));
}

int64
pgkm_engine_memory_limit(const PgkmData *data, bool need_tids)
{
	int64		limit = memory_limit_bytes();

	if (limit <= 0)
		return 0;
	return Max(limit - pgkm_data_bytes(data->n, data->d, need_tids), 1);
}

/* What the engine says it allocates for the call (never negative). */
static int64
engine_bytes(const PgkmArgs *args, const PgkmData *data, bool need_tids)
{
	pgkm_options opt;
	char		plugin[MAXPGPATH];

	pgkm_build_options(args, data, need_tids, &opt, plugin, sizeof(plugin));
	return Max(pgkm_estimate_bytes(data->n, data->d, &opt), 0);
}

/*
 * Why before the engine starts: a run over the limit must end in a clear
 * error, not in the OOM killer taking the server down.
 */
void
pgkm_check_budget(const PgkmArgs *args, const PgkmData *data, bool need_tids)
{
	int64		limit = memory_limit_bytes();
	int64		held,
				engine,
				centroids;
	char		total_s[32],
				limit_s[32];

	if (limit <= 0)
		return;
	held = pgkm_data_bytes(data->n, data->d, need_tids);
	engine = engine_bytes(args, data, need_tids);
	/* kmeans_centroids' and kmeans_fit's centroid arrays, and their copy in the rows out */
	centroids = need_tids ? 0 : 2 * (int64) args->k * data->d * (int64) sizeof(double);
	if (held + engine + centroids <= limit)
		return;
	format_bytes(held + engine + centroids, total_s, sizeof(total_s));
	format_bytes(limit, limit_s, sizeof(limit_s));
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("k-means on %lld rows x %d features needs about %s, over pg_kmeans.memory_limit (%s)",
					(long long) data->n, data->d, total_s, limit_s),
			 errdetail("Data buffer %lld bytes, engine %lld bytes, centroids out %lld bytes, limit %lld bytes.",
					   (long long) held, (long long) engine, (long long) centroids, (long long) limit),
			 errhint("%s", budget_hint)));
}

/*
 * How many kB of kmeans() rows the tuplestore may keep in memory before it
 * spills to a temporary file. Why not work_mem (what InitMaterializedSRF
 * uses): one row costs about 90 bytes in memory (a 40-byte minimal tuple in
 * a 64-byte chunk, its header, the pointer array), so 4MB spills past about
 * 45k rows, and every larger call then writes and rereads ~44 bytes a row
 * of temporary file, per row I/O that can throttle on a busy disk (and
 * fails under temp_file_limit). Instead the result counts against
 * pg_kmeans.memory_limit, the budget this call was already granted for its
 * data buffer and engine: the tuplestore may use what that budget leaves
 * over what the call holds now. With no limit set (0), it may use as much as
 * the call holds now, which it frees on return, so the statement's peak at
 * most doubles. Never less than work_mem. Past the bound the tuplestore
 * spills as before, so memory stays bounded either way.
 */
int
pgkm_output_max_kbytes(const PgkmArgs *args, const PgkmData *data)
{
	int64		limit = memory_limit_bytes();
	int64		held = pgkm_data_bytes(data->n, data->d, true) + engine_bytes(args, data, true);
	int64		allowance = (limit > 0 ? limit - held : held) / 1024;

	return (int) Min(Max(allowance, (int64) work_mem), (int64) MAX_KILOBYTES);
}
