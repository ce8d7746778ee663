/*
 * gram_dispatch.cpp: which Gram tile kernel runs (gram_kernels.h), by the
 * CPU's best instruction set, and the packing of the rows it reads.
 */
#include "gram_kernels.h"

#include <cstddef>

namespace pgkm
{

static const GramKernel kernels[] = {
	{Isa::Portable, "portable", 6, 8, gram_run_portable},
#if defined(__x86_64__)
	{Isa::Avx2, "avx2", 6, 16, gram_run_avx2},
	{Isa::Avx512, "avx512", 12, 32, gram_run_avx512},
#endif
};

const GramKernel &
gram_kernel()
{
	for (const GramKernel &k : kernels)
		if (k.isa == best_isa())
			return k;
	return kernels[0];
}

void
gram_pack(const float *x, int64_t r0, int64_t nr, int64_t rows, int32_t d, const float *mean,
		  int32_t per, float *out)
{
	const int64_t blocks = (rows + per - 1) / per;
	for (int64_t b = 0; b < blocks; b++)
		for (int32_t i = 0; i < per; i++)
		{
			const int64_t r = b * per + i;
			float	   *dst = out + (size_t) b * d * per + i;
			if (r < nr)
			{
				const float *src = x + (r0 + r) * d;
				for (int32_t j = 0; j < d; j++)
					dst[(size_t) j * per] = src[j] - mean[j];
			}
			else
				for (int32_t j = 0; j < d; j++)
					dst[(size_t) j * per] = 0.0f;
		}
}

}							/* namespace pgkm */
