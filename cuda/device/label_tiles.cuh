/*
 * label_tiles.cuh: the pieces the listed-row labelling kernels share
 * (hamerly_label.cu): (smallest, index, next smallest) folds, the list's
 * rows and each step's operands in shared memory, the centred lower bound,
 * and Yinyang's per-group steps.
 */
#ifndef PGKM_CUDA_LABEL_TILES_CUH
#define PGKM_CUDA_LABEL_TILES_CUH

#include "device/exact_label.cuh"
#include "hamerly_args.h"
#include "plan.h"

#include <cstdint>

namespace pgkm_cuda
{

/* Of two (smallest, its index, next smallest) triples, the union's (lowest index on ties); b infinite where bi < 0. */
template <typename T>
__device__ __forceinline__ void
merge_best(T &b, T &s, int &bi, T ob, T os, int oi)
{
	if (oi >= 0 && (bi < 0 || ob < b || (ob == b && oi < bi)))
	{
		s = os < b ? os : b;	/* b is infinite while bi < 0 */
		b = ob;
		bi = oi;
	}
	else if (oi >= 0)
		s = ob < s ? ob : s;
}

/* The same over the 16 lanes of a half warp (every lane gets it). */
template <typename T>
__device__ __forceinline__ void
reduce_best16(T &b, T &s, int &bi)
{
	for (int off = 8; off > 0; off >>= 1)
	{
		const T		ob = __shfl_xor_sync(FULL, b, off), os = __shfl_xor_sync(FULL, s, off);
		const int	oi = __shfl_xor_sync(FULL, bi, off);
		merge_best(b, s, bi, ob, os, oi);
	}
}

/*
 * A thread's P rows x Q centroids of one step into its rows' (smallest, its
 * index, next smallest), the lowest index on ties; centroid(q) >= k: none.
 */
template <typename T, int P, int Q, typename Centroid>
__device__ __forceinline__ void
fold_best(const T (&acc)[P][Q], T (&b)[P], T (&s)[P], int (&bi)[P], int k, Centroid centroid)
{
#pragma unroll
	for (int q = 0; q < Q; q++)
	{
		const int	c = centroid(q);
		if (c < k)
#pragma unroll
			for (int p = 0; p < P; p++)
			{
				const T		v = acc[p][q];
				if (bi[p] < 0 || v < b[p] || (v == b[p] && c < bi[p]))
				{
					s[p] = b[p];
					b[p] = v;
					bi[p] = c;
				}
				else
					s[p] = v < s[p] ? v : s[p];
			}
	}
}

/* The block's list positions g0 .. + ROWS - 1 into rows_s (-1 past end); every thread of the block calls it. */
template <int ROWS>
__device__ __forceinline__ void
load_listed_rows(int32_t (&rows_s)[ROWS], const HamArgs &a, int64_t g0, int64_t end)
{
	const int	t = threadIdx.x;
	__syncthreads();			/* rows_s is rewritten */
	if (t < ROWS)
		rows_s[t] = g0 + t < end ? a.open[g0 + t] : -1;
	__syncthreads();
}

/* A thread's P rows' (smallest, its index, next smallest) before any centroid. */
template <typename T, int P>
__device__ __forceinline__ void
reset_best(T (&b)[P], T (&s)[P], int (&bi)[P], T inf)
{
#pragma unroll
	for (int p = 0; p < P; p++)
	{
		b[p] = s[p] = inf;
		bi[p] = -1;
	}
}

template <typename T, int P, int Q>
__device__ __forceinline__ void
zero_tile(T (&acc)[P][Q])
{
#pragma unroll
	for (int p = 0; p < P; p++)
#pragma unroll
		for (int q = 0; q < Q; q++)
			acc[p][q] = 0;
}

/*
 * A decided row: its label, the move if it changed, and its bound low (l,
 * or for Yinyang the bound of its label's group).
 */
__device__ __forceinline__ void
write_label(const HamArgs &a, int row, int label, double low, unsigned &moved)
{
	moved += a.labels[row] != label;
	a.labels[row] = label;
	if (a.t)
		a.glower[(size_t) (a.pos[label] / YY_GROUP) * a.n + row] = low;
	else
		a.lower[row] = low;
}

/* A float level's verdict on a row: written where proven, else listed for the fp64 level. */
__device__ __forceinline__ void
settle_row(const HamArgs &a, int row, bool proven, int bi, double low, unsigned &moved)
{
	if (proven)
		write_label(a, row, bi, low, moved);
	else
		a.ties[atomicAdd(a.open_count + 1, 1u)] = row;
}

/*
 * One step's operands into shared memory: features f0 .. + F - 1 of the
 * block's rows (rows_s, -1: none) as stored, and of centroids c0 .. + C - 1
 * from c (k x d, float(c) or c); 0 past d, k or the list, which adds exact
 * zeros to the sums.
 */
template <int THREADS, int ROWS, int CENTS, typename T, int F, int R, int C, typename CT>
__device__ __forceinline__ void
fill_step(T (&xs)[F][R], T (&cs)[F][C], const int32_t *rows_s, const HamArgs &a, const CT *c, int c0, int f0)
{
	static_assert(ROWS <= R && CENTS <= C, "the shared arrays hold a step");
	const int	d = a.d;
	for (int q = threadIdx.x; q < ROWS * F; q += THREADS)
	{
		const int	rr = q / F, ff = q % F, j = f0 + ff;
		const int	row = rows_s[rr];
		T			v = 0;
		if (row >= 0 && j < d)
		{
			const size_t o = (size_t) row * d;
			v = (T) stored_value(a.x + o, a.xlo ? a.xlo + o : nullptr, a.shift, j);
		}
		xs[ff][rr] = v;
	}
	for (int q = threadIdx.x; q < CENTS * F; q += THREADS)
	{
		const int	cc = q / F, ff = q % F, j = f0 + ff, cn = c0 + cc;
		cs[ff][cc] = cn < a.k && j < d ? (T) c[(size_t) centroid_at(a, cn) * d + j] : (T) 0;
	}
}

/*
 * A lower bound on ||x - c|| for every centroid c whose centred value V_c is
 * at least v2 (exact_bounds.h point 6): ||x' - c'||^2 = X^2 + ||c'||^2 -
 * 2 x'.c' >= X2lo + v2 - Eg (|V_c - (||c'||^2 - 2 x'.c')| <= gamma_{d+1}
 * (||c'||^2 + 2 X ||c'||) + a_u <= Eg, label_bound.cpp), X2lo <= X^2 from the
 * float sum x2 (d roundings: gamma_d X^2 + d 2^-149), then the triangle
 * inequality from (x', c') to (x - mu, c - mu): ||x' - (x - mu)|| <= u / (1 - u) X
 * (one float rounding per feature), ||c' - (c - mu)|| < 2^-23 C (fp64 then float
 * rounding; ec). Every operation rounds outwards; NaN gives -inf.
 */
__device__ __forceinline__ double
centred_lower(const CentredBound &cb, float v2, float x2)
{
	const double x2hi = __dmul_ru(__dadd_ru((double) x2, cb.ud), cb.inv_hi);
	const double x2lo = fmax(__dmul_rd(__dsub_rd((double) x2, cb.ud), cb.inv_lo), 0.0);
	const double xn = __dsqrt_ru(x2hi);
	const double eg = __dadd_ru(cb.gf2, __dmul_ru(cb.gfx, xn));
	const double d2 = __dadd_rd(__dsub_rd((double) v2, eg), x2lo);
	const double e = __dadd_ru(__dmul_ru(0x1p-23, xn), cb.ec);
	const double lo = __dsub_rd(__dsqrt_rd(fmax(d2, 0.0)), e);
	return lo == lo ? lo : -dinf();
}

/* A block's label changes and (Yinyang) distances into the pass's counts. */
__device__ __forceinline__ void
count_moves(const HamArgs &a, unsigned moved, unsigned long long work)
{
	if (moved)
		atomicAdd(a.moved, (unsigned long long) moved);
	if (work)
		atomicAdd(a.work, work);
}

/*
 * Yinyang: must the block compute group g (positions YY_GROUP g ..)? Unless
 * every listed row of the block has its label outside g and g's bound
 * above its T (a.lower): then every centroid of g is proven farther than
 * its label (hamerly.cu), and the argmin over the other groups, its label's
 * among them, is the argmin over all. Every thread of the block calls it.
 */
template <int ROWS>
__device__ __forceinline__ bool
group_needed(const HamArgs &a, const int32_t (&rows_s)[ROWS], int g)
{
	int			need = 0;
	if (threadIdx.x < ROWS && rows_s[threadIdx.x] >= 0)
	{
		const int	row = rows_s[threadIdx.x];
		need = a.first || a.pos[a.labels[row]] / YY_GROUP == g || !(a.glower[(size_t) g * a.n + row] > a.lower[row]);
	}
	return __syncthreads_or(need);
}

/*
 * Yinyang: one computed group's (smallest, index, next) per row, reduced
 * over the half warp, merged into the rows' running triple (b, s, bi; the
 * same in all 16 lanes) and sw, the next smallest in bi's group; the
 * group's bound lower(v, p) <= ||x - c|| of its smallest value v written.
 */
template <typename T, int P, int Q, typename Centroid, typename Row, typename Lower>
__device__ __forceinline__ void
group_step(const HamArgs &a, const T (&acc)[P][Q], T (&b)[P], T (&s)[P], int (&bi)[P], T (&sw)[P], int g,
		   Centroid centroid, Row row, Lower lower, T inf)
{
	T			gb[P], gs[P];
	int			gi[P];
	reset_best(gb, gs, gi, inf);
	fold_best(acc, gb, gs, gi, a.k, centroid);
#pragma unroll
	for (int p = 0; p < P; p++)
	{
		reduce_best16(gb[p], gs[p], gi[p]);
		if (gi[p] >= 0 && (bi[p] < 0 || gb[p] < b[p] || (gb[p] == b[p] && gi[p] < bi[p])))
			sw[p] = gs[p];
		merge_best(b[p], s[p], bi[p], gb[p], gs[p], gi[p]);
		const int	r = row(p);
		if ((threadIdx.x & 15) == 0 && r >= 0)
			a.glower[(size_t) g * a.n + r] = lower(gb[p], p);
	}
}

/*
 * Before the step of positions c0 .. + YY_GROUP - 1 (rows: the block's
 * listed rows): whether the block computes it (always for Hamerly), the
 * block's distances counted by thread 0.
 */
template <bool YY, int ROWS>
__device__ __forceinline__ bool
step_open(const HamArgs &a, const int32_t (&rows_s)[ROWS], int c0, int64_t rows, unsigned long long &work)
{
	if (!YY)
		return true;
	if (!group_needed(a, rows_s, c0 / YY_GROUP))
		return false;
	if (threadIdx.x == 0)
		work += (unsigned long long) (rows < ROWS ? rows : ROWS) * (unsigned) min(YY_GROUP, a.k - c0);
	return true;
}

/*
 * A step's tile into the rows' triples: Hamerly per thread (reduced over the
 * half warp at the end: finish_best), Yinyang per group (group_step). pos(q):
 * the position of the tile's column q.
 */
template <bool YY, typename T, int P, int Q, typename Pos, typename Row, typename Lower>
__device__ __forceinline__ void
fold_step(const HamArgs &a, const T (&acc)[P][Q], T (&b)[P], T (&s)[P], int (&bi)[P], T (&sw)[P], int c0, Pos pos,
		  Row row, Lower lower, T inf)
{
	auto		centroid = [&](int q) {
		const int	p = pos(q);
		return YY && p < a.k ? a.perm[p] : p;
	};
	if constexpr (YY)
		group_step(a, acc, b, s, bi, sw, c0 / YY_GROUP, centroid, row, lower, inf);
	else
		fold_best(acc, b, s, bi, a.k, centroid);
}

/* The row's (smallest, index, next smallest) over the half warp; Yinyang's already are. */
template <bool YY, typename T>
__device__ __forceinline__ void
finish_best(T &b, T &s, int &bi)
{
	if (!YY)
		reduce_best16(b, s, bi);
}

}							/* namespace pgkm_cuda */

#endif
