/*
 * gram_tile.h: the body of the Gram tile kernel (gram_kernels.h), written
 * once for any vector width. Each of gram_avx512.cpp, gram_avx2.cpp and
 * gram_portable.cpp defines TILE_W (lanes), TILE_CB (A rows per panel) and
 * TILE_RV (vectors of B rows per block), is compiled for its instruction
 * set, and includes this inside an anonymous namespace, so that nothing
 * here is shared (or merged by the linker) between sets.
 */
#ifndef TILE_W
#error "define TILE_W, TILE_CB and TILE_RV before including gram_tile.h"
#endif

#include "tile_vectors.h"

void
gram_tile_run(const GramArgs &g)
{
	const int32_t d = g.d;
	for (int32_t j0 = 0; j0 < d; j0 += ARGMIN_KC)
	{
		const int32_t kl = d - j0 < ARGMIN_KC ? d - j0 : ARGMIN_KC;
		for (int32_t ib = 0; ib < g.blocks_a; ib++)
		{
			const float *at = g.a + ((size_t) ib * d + j0) * CB;
			for (int32_t jb = 0; jb < g.blocks_b; jb++)
			{
				const float *bt = g.b + ((size_t) jb * d + j0) * R;
				float	   *o = g.out + (size_t) ib * CB * g.ld + (size_t) jb * R;
				vf			acc[CB][RV];
				for (int i = 0; i < CB; i++)
					for (int v = 0; v < RV; v++)
						acc[i][v] = j0 == 0 ? vf {} : loadv(o + i * g.ld + v * W);
				block_dots(bt, kl, at, acc);
				for (int i = 0; i < CB; i++)
					for (int v = 0; v < RV; v++)
						storev(o + i * g.ld + v * W, acc[i][v]);
			}
		}
	}
}
