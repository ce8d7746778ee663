/*
 * errors.h: the C++ / PostgreSQL boundary of the glue, and the errors it
 * reports for the engine (errors.cpp).
 *
 * PostgreSQL reports errors with longjmp, C++ with exceptions; neither may
 * cross the other. The glue therefore (1) never lets a C++ exception leave a
 * glue function: any C++ work runs inside glue_guard(), which is noexcept
 * and turns an exception into a message in a caller-owned char buffer, and
 * (2) calls ereport() only after that helper returned, with nothing but
 * plain data on the stack, so that a longjmp skips no destructor.
 *
 * The same pattern, one guard per layer: glue_guard here, engine_guard in
 * the engine (src/engine/errors.h), the CUDA plugin's own in cuda/api.cu.
 */
#ifndef PGKM_ERRORS_H
#define PGKM_ERRORS_H

#include "pg_headers.h"

#define PGKM_ERRBUF 512

/*
 * Run f() and report success. Why a template instead of a macro: the lambda
 * keeps every C++ object it creates inside its own frame, which has ended
 * (destructors run) by the time the caller may ereport.
 */
template <typename F>
static inline bool
glue_guard(char *errbuf, size_t errlen, F &&f) noexcept
{
	try
	{
		f();
		return true;
	}
	catch (const std::bad_alloc &)
	{
		snprintf(errbuf, errlen, "out of memory in C++ code");
	}
	catch (const std::exception &e)
	{
		snprintf(errbuf, errlen, "%s", e.what());
	}
	catch (...)
	{
		snprintf(errbuf, errlen, "unknown C++ exception");
	}
	return false;
}

/*
 * An engine status other than PGKM_OK or PGKM_DONE as an ERROR with its
 * SQLSTATE (an interrupt as the cancel or timeout that caused it); err is
 * the engine's message.
 */
extern void pgkm_report_engine_error(int rc, const char *err) pg_attribute_noreturn();

/*
 * A name the caller gave, as an error message echoes it: its first 64 bytes
 * (whole characters) and "..." when longer, so that a 100 KB name makes no
 * 100 KB message. palloc'd.
 */
extern char *pgkm_echo_name(const char *given);

#endif							/* PGKM_ERRORS_H */
