/*
 * float_kernels.cpp: the float32 distance kernels of the pruned methods,
 * compiled for AVX-512, AVX2+FMA and the baseline, picked at load time. A
 * 16-lane vector is one zmm register, two ymm or four xmm. No errno for
 * sqrtf (its inputs are never negative), so its loops vectorise.
 */
#pragma GCC optimize("no-math-errno")
/* The 16-lane helpers below are static and inlined: no vector crosses a call ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"

#include "float_kernels.h"
#include "simd.h"

#include <cstring>

namespace pgkm
{

typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));

static inline vf16
load16(const float *p)
{
	vf16		v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline float
hsum(vf16 v)
{
	float		s = 0;
	for (int i = 0; i < 16; i++)
		s += v[i];
	return s;
}

PGKM_TARGET_CLONES_V4 float
fsqdist(const float *a, const float *b, int32_t d)
{
	vf16		acc0 = {}, acc1 = {};
	int32_t		j = 0;
	for (; j + 32 <= d; j += 32)
	{
		vf16		t0 = load16(a + j) - load16(b + j);
		vf16		t1 = load16(a + j + 16) - load16(b + j + 16);
		acc0 += t0 * t0;
		acc1 += t1 * t1;
	}
	for (; j + 16 <= d; j += 16)
	{
		vf16		t0 = load16(a + j) - load16(b + j);
		acc0 += t0 * t0;
	}
	float		s = hsum(acc0 + acc1);
	for (; j < d; j++)
	{
		float		t = a[j] - b[j];
		s += t * t;
	}
	return s;
}

typedef double vd8 __attribute__((vector_size(64)));

PGKM_TARGET_CLONES_V4 float
centre_dist(const float *x, const float *m, const float *c, int32_t d, float *xc, double *n2)
{
	vf16		acc = {};
	vd8			sq0 = {}, sq1 = {};
	int32_t		j = 0;
	for (; j + 16 <= d; j += 16)
	{
		const vf16	v = load16(x + j) - load16(m + j);
		memcpy(xc + j, &v, sizeof(v));
		const vf16	t = v - load16(c + j);
		acc += t * t;
		const vd8	lo = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7), vd8);
		const vd8	hi = __builtin_convertvector(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15), vd8);
		sq0 += lo * lo;
		sq1 += hi * hi;
	}
	float		s = hsum(acc);
	const vd8	sq = sq0 + sq1;
	double		q = 0;
	for (int i = 0; i < 8; i++)
		q += sq[i];
	for (; j < d; j++)
	{
		const float v = x[j] - m[j];
		xc[j] = v;
		const float t = v - c[j];
		s += t * t;
		q += (double) v * v;
	}
	*n2 = q;
	return s;
}

/* Four partial sums over j mod 4 per block keep the FMA pipes busy. */
PGKM_TARGET_CLONES_V4 void
fsqdist_blocks(const float *x, const float *blocks, int32_t d, int32_t nb, float *out)
{
	const size_t bs = (size_t) d * BLOCK;
	for (int32_t b = 0; b < nb; b++)
	{
		const float *blk = blocks + b * bs;
		vf16		a0 = {}, a1 = {}, a2 = {}, a3 = {};
		int32_t		j = 0;
		for (; j + 4 <= d; j += 4)
		{
			vf16		t0 = load16(blk + (size_t) j * BLOCK) - x[j];
			vf16		t1 = load16(blk + (size_t) (j + 1) * BLOCK) - x[j + 1];
			vf16		t2 = load16(blk + (size_t) (j + 2) * BLOCK) - x[j + 2];
			vf16		t3 = load16(blk + (size_t) (j + 3) * BLOCK) - x[j + 3];
			a0 += t0 * t0;
			a1 += t1 * t1;
			a2 += t2 * t2;
			a3 += t3 * t3;
		}
		for (; j < d; j++)
		{
			vf16		t0 = load16(blk + (size_t) j * BLOCK) - x[j];
			a0 += t0 * t0;
		}
		vf16		s = (a0 + a1) + (a2 + a3);
		memcpy(out + (size_t) b * BLOCK, &s, sizeof(s));
	}
}

