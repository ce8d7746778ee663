/*
 * errors.cpp: what the glue says for the engine's statuses. The boundary
 * guard itself is errors.h's glue_guard.
 */
#include "errors.h"
#include "module.h"

extern "C"
{
#include "mb/pg_wchar.h"
}

/* See errors.h: each status with its SQLSTATE, and a hint where one helps. */
void
pgkm_report_engine_error(int rc, const char *err)
{
	switch (rc)
	{
		case PGKM_INTERRUPTED:
			/* cancel or statement_timeout: let PostgreSQL say which */
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling k-means run due to an interrupt")));
			break;
		case PGKM_ERR_INVALID:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("k-means engine rejected the arguments: %s", err)));
			break;
		case PGKM_ERR_NOMEM:
			/* the GPU adapter prefixes its messages with "GPU": a device budget, not the host */
			if (strncmp(err, "GPU", 3) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_OUT_OF_MEMORY),
						 errmsg("out of GPU memory in the k-means engine"),
						 errdetail("%s", err),
						 errhint("Raise pg_kmeans.gpu_memory_limit (0 means what the device has free), or use device => 'cpu'.")));
			/* the budget refuses a call before it allocates, if one is set */
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory in the k-means engine"),
					 strcmp(err, "out of memory in the k-means engine") != 0 ? errdetail("%s", err) : 0,
					 pgkm_guc_memory_limit_kb > 0 ?
					 errhint("Lower pg_kmeans.memory_limit to be refused before allocating, or cluster fewer rows or clusters.") :
					 errhint("pg_kmeans.memory_limit is 0 (no limit): a superuser may set it so that calls that cannot fit are refused before they start; or cluster fewer rows or clusters.")));
			break;
		case PGKM_ERR_GPU_UNAVAILABLE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no usable GPU engine for device \"gpu\""),
					 errdetail("%s", err),
					 errhint("Use device => 'cpu' or 'auto', or install pg_kmeans_cuda.so on a host with an NVIDIA GPU and driver.")));
			break;
		case PGKM_ERR_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("k-means result out of range: %s", err),
					 errhint("Scale the features down (for example divide them by 1e100): squared distances must fit in double precision, up to about 1.8e308.")));
			break;
		case PGKM_ERR_GPU:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("GPU error during k-means"),
					 errdetail("%s", err),
					 errhint("Retry with device => 'cpu'.")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("internal error in the k-means engine (status %d)", rc),
					 errdetail("%s", err)));
	}
}

#define PGKM_ECHO_BYTES 64

char *
pgkm_echo_name(const char *given)
{
	int			len = (int) strlen(given);
	int			cut = pg_mbcliplen(given, len, PGKM_ECHO_BYTES);

	return cut < len ? psprintf("%.*s...", cut, given) : pstrdup(given);
}
