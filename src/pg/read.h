/*
 * read.h: the rows of the relation a call names, as read into the engine's
 * float32 buffer by pgkm_scan() (read.cpp, with relation.cpp, scan.cpp,
 * buffer.cpp and row_convert.cpp; their shared state is in scan.h).
 */
#ifndef PGKM_READ_H
#define PGKM_READ_H

#include "args.h"

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

extern void pgkm_scan(const PgkmArgs *args, bool need_tids,
					  MemoryContext datacxt, PgkmData *out);

#endif							/* PGKM_READ_H */
