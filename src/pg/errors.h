/*
 * errors.h: the C++ / PostgreSQL boundary of the glue.
 *
 * PostgreSQL reports errors with longjmp, C++ with exceptions; neither may
 * cross the other. The glue therefore (1) never lets a C++ exception leave a
 * glue function: any C++ work runs inside pgkm_cxx_guard(), which is
 * noexcept and turns an exception into a message in a caller-owned char
 * buffer, and (2) calls ereport() only after that helper returned, with
 * nothing but plain data on the stack, so that a longjmp skips no destructor.
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
pgkm_cxx_guard(F &&f, char *errbuf, size_t errlen) noexcept
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

#endif							/* PGKM_ERRORS_H */
