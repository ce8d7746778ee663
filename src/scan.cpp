/*
 * scan.cpp: reading the caller's relation into one compact float32 buffer
 * (n x d, row-major) plus, when the caller wants labels per row, the ctid of
 * every row.
 *
 * Two readers, one result. Without row-level security the table is read
 * directly (table_beginscan with the statement's snapshot), after the same
 * table or column SELECT privilege checks a plain SELECT makes: this is the
 * fastest correct path. When check_enable_rls() says policies apply to the
 * caller, an SPI cursor runs SELECT ctid, <quoted columns> FROM ONLY <rel>,
 * so PostgreSQL itself applies privileges and every policy exactly.
 */
#include "pg_kmeans.h"
#include "errors.h"
#include "row_convert.h"

#include <cmath>
#include <csignal>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C"
{
#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "optimizer/plancat.h"
#include "utils/acl.h"
#include "utils/numeric.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
}

#define PGKM_INTERRUPT_ROWS 4096	/* rows between CHECK_FOR_INTERRUPTS */
#define PGKM_SPI_BATCH 10000

typedef struct ColInfo
{
	const char *name;
	AttrNumber	attnum;
	PgkmColKind kind;
	int			tuple_off;		/* byte offset in a heap tuple without NULLs, or -1 */
} ColInfo;

typedef struct PgkmScan
{
	const PgkmArgs *args;
	const char *relname;		/* unqualified, for messages */
	ColInfo    *cols;
	int			ncols;
	int			array_col;		/* index into cols, or -1 */
	int32		n_scalar;
	int32		d;				/* -1 until the first usable row (array) */
	bool		need_tids;
	MemoryContext datacxt;		/* owns x and tids */
	MemoryContext rowcxt;		/* per-row conversions, reset in batches */
	float	   *x;
	ItemPointerData *tids;
	int64		n;
	int64		cap;
	int64		n_est;			/* rows estimated from the relation's size */
	int64		n_skipped;
	Datum	   *vals;			/* per row, indexed like cols (SPI path) */
	bool	   *nulls;
	int		   *val_index;		/* where column i sits in the values passed to add_row */
	bool		rowcxt_dirty;	/* a detoast or numeric conversion allocated */
	bool		all_float4;		/* every column is real: the tight loop applies */
	bool		all_real;		/* every column is real or real[]: reals may be copied */
	PgkmNarrow	narrow;			/* values into the float buffer (row_convert.h) */
	bool		tuple_offsets;	/* every column has a fixed tuple_off */
} PgkmScan;

/*
 * Bytes one call needs for n rows of d features: the float32 buffer, the
 * ctids, and what the engine says it allocates. Why a separate function:
 * the up-front estimate and every buffer growth use the same formula.
 */
static int64
needed_bytes(const PgkmArgs *args, int64 n, int32 d, bool need_tids,
			 int64 *data_bytes, int64 *engine_bytes)
{
	pgkm_options opt;
	char		plugin[MAXPGPATH];

	pgkm_build_options(args, &opt, plugin, sizeof(plugin));
	*data_bytes = n * d * (int64) sizeof(float) +
		(need_tids ? n * (int64) sizeof(ItemPointerData) : 0);
	*engine_bytes = pgkm_estimate_bytes(n, d, &opt);
	if (*engine_bytes < 0)
		*engine_bytes = 0;
	return *data_bytes + *engine_bytes;
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

/*
 * Refuse a call whose memory need exceeds pg_kmeans.memory_limit, with the
 * numbers in the message. Why before allocating: a 10M-row mistake must end
 * in a clear error, not in the OOM killer taking the server down.
 */
void
pgkm_check_budget(const PgkmArgs *args, int64 n, int32 d, bool need_tids,
				  bool estimated)
{
	int64		limit = (int64) pgkm_guc_memory_limit_kb * 1024;
	int64		data_bytes,
				engine_bytes,
				total;
	char		total_s[32],
				limit_s[32];

	if (limit <= 0)
		return;
	total = needed_bytes(args, n, d, need_tids, &data_bytes, &engine_bytes);
	if (total <= limit)
		return;
	format_bytes(total, total_s, sizeof(total_s));
	format_bytes(limit, limit_s, sizeof(limit_s));
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("k-means on %s%lld rows x %d features needs about %s, over pg_kmeans.memory_limit (%s)",
					estimated ? "an estimated " : "",
					(long long) n, d, total_s, limit_s),
			 errdetail("Data buffer %lld bytes, engine %lld bytes, limit %lld bytes.",
					   (long long) data_bytes, (long long) engine_bytes,
					   (long long) limit),
			 errhint("Raise pg_kmeans.memory_limit (superuser), or cluster a sample of the rows, e.g. a materialized view built with TABLESAMPLE.")));
}

