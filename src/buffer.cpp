/*
 * buffer.cpp: the float32 data buffer and pg_kmeans.memory_limit.
 *
 * Why a call is refused only on what it really holds: the relation's size
 * says little about the rows a call gets (row-level security may show 10 of
 * a million rows, dead rows count in the size until VACUUM). So the size
 * estimate only sizes the first allocation; the budget is checked each time
 * the buffer must grow (data only, while reading), and once after the scan
 * for the whole call (data and engine) with the real row count, after k has
 * been checked against it (the engine's need grows with k).
 */
#include "scan.h"

#include <csignal>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

/* Fewest rows faulted in at a time: small calls touch little memory. */
#define PGKM_READY_MIN_BYTES ((int64) 1 << 20)

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

static const char *const budget_hint =
	"Raise pg_kmeans.memory_limit (superuser), or cluster a sample of the rows, e.g. a materialized view built with TABLESAMPLE.";

/*
 * The whole call, once the rows are read and k is known to fit them: the
 * data buffer plus what the engine says it allocates for n rows and k
 * clusters. Why before the engine starts: a run over the limit must end in
 * a clear error, not in the OOM killer taking the server down.
 */
void
pgkm_check_budget(const PgkmArgs *args, const PgkmData *data, bool need_tids)
{
	int64		limit = memory_limit_bytes();
	int64		held,
				engine;
	pgkm_options opt;
	char		plugin[MAXPGPATH];
	char		total_s[32],
				limit_s[32];

	if (limit <= 0)
		return;
	pgkm_build_options(args, data, need_tids, &opt, plugin, sizeof(plugin));
	held = pgkm_data_bytes(data->n, data->d, need_tids);
	engine = Max(pgkm_estimate_bytes(data->n, data->d, &opt), 0);
	if (held + engine <= limit)
		return;
	format_bytes(held + engine, total_s, sizeof(total_s));
	format_bytes(limit, limit_s, sizeof(limit_s));
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("k-means on %lld rows x %d features needs about %s, over pg_kmeans.memory_limit (%s)",
					(long long) data->n, data->d, total_s, limit_s),
			 errdetail("Data buffer %lld bytes, engine %lld bytes, limit %lld bytes.",
					   (long long) held, (long long) engine, (long long) limit),
			 errhint("%s", budget_hint)));
}

/* The buffer must hold one more row than the limit allows: stop reading. */
static void
report_buffer_over_budget(const PgkmScan *s, int64 limit)
{
	int64		need = pgkm_data_bytes(s->n + 1, s->d, s->need_tids);
	char		need_s[32],
				limit_s[32];

	format_bytes(need, need_s, sizeof(need_s));
	format_bytes(limit, limit_s, sizeof(limit_s));
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("k-means data buffer for %lld rows x %d features needs %s, over pg_kmeans.memory_limit (%s)",
					(long long) (s->n + 1), s->d, need_s, limit_s),
			 errdetail("Relation \"%s\" has more usable rows than that; reading stopped at the limit, before the engine's own memory is counted.",
					   s->relname),
			 errhint("%s", budget_hint)));
}

/* One slice of a parallel prefault; the thread runs madvise and nothing else. */
typedef struct PrefaultSlice
{
	uintptr_t	start;
	uintptr_t	end;
} PrefaultSlice;

static void *
prefault_slice(void *arg)
{
#ifdef MADV_POPULATE_WRITE
	PrefaultSlice *sl = (PrefaultSlice *) arg;

	if (sl->end > sl->start)
		(void) madvise((void *) sl->start, sl->end - sl->start, MADV_POPULATE_WRITE);
#endif
	return NULL;
}

/*
 * Fault a range of the float buffer in before rows are copied. Why:
 * touching a fresh multi-GB buffer row by row took a third of the array
 * scan in 4 kB page-fault traps; MADV_POPULATE_WRITE (Linux 5.14) maps the
 * same pages in a kernel loop. Only advice: older kernels say EINVAL and
 * the rows fault the pages in as before. (Transparent huge pages were
 * measured too: faster when warm, but 3-4x slower on a session's first
 * call, where the kernel zeroes never-used 2 MB pages.)
 * Why threads: what is left is the kernel zeroing the pages (~1 s for the
 * 3 GB of 1M x real[768] on the H100 host, most of that scan), which runs
 * in parallel over disjoint ranges. The threads call madvise only (no
 * PostgreSQL function, no allocation) and are started with every signal
 * blocked, so the backend's signal handlers only ever run on its own
 * thread (as in the engine's thread pool); if one cannot be started, this
 * thread does its slice.
 */
