/*
 * argmin_tile.h: the body of the nearest-centroid kernel (argmin_kernels.h),
 * written once for any vector width. Each of argmin_avx512.cpp,
 * argmin_avx2.cpp and argmin_portable.cpp defines TILE_W (lanes), TILE_CB
 * (centroids per panel) and TILE_RV (row vectors per block), may define
 * TILE_LOAD_TRANSPOSED with a load_transposed of its own (W rows' W
 * features, centred and transposed as transpose() leaves them), is compiled
 * for its instruction set, and includes this inside an anonymous namespace, so
 * no function here is shared (or merged by the linker) between sets. Nothing
 * here calls the standard library for the same reason.
 */
#ifndef TILE_W
#error "define TILE_W, TILE_CB and TILE_RV before including argmin_tile.h"
#endif

#include "tile_vectors.h"

inline int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Lane masks of one butterfly stage of the W x W transpose (block size h). */
inline vi
mask_lo(int h)
{
	vi			m;
	for (int l = 0; l < W; l++)
		m[l] = (l & h) == 0 ? l : W + l - h;
	return m;
}

inline vi
mask_hi(int h)
{
	vi			m;
	for (int l = 0; l < W; l++)
		m[l] = (l & h) == 0 ? l + h : W + l;
	return m;
}

/* v[r] = row r's W features -> v[j] = feature j of the W rows (swap off-diagonal blocks, halving). */
__attribute__((always_inline)) inline void
transpose(vf *v)
{
#pragma GCC unroll 8
	for (int h = W / 2; h >= 1; h /= 2)
	{
		const vi	lo = mask_lo(h), hi = mask_hi(h);
#pragma GCC unroll 16
		for (int i = 0; i < W; i++)
		{
			if (i & h)
				continue;
			const vf	a = v[i], b = v[i + h];
			v[i] = __builtin_shuffle(a, b, lo);
			v[i + h] = __builtin_shuffle(a, b, hi);
		}
	}
}

/*
 * Transposes and centres features j0..j1 of the block's rows into xt
 * ((j1 - j0) x R); rows past nr repeat the last row. Adds the squares of
 * the centred values to x2 (R floats) when asked.
 */
inline void
pack_rows(const float *x, int64_t nr, int32_t d, const float *mean, int32_t j0, int32_t j1,
		  float *xt, float *x2, bool add_x2)
{
	for (int g = 0; g < RV; g++)
	{
		const float *p[W];
		for (int r = 0; r < W; r++)
			p[r] = x + min64(g * W + r, nr - 1) * d;
		vf			sq = vf {};
		int32_t		j = j0;
		for (; j + W <= j1; j += W)
		{
			vf			v[W];
#ifdef TILE_LOAD_TRANSPOSED
			load_transposed(p, j, mean, v);
#else
			const vf	m = loadv(mean + j);
			for (int r = 0; r < W; r++)
				v[r] = loadv(p[r] + j) - m;
			transpose(v);
#endif
			for (int t = 0; t < W; t++)
			{
				storev(xt + (size_t) (j - j0 + t) * R + g * W, v[t]);
				sq += v[t] * v[t];
			}
		}
		for (; j < j1; j++)
		{
			vf			v;
			for (int r = 0; r < W; r++)
				v[r] = p[r][j] - mean[j];
			storev(xt + (size_t) (j - j0) * R + g * W, v);
			sq += v * v;
		}
		if (add_x2)
			storev(x2 + g * W, loadv(x2 + g * W) + sq);
	}
}

/*
 * v = fl(n_c - 2 dot) for the panel's first NC centroids c0.., then the
 * running argmin (strictly smaller wins: the lowest index on equal floats)
 * and the runner-up value.
 */
template <int NC>
__attribute__((always_inline)) inline void
epilogue(vf (*acc)[RV], const float *cn, int32_t c0, vf *best, vf *second, vi *idx)
{
#pragma GCC unroll 16
	for (int i = 0; i < NC; i++)
	{
		const vf	n = splatf(cn[i]);
		const vi	cv = vi {} + (c0 + i);
		for (int g = 0; g < RV; g++)
		{
			const vf	v = n - (acc[i][g] + acc[i][g]);
			const vi	lt = v < best[g];
			const vf	other = lt ? best[g] : v;
			second[g] = other < second[g] ? other : second[g];
			best[g] = lt ? v : best[g];
			idx[g] = lt ? cv : idx[g];
		}
	}
}

/*
 * The next block's rows (lines of them from next), fetched into L2 while
 * this block is computed, a share at each of its steps: each row is read
 * once, from DRAM, and at large d a block's rows are more lines than the
 * fill buffers hold, so a burst of prefetches would stall the loop.
 */
struct Prefetch
{
	const float *next;
	int64_t		lines, steps, step;

	__attribute__((always_inline)) void run()
	{
		const int64_t l1 = lines * (step + 1) / steps;
		for (int64_t l = lines * step / steps; l < l1; l++)
			__builtin_prefetch(next + l * 16, 0, 1);
		step++;
	}
};

/*
 * acc[i][g] += the kl features' products, summed in blocks of ARGMIN_KB
 * features from 0 each, then added (argmin_dot_depth); zero: acc is 0, so
 * the first block is stored into it as is (kl <= ARGMIN_KB: a plain sum).
 * Each block sums into a tile of its own: acc is not live in the FMA loop,
 * so the loop's NC x RV accumulators, the row vectors and the broadcast fit
 * the registers beside the caller's running argmin (summing the first block
 * into acc itself spilled half the accumulators to the stack).
 */