/* Format a ctid the way PostgreSQL prints it, for error messages. */
static void
format_tid(ItemPointer tid, char *buf, size_t len)
{
	snprintf(buf, len, "(%u,%u)", ItemPointerGetBlockNumberNoCheck(tid),
			 (unsigned) ItemPointerGetOffsetNumberNoCheck(tid));
}

/*
 * Map a column's (domain base) type to a feature kind; anything else is an
 * error naming the column and its type.
 */
static PgkmColKind
column_kind(const char *relname, const char *colname, AttrNumber attnum, Oid relid)
{
	Oid			typ = attnum > 0 ? getBaseType(get_atttype(relid, attnum)) : InvalidOid;

	switch (typ)
	{
		case INT2OID:
			return PGKM_COL_INT2;
		case INT4OID:
			return PGKM_COL_INT4;
		case INT8OID:
			return PGKM_COL_INT8;
		case FLOAT4OID:
			return PGKM_COL_FLOAT4;
		case FLOAT8OID:
			return PGKM_COL_FLOAT8;
		case NUMERICOID:
			return PGKM_COL_NUMERIC;
		case FLOAT4ARRAYOID:
			return PGKM_COL_FLOAT4_ARRAY;
		case FLOAT8ARRAYOID:
			return PGKM_COL_FLOAT8_ARRAY;
		default:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column \"%s\" of relation \"%s\" has type %s, which is not numeric",
					colname, relname,
					format_type_be(attnum > 0 ? get_atttype(relid, attnum) : get_atttype(relid, attnum))),
			 errhint("Use columns of type smallint, integer, bigint, real, double precision or numeric, or one real[] or double precision[] column.")));
	return PGKM_COL_INT2;		/* not reached */
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
 * Fault the new part of the float buffer in before rows are copied. Why:
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
 * Make room for one more row. Why grow by doubling from the size estimate:
 * the estimate is usually right, so the common case is one allocation; the
 * budget is re-checked with the real row count before each growth.
 */
static void
ensure_capacity(PgkmScan *s)
{
	int64		newcap;

	if (s->n < s->cap)
		return;
	newcap = s->cap > 0 ? s->cap * 2 : Max(s->n_est + s->n_est / 16 + 64, 1024);
	pgkm_check_budget(s->args, s->n + 1, s->d, s->need_tids, false);
	{
		int64		limit = (int64) pgkm_guc_memory_limit_kb * 1024;
		int64		db,
					eb;

		/* Shrink the step so that the new buffer itself fits the budget. */
		while (limit > 0 && newcap > s->n + 1 &&
			   needed_bytes(s->args, newcap, s->d, s->need_tids, &db, &eb) > limit)
			newcap = s->n + 1 + (newcap - s->n - 1) / 2;
	}
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
	prefault_buffer(s->x, (Size) s->n * s->d * sizeof(float),
					(Size) newcap * s->d * sizeof(float));
	s->cap = newcap;
}

/* Error for a NaN or infinite feature value, naming column and row. */
static void
report_non_finite(const char *colname, double v, ItemPointer tid)
{
	char		tidbuf[32];

	format_tid(tid, tidbuf, sizeof(tidbuf));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("column \"%s\" has a non-finite value (%s) at ctid %s",
					colname, std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"),
					tidbuf),
			 errhint("k-means needs finite numbers; set such values to NULL to skip their rows.")));
}

