/*
 * simd.h: the 8-lane float vectors of the CPU distance kernels (GCC vector
 * extensions: the compiler emits AVX2 or SSE from the same source, chosen per
 * function with target_clones).
 */
#ifndef PGKM_SIMD_H
#define PGKM_SIMD_H

#include <cstdint>

namespace pgkm
{

typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));

}							/* namespace pgkm */

/* All lanes = s, as one broadcast (a lane-by-lane initialiser compiles to inserts). */
#define splat(s) __builtin_shuffle(pgkm::vf8 {(s)}, pgkm::vi8 {})

#endif							/* PGKM_SIMD_H */
