/*
 * guarded.h: how every entry point of the ABI runs its body: whatever it
 * throws becomes a status and a message in err (no exception leaves the
 * plugin). Host-only.
 */
#ifndef PGKM_CUDA_GUARDED_H
#define PGKM_CUDA_GUARDED_H

#include "failure.h"

#include <cstring>
#include <exception>
#include <new>

namespace pgkm_cuda
{

inline void
set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen > 0)
	{
		strncpy(err, msg, errlen - 1);
		err[errlen - 1] = '\0';
	}
}

/* Runs body; maps every failure to a status and a message. */
template <typename F>
int
guarded(char *err, size_t errlen, F body)
{
	try
	{
		body();
		return 0;
	}
	catch (const Failure &f)
	{
		set_err(err, errlen, f.msg.c_str());
		return f.status;
	}
	catch (const std::bad_alloc &)
	{
		set_err(err, errlen, "out of host memory in the GPU engine");
		return PGKM_ERR_NOMEM;
	}
	catch (const std::exception &e)
	{
		set_err(err, errlen, e.what());
		return PGKM_ERR_INTERNAL;
	}
	catch (...)
	{
		set_err(err, errlen, "unknown error in the GPU engine");
		return PGKM_ERR_INTERNAL;
	}
}

}							/* namespace pgkm_cuda */

#endif
