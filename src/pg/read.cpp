/*
 * read.cpp: pgkm_scan(), reading the rows of the relation a call names.
 *
 * Two readers, one result. Without row-level security every table of the
 * relation's inheritance tree is read directly (scan.cpp) after the checks
 * of relation.cpp: this is the fastest correct path. When check_enable_rls()
 * says policies apply to the caller, or when a member is a foreign table,
 * an SPI cursor runs SELECT [tableoid, ctid,] <quoted columns> FROM <rel>,
 * so PostgreSQL itself applies privileges and the relation's policies (and
 * reads foreign tables through their wrapper).
 *
 * Both read a table's rows in the same order every time (from its first
 * block: synchronized scans off), because k-means++'s sample and random
 * init pick rows by position, and the same seed must give the same result.
 */
#include "scan.h"

extern "C"
{
#include "access/table.h"
#include "utils/rls.h"
}

#define PGKM_SPI_BATCH 10000

/*
 * The query path. Column names are quoted with quote_identifier, never
 * spliced raw. Without ONLY: the query returns the rows of the whole tree,
 * like the direct path. tableoid and ctid are selected when kmeans()
 * returns them (tableoid only for a tree: a lone table's is the OID the
 * caller passed); otherwise only where the caller may select them anyway
 * (not hide_tids, hide_tables), so that an error can still name the row (a role allowed SELECT (x) must
 * be able to cluster x, as SELECT x works for it).
 */
static void
scan_query(PgkmScan *s, Relation rel)
{
	StringInfoData q;
	Portal		portal;
	int			nestlevel;
	bool		with_table = rel->rd_rel->relhassubclass && !s->hide_tables;
	bool		with_tid = !s->hide_tids;
	int			first = (with_table ? 1 : 0) + (with_tid ? 1 : 0) + 1;

	for (int i = 0; i < s->ncols; i++)
		s->val_index[i] = i;
	initStringInfo(&q);
	appendStringInfoString(&q, "SELECT ");
	if (with_table)
		appendStringInfoString(&q, "tableoid, ");
	if (with_tid)
		appendStringInfoString(&q, "ctid, ");
	for (int i = 0; i < s->ncols; i++)
		appendStringInfo(&q, "%s%s", i > 0 ? ", " : "", quote_identifier(s->cols[i].name));
	appendStringInfo(&q, " FROM %s",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												RelationGetRelationName(rel)));
	if (!with_table)
		pgkm_scan_note_table(s, rel->rd_rel->relhassubclass ? InvalidOid : RelationGetRelid(rel));

	/* heap scans from block 0 (read.cpp's header); reverted below, or by the abort on ERROR */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("synchronize_seqscans", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
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
			ItemPointer tid = NULL;
			bool		isnull;

			if (with_table)
				pgkm_scan_note_table(s, DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull)));
			if (with_tid)
			{
				tid = (ItemPointer) DatumGetPointer(SPI_getbinval(tup, desc, first - 1, &isnull));
				if (isnull)
					elog(ERROR, "query returned a NULL ctid");
			}
			for (int i = 0; i < s->ncols; i++)
				s->vals[i] = SPI_getbinval(tup, desc, first + i, &s->nulls[i]);
			pgkm_scan_add_values(s, s->vals, s->nulls, tid);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();
	AtEOXact_GUC(true, nestlevel);
}

/*
 * Read the relation into *out. datacxt owns the buffers (so they go away
 * with the run, on success or on ERROR). Errors: not a table, partitioned
 * table or materialized view, unpopulated materialized view, missing or
 * non-numeric column, permission denied, NaN/Inf, out of range for real,
 * array shape, memory budget, no usable rows. A NOTICE reports rows
 * skipped for a NULL feature.
 */
void
pgkm_scan(const PgkmArgs *args, bool need_tids, MemoryContext datacxt,
		  PgkmData *out)
{
	PgkmScan	s;
	Relation	rel;
	List	   *members;
	List	   *opened = NIL;
	ListCell   *lc;
	bool		all_heap;

	memset(&s, 0, sizeof(s));
	s.args = args;
	s.relid = args->relid;
	s.need_tids = need_tids;
	s.datacxt = datacxt;

	rel = pgkm_open_relation(&s);
	pgkm_resolve_columns(&s, rel);
	pgkm_check_select(&s, rel);
	s.vals = (Datum *) palloc(sizeof(Datum) * s.ncols);
	s.nulls = (bool *) palloc(sizeof(bool) * s.ncols);
	s.val_index = (int *) palloc(sizeof(int) * s.ncols);
	s.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "pg_kmeans row",
									 ALLOCSET_DEFAULT_SIZES);

	/* an error names a row only by what the caller may select anyway, on either path */
	s.hide_tids = !need_tids && !pgkm_may_select_column(s.relid, SelfItemPointerAttributeNumber);
	s.hide_tables = !need_tids && !pgkm_may_select_column(s.relid, TableOidAttributeNumber);

	members = pgkm_member_relations(rel, &all_heap);
	foreach(lc, members)
	{
		Relation	m = table_open(lfirst_oid(lc), NoLock);	/* locked by pgkm_member_relations */

		s.n_est += pgkm_estimate_rows(m);
		opened = lappend(opened, m);
	}

	if (!all_heap || check_enable_rls(s.relid, InvalidOid, false) == RLS_ENABLED)
		scan_query(&s, rel);
	else
		foreach(lc, opened)
			pgkm_scan_direct(&s, (Relation) lfirst(lc));
	foreach(lc, opened)
		table_close((Relation) lfirst(lc), NoLock);
	table_close(rel, NoLock);	/* keep the locks to end of transaction, as SELECT does */
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
	out->tables = s.tables;
	out->ntables = s.ntables;
	out->n_skipped_null = s.n_skipped;
	out->relname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(args->relid)),
											  s.relname);
}
