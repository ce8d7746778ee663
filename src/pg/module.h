/*
 * module.h: the server-level settings (GUCs), defined in module.cpp.
 */
#ifndef PGKM_MODULE_H
#define PGKM_MODULE_H

#include "pg_headers.h"

extern int	pgkm_guc_threads;
extern int	pgkm_guc_memory_limit_kb;	/* 0 = no limit; accounted in budget.cpp */
extern int	pgkm_guc_gpu_memory_limit_kb;	/* 0 = device limit */
extern bool pgkm_guc_progress;
extern char *pgkm_guc_gpu_plugin;	/* "" = $libdir/pg_kmeans_cuda.so */

#endif							/* PGKM_MODULE_H */
