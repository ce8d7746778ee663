/*
 * simd.h: the 8-lane float vectors of the CPU distance kernels (GCC vector
 * extensions: the compiler emits AVX2 or SSE from the same source; on x86-64
 * PGKM_TARGET_CLONES builds a kernel for both and picks one at load time,
 * elsewhere the kernel is built once for the default target).
 */
#ifndef PGKM_SIMD_H
#define PGKM_SIMD_H

#include <cstdint>

namespace pgkm
{

typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));

}							/* namespace pgkm */

#if defined(__x86_64__)
#define PGKM_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
/* AVX-512, AVX2 + FMA and the baseline (x86-64 psABI levels) */
#define PGKM_TARGET_CLONES_V4 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PGKM_TARGET_CLONES
#define PGKM_TARGET_CLONES_V4
#endif

/* All lanes = s, as one broadcast (a lane-by-lane initialiser compiles to inserts). */
#define splat(s) __builtin_shuffle(pgkm::vf8 {(s)}, pgkm::vi8 {})

#endif							/* PGKM_SIMD_H */