/* Lane-wise minimum (GCC will not reorder a scalar min reduction into vectors). */
static inline vf16
vmin(vf16 a, vf16 b)
{
	return a < b ? a : b;
}

/* The smallest lane, by halving (four shuffles, not sixteen extracts). */
static inline float
hmin(vf16 v)
{
	v = vmin(v, __builtin_shuffle(v, vi16 {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}));
	v = vmin(v, __builtin_shuffle(v, vi16 {4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11}));
	v = vmin(v, __builtin_shuffle(v, vi16 {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13}));
	v = vmin(v, __builtin_shuffle(v, vi16 {1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14}));
	return v[0];
}

/*
 * NR rows at once: per feature one load of the block's 16 centroids and NR
 * FMAs with the rows' broadcast values (below 4 rows, two partial sums per
 * row over even and odd features hide the FMA latency).
 */
template <int NR>
__attribute__((always_inline)) static inline void
gemm_rows(const float *const *x, const float *block, const float *cn, int32_t d,
		  float *const *out, float *const *mins)
{
	constexpr int P = NR < 4 ? 2 : 1;	/* partial sums per row */
	vf16		acc[P][NR];
	for (int p = 0; p < P; p++)
		for (int r = 0; r < NR; r++)
			acc[p][r] = vf16 {};
	int32_t		j = 0;
	for (; j + 2 <= d; j += 2)
	{
		const vf16	c0 = load16(block + (size_t) j * BLOCK);
		const vf16	c1 = load16(block + (size_t) (j + 1) * BLOCK);
		for (int r = 0; r < NR; r++)
		{
			acc[0][r] += c0 * x[r][j];
			acc[P - 1][r] += c1 * x[r][j + 1];
		}
	}
	if (j < d)
	{
		const vf16	c0 = load16(block + (size_t) j * BLOCK);
		for (int r = 0; r < NR; r++)
			acc[0][r] += c0 * x[r][j];
	}
	const vf16	n = load16(cn);
	for (int r = 0; r < NR; r++)
	{
		const vf16	s = P == 2 ? acc[0][r] + acc[P - 1][r] : acc[0][r];
		const vf16	v = n - (s + s);
		memcpy(out[r], &v, sizeof(v));
		*mins[r] = hmin(v);
	}
}

PGKM_TARGET_CLONES_V4 void
gemm_rows_block(const float *const *x, int32_t nr, const float *block, const float *cn, int32_t d,
				float *const *out, float *const *mins)
{
	switch (nr)
	{
		case 1: gemm_rows<1>(x, block, cn, d, out, mins); break;
		case 2: gemm_rows<2>(x, block, cn, d, out, mins); break;
		case 3: gemm_rows<3>(x, block, cn, d, out, mins); break;
		case 4: gemm_rows<4>(x, block, cn, d, out, mins); break;
		case 5: gemm_rows<5>(x, block, cn, d, out, mins); break;
		case 6: gemm_rows<6>(x, block, cn, d, out, mins); break;
		case 7: gemm_rows<7>(x, block, cn, d, out, mins); break;
		default: gemm_rows<8>(x, block, cn, d, out, mins); break;
	}
}

PGKM_TARGET_CLONES_V4 int32_t
select_le(const float *l, int32_t n, float lim, int32_t *idx)
{
	int32_t		m = 0;
	for (int32_t i = 0; i < n; i++)
	{
		idx[m] = i;
		m += l[i] <= lim;
	}
	return m;
}

PGKM_TARGET_CLONES_V4 void
gemm_row_bounds(const float *best, const float *second, const float *x2, int64_t m,
				const GemmMargins &gm, double ec_max, double *hi, double *lo)
{
	const double xa = gm.x2_abs(), il = gm.inv_lo(), ih = gm.inv_hi(), gg = gm.g(), c = gm.c_up();
	for (int64_t r = 0; r < m; r++)
	{
		GemmRow		g;
		GemmMargins::row_float_v(x2[r], xa, il, ih, gg, c, &g);
		const double e = up(g.ex + ec_max);
		hi[r] = GemmMargins::hi_v(best[r], g.x2hi, g.eg, e);
		lo[r] = GemmMargins::lo_v(second[r], g.x2lo, g.eg, e);
	}
}

