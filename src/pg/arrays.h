/*
 * arrays.h: SQL arrays made from the engine's C arrays, and C arrays copied
 * out of checked SQL arrays (arrays.cpp). Shared by the result rows (srf.cpp)
 * and the models (model.cpp writes them, model_load.cpp reads them).
 */
#ifndef PGKM_ARRAYS_H
#define PGKM_ARRAYS_H

#include "pg_headers.h"

/*
 * An array of elemtype (real, integer, double precision or bigint) holding
 * v: one-dimensional of rows values when cols is 0, else rows x cols
 * (row-major), lower bounds 1, no NULLs.
 */
extern ArrayType *pgkm_array_from(const void *v, int64 rows, int32 cols, Oid elemtype);

/* The bytes of data of an array checked to hold at least that much and no NULL, copied into cxt. */
extern void *pgkm_array_data_copy(ArrayType *a, Size bytes, MemoryContext cxt);

#endif							/* PGKM_ARRAYS_H */