/* One finite value as fp64; NaN and infinity are errors naming column and row. */
static inline double
to_feature(const char *colname, double v, ItemPointer tid)
{
	if (unlikely(!std::isfinite(v)))
		report_non_finite(colname, v, tid);
	return v;
}

/*
 * A scalar feature as fp64, checked. Why a converter per kind, each with
 * only the checks its type needs: an integer is always finite. Any finite
 * value is accepted: row_convert.h shifts and scales it into the float
 * buffer. Numeric converts through float8 and allocates, so it marks the
 * row context dirty.
 */
static inline double
scalar_feature(PgkmScan *s, const ColInfo *c, Datum v, ItemPointer tid)
{
	switch (c->kind)
	{
		case PGKM_COL_INT2:
			return DatumGetInt16(v);
		case PGKM_COL_INT4:
			return DatumGetInt32(v);
		case PGKM_COL_INT8:
			return (double) DatumGetInt64(v);
		case PGKM_COL_FLOAT4:
			return to_feature(c->name, DatumGetFloat4(v), tid);
		case PGKM_COL_FLOAT8:
			return to_feature(c->name, DatumGetFloat8(v), tid);
		case PGKM_COL_NUMERIC:
			{
				MemoryContext old = MemoryContextSwitchTo(s->rowcxt);
				double		d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, v));

				MemoryContextSwitchTo(old);
				s->rowcxt_dirty = true;
				return to_feature(c->name, d, tid);
			}
		default:
			return 0.0;
	}
}

/*
 * One array value as an ArrayType we can read in place. Why not
 * DatumGetArrayTypeP always: a plain (4-byte header) array is used where it
 * lies on the page; a short-header array (under 127 bytes) is copied into
 * the caller's stack buffer, not palloc'ed per row; only compressed or
 * out-of-line values are detoasted, in the row context.
 */
typedef union ShortArrayBuf
{
	char		bytes[VARHDRSZ + 128];
	double		align;
} ShortArrayBuf;

static inline ArrayType *
row_array(PgkmScan *s, Datum v, ShortArrayBuf *buf)
{
	struct varlena *vl = (struct varlena *) DatumGetPointer(v);

	if (likely(VARATT_IS_4B_U(vl)))
		return (ArrayType *) vl;
	if (VARATT_IS_SHORT(vl) && !VARATT_IS_EXTERNAL(vl))
	{
		Size		len = VARSIZE_SHORT(vl) - VARHDRSZ_SHORT;

		SET_VARSIZE(buf->bytes, len + VARHDRSZ);
		memcpy(VARDATA(buf->bytes), VARDATA_SHORT(vl), len);
		return (ArrayType *) buf->bytes;
	}
	{
		MemoryContext old = MemoryContextSwitchTo(s->rowcxt);
		ArrayType  *arr = (ArrayType *) PG_DETOAST_DATUM(v);

		MemoryContextSwitchTo(old);
		s->rowcxt_dirty = true;
		return arr;
	}
}

/*
 * Convert one row into the buffer, or skip it when a feature is NULL.
 * vals/nulls hold column i at s->val_index[i] (the slot's attribute order
 * on the direct path, the cursor's column order on the SPI path). Why NULL
 * checks come first: a row with a NULL is skipped as a whole, even if
 * another of its values would be an error. Errors come in column order.
 */