PGKM_TARGET_CLONES_V4 void
gemm_lo_array(const float *V, int32_t n, const GemmRow &r, double e, float *out)
{
	const double x2lo = r.x2lo, eg = r.eg;
	for (int32_t i = 0; i < n; i++)
		out[i] = to_float_down(GemmMargins::lo_v(V[i], x2lo, eg, e));
}

PGKM_TARGET_CLONES_V4 float
min_f(const float *l, int32_t n)
{
	vf16		vm = vf16 {} + __builtin_inff();
	int32_t		i = 0;
	for (; i + 16 <= n; i += 16)
		vm = vm < load16(l + i) ? vm : load16(l + i);
	float		m = vm[0];
	for (int j = 1; j < 16; j++)
		m = vm[j] < m ? vm[j] : m;
	for (; i < n; i++)
		m = l[i] < m ? l[i] : m;
	return m;
}

PGKM_TARGET_CLONES_V4 void
lo_f_array(const float *F, int32_t n, FloatLo p, float *out)
{
	for (int32_t i = 0; i < n; i++)
		out[i] = lo_f(F[i], p);
}

/* STORE: the lowered bounds replace l; otherwise only their minimum is returned */
template <bool STORE>
__attribute__((always_inline)) static inline float
lowered_bounds(float *l, const float *s, int32_t n)
{
	const vf16	keep = vf16 {} + (1.0f - 0x1p-22f), tiny = vf16 {} + 0x1p-100f;
	vf16		vm = vf16 {} + __builtin_inff();
	int32_t		i = 0;
	for (; i + 16 <= n; i += 16)
	{
		vf16		r = (load16(l + i) - load16(s + i)) * keep;
		r = r > tiny ? r : vf16 {};
		if (STORE)
			memcpy(l + i, &r, sizeof(r));
		vm = vmin(vm, r);
	}
	float		m = hmin(vm);
	for (; i < n; i++)
	{
		float		v = sub_down_f(l[i], s[i]);
		if (STORE)
			l[i] = v;
		m = v < m ? v : m;
	}
	return m;
}

PGKM_TARGET_CLONES_V4 float
lower_bounds_drift(float *l, const float *s, int32_t n)
{
	return lowered_bounds<true>(l, s, n);
}

PGKM_TARGET_CLONES_V4 float
lower_bounds_drift_min(const float *l, const float *s, int32_t n)
{
	return lowered_bounds<false>(const_cast<float *>(l), s, n);
}

PGKM_TARGET_CLONES_V4 int32_t
bounds_filter(const float *l, const float *icd, float lim, float sep_lim, int32_t n,
			  uint8_t *keep)
{
	int32_t		kept = 0;
	for (int32_t i = 0; i < n; i++)
	{
		uint8_t		v = (l[i] <= lim) & (icd[i] <= sep_lim);
		keep[i] = v;
		kept += v;
	}
	return kept;
}

PGKM_TARGET_CLONES_V4 int32_t
argmin_f(const float *F, int32_t n, float *min, bool *finite)
{
	vf16		vm = vf16 {} + __builtin_inff(), vbad = {};
	const vf16	big = vf16 {} + __FLT_MAX__;
	for (int32_t i = 0; i < n; i += 16)
	{
		vf16		v = load16(F + i);
		vm = vmin(vm, v);
		vbad = (v <= big) ? vbad : big;	/* also NaN */
	}
	float		m = hmin(vm);
	*finite = hmin(vbad) == 0.0f && hmin(-vbad) == 0.0f;
	*min = m;
	int32_t		p = 0;
	while (p < n - 1 && !(F[p] == m))
		p++;
	return p;
}

PGKM_TARGET_CLONES_V4 void
block_mins(const float *F, int32_t nb, float *out)
{
	for (int32_t b = 0; b < nb; b++)
		out[b] = hmin(load16(F + (size_t) b * BLOCK));
}

}							/* namespace pgkm */
