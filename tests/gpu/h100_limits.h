/*
 * h100_limits.h: an H100's device limits (cudaDeviceGetAttribute on the H100
 * 80GB HBM3), for the plan tests that run on a host without a GPU.
 */
#ifndef PGKM_TESTS_GPU_H100_LIMITS_H
#define PGKM_TESTS_GPU_H100_LIMITS_H

#include "plan.h"

inline pgkm_cuda::DeviceLimits
h100()
{
	pgkm_cuda::DeviceLimits l;
	l.sms = 132;
	l.smem_per_sm = 233472;
	l.smem_optin = 232448;
	return l;
}

#endif