static void
add_row(PgkmScan *s, const Datum *vals, const bool *nulls, ItemPointer tid)
{
	ArrayType  *arr = NULL;
	ShortArrayBuf shortbuf;
	int			arrlen = 0;
	int			j = 0;

	for (int i = 0; i < s->ncols; i++)
		if (nulls[s->val_index[i]])
		{
			s->n_skipped++;
			return;
		}
	if (s->array_col >= 0)
	{
		arr = row_array(s, vals[s->val_index[s->array_col]], &shortbuf);
		if (ARR_HASNULL(arr) && array_contains_nulls(arr))
		{
			s->n_skipped++;
			return;
		}
		arrlen = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
		if (s->d < 0)
		{
			if (s->n_scalar + arrlen < 1)
			{
				char		tidbuf[32];

				format_tid(tid, tidbuf, sizeof(tidbuf));
				ereport(ERROR,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("array column \"%s\" is empty at ctid %s",
								s->cols[s->array_col].name, tidbuf),
						 errhint("Every row's array must hold the same, nonzero number of features.")));
			}
			s->d = s->n_scalar + arrlen;
			pgkm_check_budget(s->args, s->n_est, s->d, s->need_tids, true);
		}
		else if (s->n_scalar + arrlen != s->d)
		{
			char		tidbuf[32];

			format_tid(tid, tidbuf, sizeof(tidbuf));
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("array column \"%s\" has %d elements at ctid %s, expected %d",
							s->cols[s->array_col].name, arrlen, tidbuf,
							s->d - s->n_scalar),
					 errdetail("The length is fixed by the first row read."),
					 errhint("Every row's array must have the same length.")));
		}
	}

	if (unlikely(s->narrow.row == NULL))
		pgkm_narrow_begin(&s->narrow, s->d, s->args->k, s->datacxt);
	ensure_capacity(s);
	if (s->narrow.fast && s->all_real)
	{
		/* reals copied as they are: the fast path of row_convert.h */
		float	   *out = s->x + s->n * s->d;
		uint32		maxbits = 0;

		for (int i = 0; i < s->ncols; i++)
		{
			const ColInfo *c = &s->cols[i];
			uint32		mb;

			if (i == s->array_col)
			{
				const float4 *p = (const float4 *) ARR_DATA_PTR(arr);

				if (unlikely(!pgkm_copy_finite_float4(out + j, p, arrlen, &mb)))
					for (int e = 0; e < arrlen; e++)
						to_feature(c->name, p[e], tid);	/* reports the first */
				j += arrlen;
			}
			else
			{
				out[j] = (float) to_feature(c->name, DatumGetFloat4(vals[s->val_index[i]]), tid);
				mb = pgkm_float_bits(out[j++]) & 0x7fffffffu;
			}
			maxbits = Max(maxbits, mb);
		}
		pgkm_narrow_copied(&s->narrow, s->x, s->n, maxbits);
	}
	else
	{
		double	   *row = s->narrow.row;

		for (int i = 0; i < s->ncols; i++)
		{
			const ColInfo *c = &s->cols[i];

			if (i == s->array_col && c->kind == PGKM_COL_FLOAT4_ARRAY)
			{
				const float4 *p = (const float4 *) ARR_DATA_PTR(arr);

				for (int e = 0; e < arrlen; e++)
					row[j++] = to_feature(c->name, p[e], tid);
			}
			else if (i == s->array_col)
			{
				const float8 *p = (const float8 *) ARR_DATA_PTR(arr);

				for (int e = 0; e < arrlen; e++)
					row[j++] = to_feature(c->name, p[e], tid);
			}
			else
				row[j++] = scalar_feature(s, c, vals[s->val_index[i]], tid);
		}
		pgkm_narrow_store(&s->narrow, s->x, s->n);
	}
	if (s->need_tids)
		s->tids[s->n] = *tid;
	s->n++;
}

/*
 * Every PGKM_INTERRUPT_ROWS rows: check for interrupts, and empty the row
 * context if a detoast or numeric conversion used it (ten million rows
 * must not leave ten million allocations behind; fixed-width columns never
 * allocate, so they never pay for the reset).
 */
