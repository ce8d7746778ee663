/*
 * gram_portable.cpp: the Gram tile kernel (gram_kernels.h) for
 * the portable build (4 lanes: SSE on x86-64, NEON on AArch64).
 */
#include "gram_kernels.h"

namespace pgkm
{
namespace
{
#define TILE_W 4
#define TILE_CB 6
#define TILE_RV 2
#include "gram_tile.h"
}							/* namespace */

void
gram_run_portable(const GramArgs &a)
{
	gram_tile_run(a);
}

}							/* namespace pgkm */
