/*
 * buffer.cpp: the float32 data buffer: grown as rows arrive, within
 * pg_kmeans.memory_limit (budget.h), and faulted in ahead of the rows in
 * parts, on several threads.
 */
#include "budget.h"
#include "module.h"
#include "scan.h"

#include <csignal>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

/* Fewest rows faulted in at a time: small calls touch little memory. */
#define PGKM_READY_MIN_BYTES ((int64) 1 << 20)

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
	int64		newcap;

	if (!pgkm_buffer_fits(s->n + 1, s->d, s->need_tids))
		pgkm_refuse_buffer(s->n + 1, s->d, s->need_tids, s->relname);
	newcap = s->cap > 0 ? s->cap * 2 : Max(s->n_est + s->n_est / 16 + 64, 1024);
	while (newcap > s->n + 1 && !pgkm_buffer_fits(newcap, s->d, s->need_tids))
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
