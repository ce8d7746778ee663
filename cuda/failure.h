/*
 * failure.h: how the plugin reports an error internally. A Failure carries
 * the pgkm_status the ABI returns (pgkm_engine.h) and its message; the entry
 * points (api.cu) catch it. Host-only, so the memory plan (plan.cpp) and its
 * host tests use it too.
 */
#ifndef PGKM_CUDA_FAILURE_H
#define PGKM_CUDA_FAILURE_H

#include "pgkm_engine.h"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace pgkm_cuda
{

struct Failure
{
	int			status;
	std::string msg;
};

/* Throws Failure {status, printf-formatted message}. */
[[noreturn]] inline void
fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

[[noreturn]] inline void
fail(int status, const char *fmt, ...)
{
	char		buf[512];
	va_list		ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	throw Failure {status, buf};
}

}							/* namespace pgkm_cuda */

#endif
