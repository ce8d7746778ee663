/*
 * gram_avx512.cpp: the Gram tile kernel (gram_kernels.h) for
 * AVX-512 (16 lanes; 24 accumulators of 32 registers).
 * CMakeLists.txt compiles this file alone for that set.
 */
#include "gram_kernels.h"

#if defined(__x86_64__)
namespace pgkm
{
namespace
{
#define TILE_W 16
#define TILE_CB 12
#define TILE_RV 2
#include "gram_tile.h"
}							/* namespace */

void
gram_run_avx512(const GramArgs &a)
{
	gram_tile_run(a);
}

}							/* namespace pgkm */
#endif
