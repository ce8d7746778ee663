/*
 * relation.cpp: the relation a call names, and what reading it means.
 *
 * The contract: a call reads the rows that SELECT <columns> FROM <relation>
 * would return to the caller, with exactly that SELECT's privilege checks.
 * That is: USAGE on the relation's schema (the SELECT names it); SELECT on
 * the relation, or else on every column used (ctid and tableoid included
 * when kmeans() returns them), checked on the named relation only, as the
 * executor does; and every table of its inheritance tree, partitions
 * included, each with its own column numbers.
 */
#include "scan.h"
#include "errors.h"

extern "C"
{
#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_inherits.h"
#include "optimizer/plancat.h"
#include "utils/acl.h"
}

/*
 * Open and lock the relation like SELECT (AccessShareLock, kept to the end
 * of the transaction) and refuse what cannot be clustered. Why USAGE on the
 * schema first: a caller who may not name the relation in a SELECT learns
 * nothing about it here either, not even its kind or its columns.
 */
Relation
pgkm_open_relation(PgkmScan *s)
{
	Relation	rel = try_relation_open(s->relid, AccessShareLock);
	Oid			nsp;
	char		relkind;

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", s->relid)));
	nsp = RelationGetNamespace(rel);
	if (pg_namespace_aclcheck(nsp, GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_SCHEMA, get_namespace_name(nsp));
	s->relname = pstrdup(RelationGetRelationName(rel));
	relkind = rel->rd_rel->relkind;
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW &&
		relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table or materialized view", s->relname),
				 errhint("To cluster the rows of a view or a query, materialize them first (CREATE MATERIALIZED VIEW or CREATE TABLE ... AS).")));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
	if (relkind == RELKIND_MATVIEW && !RelationIsPopulated(rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized view \"%s\" has not been populated", s->relname),
				 errhint("Use the REFRESH MATERIALIZED VIEW command.")));
	return rel;
}

/*
 * Map a column's (domain base) type to a feature kind; anything else is an
 * error naming the column and its type.
 */
static PgkmColKind
column_kind(const char *relname, const char *colname, Oid atttype)
{
	switch (getBaseType(atttype))
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
	if (OidIsValid(get_element_type(getBaseType(atttype))))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" has type %s, which is not an array of real or double precision",
						colname, relname, format_type_be(atttype)),
				 errhint("Store it as real[] or double precision[] (ALTER TABLE ... ALTER COLUMN ... TYPE double precision[]), or cluster a materialized view that casts it.")));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column \"%s\" of relation \"%s\" has type %s, which is not numeric",
					colname, relname, format_type_be(atttype)),
			 errhint("Use columns of type smallint, integer, bigint, real, double precision or numeric, or one real[] or double precision[] column.")));
	return PGKM_COL_INT2;		/* not reached */
}

/*
 * Resolve and type-check the requested columns in the named relation. Why
 * by catalog lookup and not by building SQL: a name such as
 * x"; DROP TABLE t; -- is looked up as the literal column name it is, and is
 * simply missing (42703). A system column (ctid, tableoid) is refused by its
 * type, like any other non-numeric column.
 */
void
pgkm_resolve_columns(PgkmScan *s, Relation rel)
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
							pgkm_echo_name(c->name), s->relname)));
		c->kind = column_kind(s->relname, c->name, get_atttype(relid, c->attnum));
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

/* May the caller SELECT this column (or the whole relation)? */
bool
pgkm_may_select_column(Oid relid, AttrNumber attnum)
{
	Oid			user = GetUserId();

	return pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck(relid, attnum, user, ACL_SELECT) == ACLCHECK_OK;
}

/*
 * The executor's check for SELECT [tableoid, ctid,] <columns> FROM rel: the
 * table privilege, else every used column; on the named relation only (its
 * inheritance children are not checked, as in SELECT). Same error too.
 * tableoid counts only for a tree: a lone table's tableoid is the OID the
 * caller passed, so returning it reveals nothing SELECT would hide.
 */
