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

#include <cstring>

namespace pgkm
{

typedef float vf16 __attribute__((vector_size(64)));

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

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) float
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

/* Four partial sums over j mod 4 per block keep the FMA pipes busy. */
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void
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

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void
lo_f_array(const float *F, int32_t n, FloatLo p, float *out)
{
	for (int32_t i = 0; i < n; i++)
		out[i] = lo_f(F[i], p);
}

/* Lane-wise minimum (GCC will not reorder a scalar min reduction into vectors). */
static inline vf16
vmin(vf16 a, vf16 b)
{
	return a < b ? a : b;
}

static inline float
hmin(vf16 v)
{
	float		m = v[0];
	for (int i = 1; i < 16; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) float
lower_bounds_drift(float *l, const float *s, int32_t n)
{
	const vf16	keep = vf16 {} + (1.0f - 0x1p-22f), tiny = vf16 {} + 0x1p-100f;
	vf16		vm = vf16 {} + __builtin_inff();
	int32_t		i = 0;
	for (; i + 16 <= n; i += 16)
	{
		vf16		r = (load16(l + i) - load16(s + i)) * keep;
		r = r > tiny ? r : vf16 {};
		memcpy(l + i, &r, sizeof(r));
		vm = vmin(vm, r);
	}
	float		m = hmin(vm);
	for (; i < n; i++)
	{
		float		v = sub_down_f(l[i], s[i]);
		l[i] = v;
		m = v < m ? v : m;
	}
	return m;
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) int32_t
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

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) int32_t
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

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void
block_mins(const float *F, int32_t nb, float *out)
{
	for (int32_t b = 0; b < nb; b++)
		out[b] = hmin(load16(F + (size_t) b * BLOCK));
}

}							/* namespace pgkm */
