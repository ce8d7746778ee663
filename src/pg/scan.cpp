/*
 * scan.cpp: rows into one compact float32 buffer (n x d, row-major) plus,
 * when the caller wants labels per row, the ctid and table of every row.
 *
 * Every value is converted and checked here, whichever path read it: the
 * direct heap scan of one table (below, with a fast path that reads fixed-
 * width columns straight from the tuple) or the query path (read.cpp),
 * which hands over the values of each row.
 */
#include "scan.h"

#include <cmath>

extern "C"
{
#include "utils/numeric.h"
#include "utils/snapmgr.h"
}

#define PGKM_INTERRUPT_ROWS 4096	/* rows between CHECK_FOR_INTERRUPTS */

/*
 * Where a row is, for error messages: its ctid, and its table when that is
 * not the relation named in the call (a ctid is only unique within one
 * table); neither where the caller may not select it (the query path does
 * not even read them then).
 */
static void
format_row(const PgkmScan *s, ItemPointer tid, char *buf, size_t len)
{
	if (tid == NULL || s->hide_tids)
		snprintf(buf, len, "in a row of \"%s\"", s->relname);
	else if (s->cur_relid == s->relid || s->cur_relid == InvalidOid || s->hide_tables)
		snprintf(buf, len, "at ctid (%u,%u)", ItemPointerGetBlockNumberNoCheck(tid),
				 (unsigned) ItemPointerGetOffsetNumberNoCheck(tid));
	else
	{
		char	   *member = get_rel_name(s->cur_relid);

		snprintf(buf, len, "at ctid (%u,%u) of table \"%s\"", ItemPointerGetBlockNumberNoCheck(tid),
				 (unsigned) ItemPointerGetOffsetNumberNoCheck(tid), member ? member : "?");
	}
}

/*
 * Room for row s->n. Why inline with one compare: it runs once per row;
 * buffer.cpp grows the buffer and faults its pages in, in parts.
 */
static inline void
ensure_capacity(PgkmScan *s)
{
	if (unlikely(s->n >= s->ready))
		pgkm_buffer_make_room(s);
}

/* Error for a NaN or infinite feature value, naming column and row. */
static void
report_non_finite(const PgkmScan *s, const char *colname, double v, ItemPointer tid)
{
	char		where[NAMEDATALEN + 64];

	format_row(s, tid, where, sizeof(where));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("column \"%s\" has a non-finite value (%s) %s",
					colname, pgkm_nonfinite_name(v),
					where),
			 errhint("k-means needs finite numbers; set such values to NULL to skip their rows.")));
}

/*
 * A numeric whose float8 conversion is not finite: NaN and infinity are
 * non-finite values; anything else (1e400) is finite but beyond float8.
 */
static void
report_numeric(const PgkmScan *s, const char *colname, Datum v, double d, ItemPointer tid)
{
	Numeric		num = DatumGetNumeric(v);
	char		where[NAMEDATALEN + 64];

	if (numeric_is_nan(num) || numeric_is_inf(num))
		report_non_finite(s, colname, d, tid);
	format_row(s, tid, where, sizeof(where));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("column \"%s\" has value %s %s, out of range for double precision",
					colname, numeric_out_sci(num, 6), where),
			 errhint("Features are read as double precision; rescale the column.")));
}

/* One finite value as fp64; NaN and infinity are errors naming column and row. */
static inline double
to_feature(const PgkmScan *s, const char *colname, double v, ItemPointer tid)
{
	if (unlikely(!std::isfinite(v)))
		report_non_finite(s, colname, v, tid);
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
			return to_feature(s, c->name, DatumGetFloat4(v), tid);
		case PGKM_COL_FLOAT8:
			return to_feature(s, c->name, DatumGetFloat8(v), tid);
		case PGKM_COL_NUMERIC:
			{
				MemoryContext old = MemoryContextSwitchTo(s->rowcxt);
				double		d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, v));

				if (unlikely(!std::isfinite(d)))
					report_numeric(s, c->name, v, d, tid);
				MemoryContextSwitchTo(old);
				s->rowcxt_dirty = true;
				return to_feature(s, c->name, d, tid);
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
 * A feature vector must be one-dimensional, as in kmeans_predict(): '{{1},{2}}'
 * is not silently flattened.
 */
static void
report_array_ndim(const PgkmScan *s, ArrayType *arr, ItemPointer tid)
{
	char		where[NAMEDATALEN + 64];

	format_row(s, tid, where, sizeof(where));
	ereport(ERROR,
			(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
			 errmsg("array column \"%s\" has %d dimensions %s, expected one",
					s->cols[s->array_col].name, ARR_NDIM(arr), where),
			 errhint("A feature vector is a one-dimensional array, such as '{1,2,3}'.")));
}

/*
 * Before the first usable row (d is known then): start the conversion into
 * the float buffer (row_convert.h); reals may be copied as they are when
 * every column is real or real[].
 */
