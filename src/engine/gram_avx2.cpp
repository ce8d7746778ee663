/*
 * gram_avx2.cpp: the Gram tile kernel (gram_kernels.h) for
 * AVX2 + FMA (8 lanes; 12 accumulators of 16 registers).
 * CMakeLists.txt compiles this file alone for that set.
 */
#include "gram_kernels.h"

#if defined(__x86_64__)
namespace pgkm
{
namespace
{
#define TILE_W 8
#define TILE_CB 6
#define TILE_RV 2
#include "gram_tile.h"
}							/* namespace */

void
gram_run_avx2(const GramArgs &a)
{
	gram_tile_run(a);
}

}							/* namespace pgkm */
#endif
