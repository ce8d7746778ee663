/*
 * argmin_avx512.cpp: the nearest-centroid kernel (argmin_kernels.h) for
 * AVX-512 (16 lanes; 24 accumulators of 32 registers), with a transposing
 * load of its own. CMakeLists.txt compiles this file alone for that set.
 */
#include "argmin_kernels.h"

#if defined(__x86_64__)
/* GCC 12's AVX-512 intrinsics start from a self-initialised "undefined" vector (GCC bug 105593). */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace pgkm
{
namespace
{
#define TILE_W 16
#define TILE_CB 12
#define TILE_RV 2
#include "tile_vectors.h"

/*
 * v[t] = feature j + t of rows p[0..16), minus mean[j + t]: the 16 x 16
 * transpose of argmin_tile.h's transpose(), whose first stage (the 8 x 8
 * halves) is done by the loads (256-bit halves of rows r and r + 8) and the
 * others by one two-source permute per vector (GCC's lowering of the generic
 * shuffles took about 2.5 times as many shuffle-port instructions).
 */
__attribute__((always_inline)) inline void
load_transposed(const float *const *p, int32_t j, const float *mean, vf *v)
{
	__m512		t[16];
	const __m512 m0 = _mm512_broadcast_f32x8(_mm256_loadu_ps(mean + j));
	const __m512 m1 = _mm512_broadcast_f32x8(_mm256_loadu_ps(mean + j + 8));
	for (int i = 0; i < 8; i++)
	{
		t[i] = _mm512_sub_ps(_mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p[i] + j)),
												_mm256_loadu_ps(p[i + 8] + j), 1), m0);
		t[i + 8] = _mm512_sub_ps(_mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p[i] + j + 8)),
													_mm256_loadu_ps(p[i + 8] + j + 8), 1), m1);
	}
#pragma GCC unroll 4
	for (int h = 4; h >= 1; h /= 2)
	{
		alignas(64) int32_t lo[16], hi[16];
		for (int l = 0; l < 16; l++)
		{
			lo[l] = (l & h) == 0 ? l : 16 + l - h;
			hi[l] = (l & h) == 0 ? l + h : 16 + l;
		}
		const __m512i il = _mm512_load_si512(lo), ih = _mm512_load_si512(hi);
#pragma GCC unroll 16
		for (int i = 0; i < 16; i++)
		{
			if (i & h)
				continue;
			const __m512 a = t[i], b = t[i + h];
			t[i] = _mm512_permutex2var_ps(a, il, b);
			t[i + h] = _mm512_permutex2var_ps(a, ih, b);
		}
	}
	for (int i = 0; i < 16; i++)
		__builtin_memcpy(&v[i], &t[i], sizeof(vf));
}

#define TILE_LOAD_TRANSPOSED
#include "argmin_tile.h"
}							/* namespace */

void
argmin_run_avx512(const ArgminArgs &a)
{
	tile_run(a);
}

}							/* namespace pgkm */
#endif