static inline void
after_rows(PgkmScan *s, int64 seen)
{
	if (seen % PGKM_INTERRUPT_ROWS == 0)
	{
		if (s->rowcxt_dirty)
		{
			MemoryContextReset(s->rowcxt);
			s->rowcxt_dirty = false;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The heap fast path for a row of fixed-width scalar columns: when the
 * tuple has no NULL and stores every used attribute (none added later
 * with a default), each column lies at its precomputed offset, so the row
 * is read straight from the page without deforming it into the slot.
 * Returns false when it does not apply (the caller then deforms).
 */
static inline bool
add_row_from_tuple(PgkmScan *s, HeapTuple tup, int maxatt)
{
	HeapTupleHeader th = tup->t_data;
	const char *data;
	float	   *out;

	if (HeapTupleHasNulls(tup) || HeapTupleHeaderGetNatts(th) < maxatt)
		return false;
	data = (const char *) th + th->t_hoff;
	if (unlikely(s->narrow.row == NULL))
		pgkm_narrow_begin(&s->narrow, s->d, s->args->k, s->datacxt);
	ensure_capacity(s);
	out = s->x + s->n * s->d;
	if (s->all_float4 && s->narrow.fast)
	{
		uint32		acc = 0,
					maxbits = 0;

		for (int i = 0; i < s->ncols; i++)
		{
			float		f;
			uint32		b;

			memcpy(&f, data + s->cols[i].tuple_off, sizeof(f));
			out[i] = f;
			b = pgkm_float_bits(f);
			acc |= (b & 0x7f800000u) + 0x00800000u;
			maxbits = Max(maxbits, b & 0x7fffffffu);
		}
		if (unlikely(acc & 0x80000000u))
			for (int i = 0; i < s->ncols; i++)
				if (!std::isfinite(out[i]))
					report_non_finite(s->cols[i].name, out[i], &tup->t_self);
		pgkm_narrow_copied(&s->narrow, s->x, s->n, maxbits);
	}
	else
	{
		for (int i = 0; i < s->ncols; i++)
		{
			const ColInfo *c = &s->cols[i];
			const char *p = data + c->tuple_off;
			Datum		v;

			switch (c->kind)
			{
				case PGKM_COL_INT2:
					{
						int16		x;

						memcpy(&x, p, sizeof(x));
						v = Int16GetDatum(x);
						break;
					}
				case PGKM_COL_INT4:
				case PGKM_COL_FLOAT4:
					{
						int32		x;

						memcpy(&x, p, sizeof(x));
						v = Int32GetDatum(x);	/* same bits as a float4 datum */
						break;
					}
				default:		/* int8, float8: 8 bytes, by value */
					{
						int64		x;

						memcpy(&x, p, sizeof(x));
						v = Int64GetDatum(x);
						break;
					}
			}
			s->narrow.row[i] = scalar_feature(s, c, v, &tup->t_self);
		}
		pgkm_narrow_store(&s->narrow, s->x, s->n);
	}
	if (s->need_tids)
		s->tids[s->n] = tup->t_self;
	s->n++;
	return true;
}

/*
 * The fast path: privileges checked like the executor checks a SELECT
 * (table privilege, else every used column, ctid included when labels are
 * returned), then a plain sequential scan with the statement's snapshot.
 * Rows are read from the tuple in place when add_row_from_tuple applies,
 * otherwise from the slot's values after one slot_getsomeattrs.
 */
static void
scan_direct(PgkmScan *s, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			user = GetUserId();
	TupleTableSlot *slot;
	TableScanDesc scan;
	int			maxatt = 0;
	int64		seen = 0;
	bool		tuple_path;

	if (pg_class_aclcheck(relid, user, ACL_SELECT) != ACLCHECK_OK)
	{
		for (int i = 0; i < s->ncols; i++)
			if (pg_attribute_aclcheck(relid, s->cols[i].attnum, user, ACL_SELECT) != ACLCHECK_OK)
				aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(rel->rd_rel->relkind),
							   RelationGetRelationName(rel));
		if (s->need_tids &&
			pg_attribute_aclcheck(relid, SelfItemPointerAttributeNumber, user, ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(rel->rd_rel->relkind),
						   RelationGetRelationName(rel));
	}
	s->val_index = (int *) palloc(sizeof(int) * s->ncols);
	for (int i = 0; i < s->ncols; i++)
	{
		maxatt = Max(maxatt, s->cols[i].attnum);
		s->val_index[i] = s->cols[i].attnum - 1;
	}

	slot = table_slot_create(rel, NULL);
	tuple_path = s->tuple_offsets && slot->tts_ops == &TTSOpsBufferHeapTuple;
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		if (!tuple_path ||
			!add_row_from_tuple(s, ((BufferHeapTupleTableSlot *) slot)->base.tuple, maxatt))
		{
			slot_getsomeattrs(slot, maxatt);
			add_row(s, slot->tts_values, slot->tts_isnull, &slot->tts_tid);
		}
		after_rows(s, ++seen);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * The row-level-security path: PostgreSQL plans and runs the SELECT as the
 * calling user, so privileges and policies apply exactly. Column names are
 * quoted with quote_identifier, never spliced raw. FROM ONLY matches the
 * direct scan: a ctid is only meaningful within one table.
 */
static void
scan_spi(PgkmScan *s, Relation rel)
{
	StringInfoData q;
	Portal		portal;
	Oid			relid = RelationGetRelid(rel);
	int64		seen = 0;

	s->val_index = (int *) palloc(sizeof(int) * s->ncols);
	for (int i = 0; i < s->ncols; i++)
		s->val_index[i] = i;
	initStringInfo(&q);
	appendStringInfoString(&q, "SELECT ctid");
	for (int i = 0; i < s->ncols; i++)
		appendStringInfo(&q, ", %s", quote_identifier(s->cols[i].name));
	appendStringInfo(&q, " FROM ONLY %s",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												get_rel_name(relid)));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = SPI_cursor_open_with_args(NULL, q.data, 0, NULL, NULL, NULL, true, 0);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, PGKM_SPI_BATCH);
		if (SPI_processed == 0)
			break;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tup = SPI_tuptable->vals[r];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		tidnull;
			ItemPointer tid = (ItemPointer) DatumGetPointer(SPI_getbinval(tup, desc, 1, &tidnull));

			for (int i = 0; i < s->ncols; i++)
				s->vals[i] = SPI_getbinval(tup, desc, i + 2, &s->nulls[i]);
			add_row(s, s->vals, s->nulls, tid);
			after_rows(s, ++seen);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();
}

/*
 * Resolve and type-check the requested columns. Why by catalog lookup and
 * not by building SQL: a name such as x"; DROP TABLE t; -- is looked up as
 * the literal column name it is, and is simply missing (42703).
 */
static void
resolve_columns(PgkmScan *s, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);

	s->ncols = s->args->ncols;
	s->cols = (ColInfo *) palloc0(sizeof(ColInfo) * s->ncols);
	s->array_col = -1;
	s->n_scalar = 0;
	for (int i = 0; i < s->ncols; i++)
	{
		ColInfo    *c = &s->cols[i];

		c->name = s->args->colnames[i];
		c->attnum = get_attnum(relid, c->name);
		if (c->attnum == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation \"%s\" does not exist",
							c->name, s->relname)));
		c->kind = column_kind(s->relname, c->name, c->attnum, relid);
		if (c->kind == PGKM_COL_FLOAT4_ARRAY || c->kind == PGKM_COL_FLOAT8_ARRAY)
		{
			if (s->array_col >= 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("at most one array column can be clustered, got \"%s\" and \"%s\"",
								s->cols[s->array_col].name, c->name)));
			s->array_col = i;
		}
		else
			s->n_scalar++;
	}
	s->d = s->array_col >= 0 ? -1 : s->n_scalar;
}

