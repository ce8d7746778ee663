/*
 * argmin_portable.cpp: the nearest-centroid kernel (argmin_kernels.h) for
 * the target's baseline: SSE2 on x86-64, NEON on AArch64 (4 lanes).
 * CMakeLists.txt compiles this file alone for that set.
 */
#include "argmin_kernels.h"

namespace pgkm
{
namespace
{
#define TILE_W 4
#define TILE_CB 6
#define TILE_RV 2
#include "argmin_tile.h"
}							/* namespace */

void
argmin_run_portable(const ArgminArgs &a)
{
	tile_run(a);
}

}							/* namespace pgkm */

