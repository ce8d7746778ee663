/*
 * scan.h: the state shared by the files that read a relation into the
 * float32 buffer: relation.cpp (what is read, and may it be), read.cpp
 * (pgkm_scan and the query path), scan.cpp (rows into the buffer, and the
 * direct heap scan), buffer.cpp (the buffer, grown within
 * pg_kmeans.memory_limit).
 */
#ifndef PGKM_SCAN_H
#define PGKM_SCAN_H

#include "read.h"
#include "row_convert.h"

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

/* One requested feature column, as found in the relation being read. */
typedef struct ColInfo
{
	const char *name;
	AttrNumber	attnum;			/* in the relation being read (members differ) */
	PgkmColKind kind;
	int			tuple_off;		/* byte offset in a heap tuple without NULLs, or -1 */
} ColInfo;

typedef struct PgkmScan
{
	const PgkmArgs *args;
	Oid			relid;			/* the relation named in the call */
	const char *relname;		/* its unqualified name, for messages */
	Oid			cur_relid;		/* the member being read, or InvalidOid (unknown) */
	ColInfo    *cols;
	int			ncols;
	int			array_col;		/* index into cols, or -1 */
	int32		n_scalar;
	int32		d;				/* -1 until the first usable row (array) */
	bool		need_tids;		/* ctid and table of every row, for kmeans() */
	bool		hide_tids;		/* errors may not name a row's ctid (the caller may not select it) */
	bool		hide_tables;	/* nor its member table (nor select tableoid) */
	MemoryContext datacxt;		/* owns x, tids and tables */
	MemoryContext rowcxt;		/* per-row conversions, reset in batches */
	float	   *x;
	ItemPointerData *tids;
	int64		n;
	int64		cap;			/* rows allocated */
	int64		ready;			/* rows whose pages are faulted in (<= cap) */
	int64		n_est;			/* rows estimated from the relations' sizes */
	int64		n_skipped;
	int64		seen;			/* rows read so far, usable or not, all tables */
	PgkmTableRun *tables;		/* which table each row came from (need_tids) */
	int32		ntables;
	int32		tables_cap;
	Datum	   *vals;			/* per row, indexed like cols (query path) */
	bool	   *nulls;
	int		   *val_index;		/* where column i sits in the values passed to add_row */
	bool		rowcxt_dirty;	/* a detoast or numeric conversion allocated */
	bool		all_float4;		/* every column is real: the tight loop applies */
	bool		all_real;		/* every column is real or real[]: reals may be copied */
	PgkmNarrow	narrow;			/* values into the float buffer (row_convert.h) */
	bool		tuple_offsets;	/* every column has a fixed tuple_off */
} PgkmScan;

/* relation.cpp */
extern Relation pgkm_open_relation(PgkmScan *s);
extern void pgkm_resolve_columns(PgkmScan *s, Relation rel);
extern void pgkm_check_select(PgkmScan *s, Relation rel);
extern bool pgkm_may_select_column(Oid relid, AttrNumber attnum);
extern List *pgkm_member_relations(Relation rel, bool *all_heap);
extern void pgkm_member_columns(PgkmScan *s, Relation member);
extern int64 pgkm_estimate_rows(Relation rel);

/* scan.cpp */
extern void pgkm_scan_direct(PgkmScan *s, Relation rel);
extern void pgkm_scan_add_values(PgkmScan *s, const Datum *vals, const bool *nulls,
								 ItemPointer tid);
extern void pgkm_scan_note_table(PgkmScan *s, Oid tableoid);

/* buffer.cpp */
extern void pgkm_buffer_make_room(PgkmScan *s);

#endif							/* PGKM_SCAN_H */