template <int NC>
__attribute__((always_inline)) inline void
blocked_dots(const float *xt, int32_t kl, const float *panel, vf (*acc)[RV], bool zero, Prefetch &pf)
{
	for (int32_t j0 = 0; j0 < kl; j0 += ARGMIN_KB)
	{
		pf.run();
		vf			blk[NC][RV] = {};
		block_dots<NC>(xt + (size_t) j0 * R, (int32_t) min64(ARGMIN_KB, kl - j0), panel + (size_t) j0 * CB, blk);
		const bool	first = zero && j0 == 0;
		for (int i = 0; i < NC; i++)
			for (int g = 0; g < RV; g++)
				acc[i][g] = first ? blk[i][g] : acc[i][g] + blk[i][g];
	}
}

/*
 * Panel b's first NC centroids against the packed features j0..j1 of the
 * block's rows: from the partial tile when j0 > 0, into the running argmin
 * when j1 is d, else back to the partial tile.
 */
template <int NC>
__attribute__((always_inline)) inline void
panel_step(const ArgminArgs &a, int32_t b, int32_t j0, int32_t j1, float *part, vf *best,
		   vf *second, vi *idx, Prefetch &pf)
{
	vf			acc[NC][RV];
	for (int i = 0; i < NC; i++)
		for (int g = 0; g < RV; g++)
			acc[i][g] = j0 == 0 ? vf {} : loadv(part + (i * RV + g) * W);
	blocked_dots<NC>(a.xt, j1 - j0, a.panels + ((size_t) b * a.d + j0) * CB, acc, j0 == 0, pf);
	if (j1 == a.d)
		epilogue<NC>(acc, a.cnorm + (size_t) b * CB, b * CB, best, second, idx);
	else
		for (int i = 0; i < NC; i++)
			for (int g = 0; g < RV; g++)
				storev(part + (i * RV + g) * W, acc[i][g]);
}

/*
 * The same with as few of the panel's centroids as hold its real ones
 * (last: how many): a third, two thirds or all of CB, so the padding of k
 * to a multiple of CB is mostly not computed (k = 100, 256 or 1024: none).
 */
static_assert(CB % 3 == 0, "panels are cut in thirds");

__attribute__((always_inline)) inline void
panel_part(const ArgminArgs &a, int32_t b, int32_t last, int32_t j0, int32_t j1, float *part,
		   vf *best, vf *second, vi *idx, Prefetch &pf)
{
	if (last <= CB / 3)
		panel_step<CB / 3>(a, b, j0, j1, part, best, second, idx, pf);
	else if (last <= 2 * CB / 3)
		panel_step<2 * CB / 3>(a, b, j0, j1, part, best, second, idx, pf);
	else
		panel_step<CB>(a, b, j0, j1, part, best, second, idx, pf);
}

void
tile_run(const ArgminArgs &a)
{
	const int32_t d = a.d;
	const int32_t nb = (a.k + CB - 1) / CB;
	const int32_t last = a.k - (nb - 1) * CB;	/* real centroids in the last panel */
	const int32_t group = ARGMIN_GROUP / CB;
	const float inf = __builtin_inff();
	float		x2[R];
	for (int64_t r0 = 0; r0 < a.rows; r0 += R)
	{
		const int64_t nr = min64(R, a.rows - r0);
		const float *xb = a.x + r0 * d;
		vf			best[RV], second[RV];
		vi			idx[RV];
		for (int g = 0; g < RV; g++)
		{
			best[g] = second[g] = splatf(inf);
			idx[g] = vi {};
			storev(x2 + g * W, vf {});
		}
		Prefetch	pf {xb + (size_t) R * d, (min64(R, a.rows - r0 - nr) * d + 15) / 16,
						(int64_t) nb * ((d + ARGMIN_KB - 1) / ARGMIN_KB), 0};
		if (d <= ARGMIN_KC)
		{
			pack_rows(xb, nr, d, a.mean, 0, d, a.xt, x2, true);
			for (int32_t b = 0; b < nb; b++)
				panel_part(a, b, b + 1 < nb ? CB : last, 0, d, a.partial, best, second, idx, pf);
		}
		else
		{
			for (int32_t g0 = 0; g0 < nb; g0 += group)
			{
				const int32_t g1 = (int32_t) min64(nb, g0 + group);
				for (int32_t j0 = 0; j0 < d; j0 += ARGMIN_KC)
				{
					const int32_t j1 = (int32_t) min64(d, j0 + ARGMIN_KC);
					pack_rows(xb, nr, d, a.mean, j0, j1, a.xt, x2, g0 == 0);
					for (int32_t b = g0; b < g1; b++)
						panel_part(a, b, b + 1 < nb ? CB : last, j0, j1,
								   a.partial + (size_t) (b - g0) * CB * R, best, second, idx, pf);
				}
			}
		}
		float		bv[R], sv[R];
		int32_t		iv[R];
		for (int g = 0; g < RV; g++)
		{
			storev(bv + g * W, best[g]);
			storev(sv + g * W, second[g]);
			__builtin_memcpy(iv + g * W, &idx[g], sizeof(vi));
		}
		for (int64_t r = 0; r < nr; r++)
		{
			a.idx[r0 + r] = iv[r];
			a.best[r0 + r] = bv[r];
			a.second[r0 + r] = sv[r];
			a.x2[r0 + r] = x2[r];
		}
	}
}
