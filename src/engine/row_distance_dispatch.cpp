/*
 * row_distance_dispatch.cpp: which row distance kernel (row_distance.h)
 * runs: the instruction set of the argmin kernels, so the test hook that
 * forces a set reaches both.
 */
#include "row_distance.h"

namespace pgkm
{

RowDistanceRun
row_distance_kernel(Isa isa)
{
	if ((int32_t) isa > (int32_t) best_isa())
		isa = best_isa();
#if defined(__x86_64__)
	if (isa == Isa::Avx512)
		return row_distance_avx512;
	if (isa == Isa::Avx2)
		return row_distance_avx2;
#endif
	return row_distance_portable;
}

RowDistanceRun
current_row_distance_kernel()
{
	return row_distance_kernel(current_argmin_kernel().isa);
}

}							/* namespace pgkm */
