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

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) float
lower_bounds_drift(float *l, const float *s, int32_t n)
{
	float		m = __builtin_inff();
	for (int32_t i = 0; i < n; i++)
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

}							/* namespace pgkm */