static void
prefault_buffer(void *p, Size from, Size to)
{
#ifdef MADV_POPULATE_WRITE
	const uintptr_t page = 4096;
	const Size	per_thread_min = (Size) 64 << 20;
	uintptr_t	start = ((uintptr_t) p + from + page - 1) & ~(page - 1);
	uintptr_t	end = ((uintptr_t) p + to) & ~(page - 1);
	PrefaultSlice slices[16];
	pthread_t	threads[16];
	bool		started[16] = {false};
	long		cores = sysconf(_SC_NPROCESSORS_ONLN);
	int			nt;

	if (end <= start)
		return;
	nt = (int) Min((Size) Min(cores > 0 ? cores : 1, 16), (end - start) / per_thread_min);
	if (pgkm_guc_threads > 0)
		nt = Min(nt, pgkm_guc_threads);
	nt = Max(nt, 1);
	for (int t = 0; t < nt; t++)
	{
		slices[t].start = start + (end - start) / page * t / nt * page;
		slices[t].end = t == nt - 1 ? end : start + (end - start) / page * (t + 1) / nt * page;
	}
	if (nt > 1)
	{
		sigset_t	all,
					old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);	/* inherited by the new threads */
		for (int t = 1; t < nt; t++)
			started[t] = pthread_create(&threads[t], NULL, prefault_slice, &slices[t]) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	prefault_slice(&slices[0]);
	for (int t = 1; t < nt; t++)
	{
		if (started[t])
			pthread_join(threads[t], NULL);
		else
			prefault_slice(&slices[t]);
	}
#endif
}

/*
 * Grow the buffer so that it has room for at least one more row. Why grow
 * by doubling from the size estimate: the estimate is usually right, so the
 * common case is one allocation. Each growth is checked against the budget
 * with the rows really read, and shrunk to fit it.
 */
static void
grow_buffer(PgkmScan *s)
{
	int64		limit = memory_limit_bytes();
	int64		newcap;

	if (limit > 0 && pgkm_data_bytes(s->n + 1, s->d, s->need_tids) > limit)
		report_buffer_over_budget(s, limit);
	newcap = s->cap > 0 ? s->cap * 2 : Max(s->n_est + s->n_est / 16 + 64, 1024);
	while (limit > 0 && newcap > s->n + 1 &&
		   pgkm_data_bytes(newcap, s->d, s->need_tids) > limit)
		newcap = s->n + 1 + (newcap - s->n - 1) / 2;
	if (s->x == NULL)
	{
		s->x = (float *) MemoryContextAllocExtended(s->datacxt,
													(Size) newcap * s->d * sizeof(float),
													MCXT_ALLOC_HUGE);
		if (s->need_tids)
			s->tids = (ItemPointerData *)
				MemoryContextAllocExtended(s->datacxt,
										   (Size) newcap * sizeof(ItemPointerData),
										   MCXT_ALLOC_HUGE);
	}
	else
	{
		s->x = (float *) repalloc_huge(s->x, (Size) newcap * s->d * sizeof(float));
		if (s->need_tids)
			s->tids = (ItemPointerData *)
				repalloc_huge(s->tids, (Size) newcap * sizeof(ItemPointerData));
	}
	s->cap = newcap;
}

/*
 * Called when row s->n lies beyond the faulted-in part of the buffer: grow
 * the buffer if it is full, then fault in the next part. Why in doubling
 * parts and not the whole allocation at once: an estimate of a million rows
 * for a call that gets ten (row-level security, dead rows) must not touch
 * the pages of a million; the pages faulted in stay under twice the rows
 * read (plus 1 MB), and large parts still run on several threads.
 */
void
pgkm_buffer_make_room(PgkmScan *s)
{
	int64		min_rows = Max(PGKM_READY_MIN_BYTES / ((int64) s->d * (int64) sizeof(float)), 1);
	int64		ready;

	if (s->n >= s->cap)
		grow_buffer(s);
	ready = Min(s->cap, Max(s->ready * 2, s->n + min_rows));
	prefault_buffer(s->x, (Size) s->ready * s->d * sizeof(float),
					(Size) ready * s->d * sizeof(float));
	s->ready = ready;
}
