/*
 * util.cpp: the engine's small helpers (util.h).
 */
#include "util.h"
#include "pgkm_engine.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace pgkm
{

std::string
fmt(const char *f, ...)
{
	char		buf[512];
	va_list		ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return buf;
}

void
copy_message(char *dst, size_t len, const char *msg) noexcept
{
	if (!dst || len == 0)
		return;
	size_t		m = strnlen(msg, len - 1);
	memcpy(dst, msg, m);
	dst[m] = '\0';
}

}							/* namespace pgkm */

extern "C" const char *
pgkm_nonfinite_name(double v)
{
	return std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
}
