/*
 * errors.h: how the engine fails, and the one guard that turns every C++
 * exception into a pgkm_status plus a message at the C API boundary (api.cpp).
 * Inside the engine, code throws; nothing but the guard catches for good.
 */
#ifndef PGKM_ERRORS_H
#define PGKM_ERRORS_H

#include "pgkm_engine.h"
#include "util.h"

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

namespace pgkm
{

/* An error carrying the pgkm_status the C API returns for it. */
struct EngineError : std::runtime_error
{
	int			status;
	EngineError(int st, const std::string &msg) : std::runtime_error(msg), status(st) {}
};

/* Thrown when the interrupt callback asked to stop. */
struct Interrupted
{
};

/*
 * Runs f (returning a pgkm_status) and catches everything: the status and a
 * message in err (always terminated) for each kind of failure. Nothing here
 * allocates, so a failure to allocate is reported too.
 */
template <typename F>
int
engine_guard(char *err, size_t errlen, F &&f) noexcept
{
	try
	{
		return f();
	}
	catch (const Interrupted &)
	{
		copy_message(err, errlen, "k-means interrupted");
		return PGKM_INTERRUPTED;
	}
	catch (const EngineError &e)
	{
		copy_message(err, errlen, e.what());
		return e.status;
	}
	catch (const std::bad_alloc &)
	{
		copy_message(err, errlen, "out of memory in the k-means engine");
		return PGKM_ERR_NOMEM;
	}
	catch (const std::exception &e)
	{
		if (err && errlen > 0)
			snprintf(err, errlen, "internal error in the k-means engine: %s", e.what());
		return PGKM_ERR_INTERNAL;
	}
	catch (...)
	{
		copy_message(err, errlen, "internal error in the k-means engine");
		return PGKM_ERR_INTERNAL;
	}
}

}							/* namespace pgkm */

#endif							/* PGKM_ERRORS_H */
