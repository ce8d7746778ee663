/*
 * argmin_dispatch.cpp: which nearest-centroid kernel runs (argmin_kernels.h),
 * decided once from the CPU, and the centroid panels they read.
 */
#include "argmin_kernels.h"
#include "internal_hooks.h"

#include <algorithm>
#include <atomic>

namespace pgkm
{

static const ArgminKernel kernels[] = {
	{Isa::Portable, "portable", 6, 8, argmin_run_portable},
#if defined(__x86_64__)
	{Isa::Avx2, "avx2", 6, 16, argmin_run_avx2},
	{Isa::Avx512, "avx512", 12, 32, argmin_run_avx512},
#endif
};

Isa
best_isa()
{
	static const Isa isa = [] {
#if defined(__x86_64__)
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f"))
			return Isa::Avx512;
		if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			return Isa::Avx2;
#endif
		return Isa::Portable;
	}();
	return isa;
}

const ArgminKernel &
argmin_kernel(Isa isa)
{
	if ((int32_t) isa > (int32_t) best_isa())
		isa = best_isa();
	for (const ArgminKernel &k : kernels)
		if (k.isa == isa)
			return k;
	return kernels[0];
}

/* -1: the best set; otherwise an Isa value (a set the CPU lacks gives the best it has). */
static std::atomic<int32_t> forced_isa {-1};

extern "C" int32_t
pgkm_internal_set_isa(int32_t isa)
{
	return forced_isa.exchange(isa);
}

const ArgminKernel &
current_argmin_kernel()
{
	const int32_t f = forced_isa.load(std::memory_order_relaxed);
	return argmin_kernel(f < 0 ? best_isa() : (Isa) f);
}

void
pack_panels(const float *centc, const float *cnorm, int32_t k, int32_t d, int32_t cb,
			float *panels, float *cnorm_padded)
{
	const int32_t nb = (k + cb - 1) / cb;
	for (int32_t b = 0; b < nb; b++)
		for (int32_t i = 0; i < cb; i++)
		{
			const int32_t c = b * cb + i;
			float	   *dst = panels + (size_t) b * d * cb + i;
			if (c < k)
				for (int32_t j = 0; j < d; j++)
					dst[(size_t) j * cb] = centc[(size_t) c * d + j];
			else
				for (int32_t j = 0; j < d; j++)
					dst[(size_t) j * cb] = 0.0f;
			cnorm_padded[c] = c < k ? cnorm[c] : __builtin_inff();
		}
}

}							/* namespace pgkm */
