/*
 * tile_vectors.h: what the tile kernels compiled once per instruction set
 * (argmin_tile.h, gram_tile.h) share: the W-lane vectors, their load, store
 * and broadcast, and the block of dot products both accumulate in
 * registers (R rows in lanes against CB broadcast rows). Included inside the per-set file's anonymous
 * namespace after TILE_W, TILE_CB and TILE_RV are defined; nothing here calls the standard
 * library, so nothing is shared (or merged by the linker) between sets.
 */
#ifndef PGKM_TILE_VECTORS_H
#define PGKM_TILE_VECTORS_H

#if !defined(TILE_W) || !defined(TILE_CB) || !defined(TILE_RV)
#error "define TILE_W, TILE_CB and TILE_RV before including tile_vectors.h"
#endif

typedef __SIZE_TYPE__ size_t;
constexpr int W = TILE_W;
constexpr int CB = TILE_CB;	/* broadcast rows (centroids) per panel */
constexpr int RV = TILE_RV;
constexpr int R = W * RV;		/* rows in lanes per block */

typedef float vf __attribute__((vector_size(W * 4)));
typedef int32_t vi __attribute__((vector_size(W * 4)));

inline vf
loadv(const float *p)
{
	vf			v;
	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

inline void
storev(float *p, vf v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

/* all lanes = s as one broadcast (vf {} + s would add 0 first, which is not a no-op for -0) */
inline vf
splatf(float s)
{
	return __builtin_shuffle(vf {s}, vi {});
}

/*
 * acc[i][g] += sum over the kl features of xt(j, rows of g) * panel(j, i),
 * for the panel's first NC broadcast rows. The empty asm makes both pointers opaque to the optimiser, so the loop
 * keeps one register per operand with constant offsets (left to itself,
 * GCC gave each broadcast its own induction variable and reloaded them
 * from the stack on every feature).
 */
template <int NC = CB>
__attribute__((always_inline)) inline void
block_dots(const float *xt, int32_t kl, const float *panel, vf (*acc)[RV])
{
	const float *xj = xt, *pj = panel;
	for (int32_t j = 0; j < kl; j++, xj += R, pj += CB)
	{
		__asm__("" : "+r"(xj), "+r"(pj));
		vf			xv[RV];
		for (int g = 0; g < RV; g++)
			xv[g] = loadv(xj + g * W);
#pragma GCC unroll 16
		for (int i = 0; i < NC; i++)
		{
			const vf	c = splatf(pj[i]);
			for (int g = 0; g < RV; g++)
				acc[i][g] += xv[g] * c;
		}
	}
}

#endif							/* PGKM_TILE_VECTORS_H */