/*
 * Where each used column lies in a heap tuple that has no NULLs: the
 * attribute offsets up to the first variable-width attribute, aligned as
 * heap_fill_tuple aligns them. Why: add_row_from_tuple then reads a row of
 * fixed-width columns without deforming it. Numeric and array columns, or
 * a column behind a variable-width one, turn the tuple path off.
 */
static void
compute_tuple_offsets(PgkmScan *s, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			maxatt = 0;
	int			off = 0;

	s->tuple_offsets = s->array_col < 0;
	s->all_float4 = s->array_col < 0;
	s->all_real = true;
	for (int i = 0; i < s->ncols; i++)
	{
		s->cols[i].tuple_off = -1;
		maxatt = Max(maxatt, s->cols[i].attnum);
		if (s->cols[i].kind != PGKM_COL_FLOAT4)
			s->all_float4 = false;
		if (s->cols[i].kind != PGKM_COL_FLOAT4 && s->cols[i].kind != PGKM_COL_FLOAT4_ARRAY)
			s->all_real = false;
		if (s->cols[i].kind == PGKM_COL_NUMERIC)
			s->tuple_offsets = false;
	}
	for (int a = 0; a < maxatt && a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (att->attlen <= 0)
			break;
		off = att_align_nominal(off, att->attalign);
		for (int i = 0; i < s->ncols; i++)
			if (s->cols[i].attnum == a + 1)
				s->cols[i].tuple_off = off;
		off += att->attlen;
	}
	for (int i = 0; i < s->ncols; i++)
		if (s->cols[i].tuple_off < 0)
			s->tuple_offsets = false;
}