static inline void
begin_rows(PgkmScan *s)
{
	if (likely(s->narrow.row != NULL))
		return;
	pgkm_narrow_begin(&s->narrow, s->d, s->args->k, pgkm_shift_allowed(s->args), s->datacxt);
	s->all_real = true;
	for (int i = 0; i < s->ncols; i++)
		if (s->cols[i].kind != PGKM_COL_FLOAT4 && s->cols[i].kind != PGKM_COL_FLOAT4_ARRAY)
			s->all_real = false;
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
		if (unlikely(ARR_NDIM(arr) > 1))
			report_array_ndim(s, arr, tid);
		if (ARR_HASNULL(arr) && array_contains_nulls(arr))
		{
			s->n_skipped++;
			return;
		}
		arrlen = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
		if (s->d < 0)
		{
			/* empty beside scalar columns too: a column that adds no feature is a mistake */
			if (arrlen < 1)
			{
				char		where[NAMEDATALEN + 64];

				format_row(s, tid, where, sizeof(where));
				ereport(ERROR,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("array column \"%s\" is empty %s",
								s->cols[s->array_col].name, where),
						 errhint("Every row's array must hold the same, nonzero number of features.")));
			}
			s->d = s->n_scalar + arrlen;
		}
		else if (s->n_scalar + arrlen != s->d)
		{
			char		where[NAMEDATALEN + 64];

			format_row(s, tid, where, sizeof(where));
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("array column \"%s\" has %d elements %s, expected %d",
							s->cols[s->array_col].name, arrlen, where,
							s->d - s->n_scalar),
					 errdetail("The length is fixed by the first row read."),
					 errhint("Every row's array must have the same length.")));
		}
	}

	begin_rows(s);
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
						to_feature(s, c->name, p[e], tid);	/* reports the first */
				j += arrlen;
			}
			else
			{
				out[j] = (float) to_feature(s, c->name, DatumGetFloat4(vals[s->val_index[i]]), tid);
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

				if (unlikely(!pgkm_widen_finite_float4(row + j, p, arrlen)))
					for (int e = 0; e < arrlen; e++)
						to_feature(s, c->name, p[e], tid);	/* reports the first */
				j += arrlen;
			}
			else if (i == s->array_col)
			{
				const float8 *p = (const float8 *) ARR_DATA_PTR(arr);

				if (unlikely(!pgkm_copy_finite_float8(row + j, p, arrlen)))
					for (int e = 0; e < arrlen; e++)
						to_feature(s, c->name, p[e], tid);
				j += arrlen;
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
 * Every PGKM_INTERRUPT_ROWS rows (of all tables together): check for
 * interrupts, and empty the row context if a detoast or numeric conversion
 * used it (ten million rows must not leave ten million allocations behind;
 * fixed-width columns never allocate, so they never pay for the reset).
 */
static inline void
after_rows(PgkmScan *s)
{
	if (++s->seen % PGKM_INTERRUPT_ROWS == 0)
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
	begin_rows(s);
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
					report_non_finite(s, s->cols[i].name, out[i], &tup->t_self);
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
 * Rows from here on come from table tableoid. Why runs and not an oid per
 * row: the tables are read one after the other, so a handful of runs
 * describe millions of rows.
 */
void
pgkm_scan_note_table(PgkmScan *s, Oid tableoid)
{
	s->cur_relid = tableoid;
	if (!s->need_tids ||
		(s->ntables > 0 && s->tables[s->ntables - 1].tableoid == tableoid))
		return;
	if (s->ntables == s->tables_cap)
	{
		s->tables_cap = Max(s->tables_cap * 2, 8);
		s->tables = s->tables == NULL ?
			(PgkmTableRun *) MemoryContextAlloc(s->datacxt, sizeof(PgkmTableRun) * s->tables_cap) :
			(PgkmTableRun *) repalloc(s->tables, sizeof(PgkmTableRun) * s->tables_cap);
	}
	s->tables[s->ntables].first = s->n;
	s->tables[s->ntables].tableoid = tableoid;
	s->ntables++;
}

/*
 * One table of the relation, read directly: a plain sequential scan with
 * the statement's snapshot (privileges were checked on the relation named
 * in the call, as the executor checks them), from the first block: never
 * synchronized with other scans of the table, which would start it
 * mid-table and so change the rows' order, and with it the result of a
 * seeded init (read.cpp). The requested columns are
 * found by name in this table. Rows are read from the tuple in place when
 * add_row_from_tuple applies, otherwise from the slot's values after one
 * slot_getsomeattrs.
 */
void
pgkm_scan_direct(PgkmScan *s, Relation rel)
{
	TupleTableSlot *slot;
	TableScanDesc scan;
	int			maxatt = 0;
	bool		tuple_path;

	CHECK_FOR_INTERRUPTS();		/* a tree may hold thousands of tiny tables */
	pgkm_member_columns(s, rel);
	pgkm_scan_note_table(s, RelationGetRelid(rel));
	for (int i = 0; i < s->ncols; i++)
	{
		maxatt = Max(maxatt, s->cols[i].attnum);
		s->val_index[i] = s->cols[i].attnum - 1;
	}

	slot = table_slot_create(rel, NULL);
	tuple_path = s->tuple_offsets && slot->tts_ops == &TTSOpsBufferHeapTuple;
	scan = table_beginscan_strat(rel, GetActiveSnapshot(), 0, NULL, true, false);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		if (!tuple_path ||
			!add_row_from_tuple(s, ((BufferHeapTupleTableSlot *) slot)->base.tuple, maxatt))
		{
			slot_getsomeattrs(slot, maxatt);
			add_row(s, slot->tts_values, slot->tts_isnull, &slot->tts_tid);
		}
		after_rows(s);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * One row of the query path: vals/nulls in column order, tid NULL when the
 * query could not select ctid.
 */
void
pgkm_scan_add_values(PgkmScan *s, const Datum *vals, const bool *nulls,
					 ItemPointer tid)
{
	add_row(s, vals, nulls, tid);
	after_rows(s);
}