void
pgkm_check_select(PgkmScan *s, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	bool		ok;

	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
		return;
	ok = !s->need_tids ||
		((!rel->rd_rel->relhassubclass ||
		  pgkm_may_select_column(relid, TableOidAttributeNumber)) &&
		 pgkm_may_select_column(relid, SelfItemPointerAttributeNumber));
	for (int i = 0; ok && i < s->ncols; i++)
		ok = pgkm_may_select_column(relid, s->cols[i].attnum);
	if (!ok)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
}

/*
 * The relations whose rows SELECT * FROM rel returns: rel and every table
 * of its inheritance tree (partitions of partitions included), each locked
 * like the executor locks them. Partitioned tables hold no rows of their
 * own and are left out, and so are other sessions' temporary tables (the
 * executor skips them too). *all_heap is false when a member is a foreign
 * table, which only a query can read.
 */
List *
pgkm_member_relations(Relation rel, bool *all_heap)
{
	Oid			relid = RelationGetRelid(rel);
	List	   *all;
	List	   *members = NIL;
	ListCell   *lc;

	*all_heap = true;
	if (!rel->rd_rel->relhassubclass)
		return rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE ? NIL : list_make1_oid(relid);
	all = find_all_inheritors(relid, AccessShareLock, NULL);
	foreach(lc, all)
	{
		Oid			member = lfirst_oid(lc);
		Relation	r = table_open(member, NoLock);
		char		kind = r->rd_rel->relkind;
		bool		skip = kind == RELKIND_PARTITIONED_TABLE ||
			(member != relid && RELATION_IS_OTHER_TEMP(r));

		if (kind == RELKIND_FOREIGN_TABLE)
			*all_heap = false;
		table_close(r, NoLock);
		if (!skip)
			members = lappend_oid(members, member);
	}
	return members;
}

/*
 * Where each used column lies in a heap tuple that has no NULLs: the
 * attribute offsets up to the first variable-width attribute, aligned as
 * heap_fill_tuple aligns them. Why: add_row_from_tuple then reads a row of
 * fixed-width columns without deforming it. Numeric and array columns, or
 * a column behind a variable-width one, turn the tuple path off.
 */
static void
find_tuple_offsets(PgkmScan *s, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			maxatt = 0;
	int			off = 0;

	s->tuple_offsets = s->array_col < 0;
	s->all_float4 = s->array_col < 0;
	for (int i = 0; i < s->ncols; i++)
	{
		s->cols[i].tuple_off = -1;
		maxatt = Max(maxatt, s->cols[i].attnum);
		if (s->cols[i].kind != PGKM_COL_FLOAT4)
			s->all_float4 = false;
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
 * Find the requested columns in one member of the tree by name: a child's
 * column numbers differ from its parent's (its own columns, dropped ones),
 * and so do their places in its tuples. The types are those of the parent,
 * which inheritance keeps identical.
 */
void
pgkm_member_columns(PgkmScan *s, Relation member)
{
	Oid			relid = RelationGetRelid(member);

	for (int i = 0; i < s->ncols; i++)
	{
		s->cols[i].attnum = get_attnum(relid, s->cols[i].name);
		if (s->cols[i].attnum <= 0)
			elog(ERROR, "column \"%s\" not found in relation \"%s\"",
				 s->cols[i].name, RelationGetRelationName(member));
	}
	find_tuple_offsets(s, member);
}

/*
 * Rows the relation probably holds, from the planner's own estimator (pages
 * now, density from the last VACUUM/ANALYZE). Only sizes the first buffer;
 * the real count decides.
 */
int64
pgkm_estimate_rows(Relation rel)
{
	BlockNumber pages;
	double		tuples,
				allvisfrac;

	if (!RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		return 0;
	estimate_rel_size(rel, NULL, &pages, &tuples, &allvisfrac);
	if (!(tuples > 0))
		return 0;
	return (int64) Min(tuples, (double) (PG_INT64_MAX / 4));
}
