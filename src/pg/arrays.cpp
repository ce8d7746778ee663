/*
 * arrays.cpp: SQL arrays to and from C arrays (arrays.h).
 *
 * Why one memcpy and not construct_array: the element types here are
 * fixed-width and passed by value, so the array's data is the C array
 * itself; a kernel model's training rows can be millions of values, too
 * many to go through a Datum each. The result is the array construct_array
 * would make.
 */
#include "arrays.h"

static int
element_bytes(Oid elemtype)
{
	switch (elemtype)
	{
		case FLOAT4OID:
		case INT4OID:
			return 4;
		case FLOAT8OID:
		case INT8OID:
			return 8;
		default:
			elog(ERROR, "pg_kmeans makes no array of type %u", elemtype);
	}
	return 0;					/* not reached */
}

ArrayType *
pgkm_array_from(const void *v, int64 rows, int32 cols, Oid elemtype)
{
	int			ndim = cols > 0 ? 2 : 1;
	int64		count = rows * Max(cols, 1);
	Size		nbytes;
	Size		size;
	ArrayType  *a;

	if (count == 0)
		return construct_empty_array(elemtype);
	if (rows > (int64) MaxArraySize || count > (int64) MaxArraySize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("array size exceeds the maximum allowed (%d)", (int) MaxArraySize)));
	nbytes = (Size) count * element_bytes(elemtype);
	size = ARR_OVERHEAD_NONULLS(ndim) + nbytes;
	a = (ArrayType *) palloc0(size);
	SET_VARSIZE(a, size);
	a->ndim = ndim;
	a->dataoffset = 0;
	a->elemtype = elemtype;
	ARR_DIMS(a)[0] = (int) rows;
	ARR_LBOUND(a)[0] = 1;
	if (cols > 0)
	{
		ARR_DIMS(a)[1] = cols;
		ARR_LBOUND(a)[1] = 1;
	}
	memcpy(ARR_DATA_PTR(a), v, nbytes);
	return a;
}

void *
pgkm_array_data_copy(ArrayType *a, Size bytes, MemoryContext cxt)
{
	void	   *p = MemoryContextAlloc(cxt, bytes);

	memcpy(p, ARR_DATA_PTR(a), bytes);
	return p;
}
