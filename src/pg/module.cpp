/*
 * module.cpp: module magic and the server-level settings (GUCs).
 */
#include "module.h"

extern "C"
{
PG_MODULE_MAGIC;
void		_PG_init(void);
}

int			pgkm_guc_threads = 0;
int			pgkm_guc_memory_limit_kb = 4 * 1024 * 1024;	/* 4 GB */
int			pgkm_guc_gpu_memory_limit_kb = 0;
bool		pgkm_guc_progress = false;
char	   *pgkm_guc_gpu_plugin = NULL;

/*
 * Define the pg_kmeans.* settings. Why these levels: threads and progress are
 * a session's own business (USERSET); the memory budgets protect the server
 * from one user's query and the plugin path names a shared library to load,
 * so only a superuser may change those (SUSET). Nothing touches CUDA here:
 * when preloaded, _PG_init runs in the postmaster, and a CUDA context does
 * not survive fork(); the GPU plugin is loaded lazily per backend.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("pg_kmeans.threads",
							"CPU threads used by one k-means run (0 = every core the server process may use; more than those cores count as all of them).",
							NULL, &pgkm_guc_threads, 0, 0, 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_kmeans.memory_limit",
							"Host memory one k-means call may use (data buffer, engine, and the in-memory result rows before they spill; 0 = no limit).",
							NULL, &pgkm_guc_memory_limit_kb,
							4 * 1024 * 1024, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_kmeans.gpu_memory_limit",
							"GPU memory one k-means run may use (0 = what the device allows).",
							NULL, &pgkm_guc_gpu_memory_limit_kb, 0, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	/* Not "verbose": VERBOSE is a keyword, so SET pg_kmeans.verbose would not parse. */
	DefineCustomBoolVariable("pg_kmeans.progress",
							 "Report progress of every iteration as INFO messages.",
							 NULL, &pgkm_guc_progress, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("pg_kmeans.gpu_plugin",
							   "Path of the CUDA engine plugin (empty = $libdir/pg_kmeans_cuda.so).",
							   NULL, &pgkm_guc_gpu_plugin, "",
							   PGC_SUSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("pg_kmeans");
}