/*
 * Rows the relation probably holds, from the planner's own estimator (pages
 * now, density from the last VACUUM/ANALYZE). Only sizes the first buffer and
 * the early budget check; the real count decides.
 */
static int64
estimate_rows(Relation rel)
{
	BlockNumber pages;
	double		tuples,
				allvisfrac;

	estimate_rel_size(rel, NULL, &pages, &tuples, &allvisfrac);
	if (!(tuples > 0))
		return 0;
	return (int64) Min(tuples, (double) (PG_INT64_MAX / 4));
}

/*
 * Read the relation into *out. datacxt owns the buffers (so they go away
 * with the run, on success or on ERROR). Errors: not a table or
 * materialized view, unpopulated materialized view, missing or non-numeric
 * column, permission denied, NaN/Inf, array length, memory budget, no
 * usable rows. A NOTICE reports rows skipped for a NULL feature.
 */
void
pgkm_scan(const PgkmArgs *args, bool need_tids, MemoryContext datacxt,
		  PgkmData *out)
{
	PgkmScan	s;
	Relation	rel;
	char		relkind;

	memset(&s, 0, sizeof(s));
	s.args = args;
	s.need_tids = need_tids;
	s.datacxt = datacxt;

	rel = try_relation_open(args->relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", args->relid)));
	s.relname = pstrdup(RelationGetRelationName(rel));
	relkind = rel->rd_rel->relkind;
	if (relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot cluster partitioned table \"%s\"", s.relname),
				 errdetail("A ctid identifies a row only within one partition."),
				 errhint("Cluster each partition, or a materialized view over the partitioned table.")));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table or materialized view", s.relname),
				 errhint("To cluster the rows of a view or a query, materialize them first (CREATE MATERIALIZED VIEW or CREATE TABLE ... AS).")));
	if (relkind == RELKIND_MATVIEW && !RelationIsPopulated(rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized view \"%s\" has not been populated", s.relname),
				 errhint("Use the REFRESH MATERIALIZED VIEW command.")));

	resolve_columns(&s, rel);
	compute_tuple_offsets(&s, rel);
	s.vals = (Datum *) palloc(sizeof(Datum) * s.ncols);
	s.nulls = (bool *) palloc(sizeof(bool) * s.ncols);
	s.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "pg_kmeans row",
									 ALLOCSET_DEFAULT_SIZES);
	s.n_est = estimate_rows(rel);
	if (s.d > 0)
		pgkm_check_budget(args, s.n_est, s.d, need_tids, true);

	if (check_enable_rls(args->relid, InvalidOid, false) == RLS_ENABLED)
		scan_spi(&s, rel);
	else
		scan_direct(&s, rel);
	table_close(rel, NoLock);	/* keep the lock to end of transaction, as SELECT does */
	MemoryContextDelete(s.rowcxt);

	if (s.n_skipped > 0)
		ereport(NOTICE,
				(errmsg_plural("skipped %lld row with a NULL feature",
								"skipped %lld rows with a NULL feature",
								(unsigned long) s.n_skipped, (long long) s.n_skipped)));
	if (s.n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("relation \"%s\" has no rows to cluster", s.relname),
				 s.n_skipped > 0 ?
				 errdetail("All %lld rows have a NULL feature.", (long long) s.n_skipped) : 0));

	pgkm_narrow_end(&s.narrow, s.x, out);
	out->n = s.n;
	out->d = s.d;
	out->x = s.x;
	out->tids = s.tids;
	out->n_skipped_null = s.n_skipped;
	out->relname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(args->relid)),
											  s.relname);
}
