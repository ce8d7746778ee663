/*
 * pg_headers.h: the PostgreSQL headers for C++, in the one order that works.
 *
 * Every glue header includes this one first. It pulls in the C++ standard
 * headers the glue needs BEFORE the PostgreSQL headers (PostgreSQL redefines
 * snprintf and friends, <cstdio> would undo that), then the PostgreSQL
 * headers inside extern "C", then the engine's plain C API.
 */
#ifndef PGKM_PG_HEADERS_H
#define PGKM_PG_HEADERS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>

extern "C"
{
#include "postgres.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
}

#include "pgkm_engine.h"

#endif							/* PGKM_PG_HEADERS_H */
