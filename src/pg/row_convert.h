/*
 * row_convert.h: table values into the engine's float32 buffer.
 *
 * Each stored value is float((v - shift_j) * 2^scale_log2): one fp64 shift
 * per column, chosen from the first rows, and one power-of-two scale for
 * all columns, kept so that the largest stored magnitude M stays within
 * [2^-32, 2^40] (or is 0). So offsets such as epoch seconds or projected
 * metres keep the resolution of their spread, magnitudes near double's
 * limits neither overflow nor underflow, and a distance order is never
 * changed by the scale. The engine gets shift and scale with the data and
 * answers in the table's units (pgkm_options.shift, scale_log2).
 *
 * A caller whose results depend on the origin (kernel k-means with the
 * polynomial or sigmoid kernel) forbids the shift: then only the scale
 * applies, which it compensates (gamma 2^-2e).
 *
 * Ordinary data (the first rows not offset by more than their spread, M in
 * the window) keeps shift 0 and scale 1: real values are copied exactly by
 * the fast path, and results are bit-identical to a plain float copy.
 *
 * The scan hands each row over as fp64 values in row (already checked
 * finite), or, on the fast path, copies reals itself and asks whether they
 * fit. Distinct rows are counted in fp64 up to k, for a true NOTICE when
 * the engine finds fewer distinct points than k.
 */
#ifndef PGKM_ROW_CONVERT_H
#define PGKM_ROW_CONVERT_H

#include "read.h"

extern "C"
{
#include "utils/hsearch.h"
}

/* The window of the largest stored magnitude: as powers of two, values, float bits. */
#define PGKM_NARROW_LO_LOG2 (-32)
#define PGKM_NARROW_HI_LOG2 40
#define PGKM_NARROW_LO 0x1p-32
#define PGKM_NARROW_HI 0x1p40
#define PGKM_NARROW_LO_BITS ((uint32) (127 + PGKM_NARROW_LO_LOG2) << 23)
#define PGKM_NARROW_HI_BITS ((uint32) (127 + PGKM_NARROW_HI_LOG2) << 23)

typedef struct PgkmNarrow
{
	int32		d;
	int64		k;				/* distinct rows are counted up to k */
	double	   *row;			/* d: the row being converted, fp64 */
	/* the transform */
	double	   *shift;			/* d */
	int32		scale_log2;
	double		scale_a,
				scale_b;		/* 2^scale_log2 = scale_a * scale_b, each finite */
	uint32		maxbits;		/* largest |stored value| so far, as float bits */
	bool		shift_allowed;	/* else every shift stays 0 */
	bool		decided;		/* the shift is chosen */
	bool		has_shift;		/* a column has a nonzero shift */
	bool		fast;			/* identity transform, nothing left to count: copy reals */
	/* the first rows in fp64, until the shift is decided */
	double	   *first;
	int64		nfirst;
	int64		cap_first;
	/* distinct rows, as 128-bit hashes of their fp64 values */
	HTAB	   *distinct;
	int64		ndistinct;
	MemoryContext cxt;
} PgkmNarrow;

/*
 * Start converting rows of d features; k bounds the distinct count;
 * shift_allowed false keeps every shift 0 (the scale still applies).
 */
extern void pgkm_narrow_begin(PgkmNarrow *nw, int32 d, int32 k, bool shift_allowed,
							  MemoryContext cxt);

/* Slow side of pgkm_narrow_copied: row n holds reals copied as they are. */
extern void pgkm_narrow_refit(PgkmNarrow *nw, float *x, int64 n);

/*
 * Fast path: row n of x holds finite reals copied unchanged (only while
 * nw->fast), whose largest |value| has float bits maxbits. Keeps the window.
 */
static inline void
pgkm_narrow_copied(PgkmNarrow *nw, float *x, int64 n, uint32 maxbits)
{
	/* within the window, or tiny next to values already stored, or zero */
	if (likely(maxbits <= PGKM_NARROW_HI_BITS &&
			   (maxbits >= PGKM_NARROW_LO_BITS || nw->maxbits > 0 || maxbits == 0)))
	{
		if (maxbits > nw->maxbits)
			nw->maxbits = maxbits;
		return;
	}
	pgkm_narrow_refit(nw, x, n);
}

/* Bits of a float, for the branch-free checks of the copy below. */
static inline uint32
pgkm_float_bits(float f)
{
	uint32		b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/* pgkm_narrow_store's general case. */
extern void pgkm_narrow_store_slow(PgkmNarrow *nw, float *x, int64 n);

/*
 * Store nw->row as row n of x (x has room for it). Inline for the common
 * case (transform chosen, nothing left to count, values stored already, the
 * row inside the window): (v - shift) * 2^e to float, four at a time by
 * hand (-O2 does not vectorise it), keeping the largest |float| as bits.
 * Anything else takes the general case, an overflow of v - shift included
 * (it shows as an infinite float).
 */
static inline void
pgkm_narrow_store(PgkmNarrow *nw, float *x, int64 n)
{
	typedef double f64x2 __attribute__((vector_size(16)));
	typedef float f32x4 __attribute__((vector_size(16)));
	typedef uint32 u32x4 __attribute__((vector_size(16)));

	if (likely(nw->decided && nw->distinct == NULL && nw->maxbits > 0))
	{
		const double *row = nw->row,
				   *shift = nw->shift;
		float	   *out = x + n * nw->d;
		const double a = nw->scale_a,
					b = nw->scale_b;
		const u32x4 absmask = {0x7fffffffu, 0x7fffffffu, 0x7fffffffu, 0x7fffffffu};
		u32x4		mx = {0, 0, 0, 0};
		uint32		mx1;
		int32		j = 0;

		for (; j + 4 <= nw->d; j += 4)
		{
			f64x2		r0,
						r1,
						s0,
						s1;
			f32x4		f;
			u32x4		bits;

			memcpy(&r0, row + j, sizeof(r0));
			memcpy(&r1, row + j + 2, sizeof(r1));
			memcpy(&s0, shift + j, sizeof(s0));
			memcpy(&s1, shift + j + 2, sizeof(s1));
			r0 = (r0 - s0) * a * b;
			r1 = (r1 - s1) * a * b;
			f[0] = (float) r0[0];
			f[1] = (float) r0[1];
			f[2] = (float) r1[0];
			f[3] = (float) r1[1];
			memcpy(out + j, &f, sizeof(f));
			memcpy(&bits, &f, sizeof(bits));
			bits &= absmask;
			mx = bits > mx ? bits : mx;
		}
		mx1 = Max(Max(mx[0], mx[1]), Max(mx[2], mx[3]));
		for (; j < nw->d; j++)
		{
			out[j] = (float) ((row[j] - shift[j]) * a * b);
			mx1 = Max(mx1, pgkm_float_bits(out[j]) & 0x7fffffffu);
		}
		if (likely(mx1 <= PGKM_NARROW_HI_BITS))
		{
			if (mx1 > nw->maxbits)
				nw->maxbits = mx1;
			return;
		}
	}
	pgkm_narrow_store_slow(nw, x, n);
}

/*
 * Copy n reals; false when one is NaN or infinite; *maxbits = the float
 * bits of the largest |value| (the bits of non-negative floats order like
 * the values). Why this bit arithmetic: (b & exponent) + 2^23 carries into
 * bit 31 exactly for an all-ones exponent, so one add and one or per value,
 * no branch; four lanes by hand because -O2 does not vectorise it.
 */
static inline bool
pgkm_copy_finite_float4(float *out, const float4 *p, int n, uint32 *maxbits)
{
	typedef uint32 u32x4 __attribute__((vector_size(16)));
	const u32x4 expo = {0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u};
	const u32x4 one = {0x00800000u, 0x00800000u, 0x00800000u, 0x00800000u};
	const u32x4 absmask = {0x7fffffffu, 0x7fffffffu, 0x7fffffffu, 0x7fffffffu};
	u32x4		acc = {0, 0, 0, 0},
				mx = {0, 0, 0, 0};
	uint32		acc1,
				mx1;
	int			e = 0;

	for (; e + 4 <= n; e += 4)
	{
		u32x4		b;

		memcpy(&b, p + e, sizeof(b));
		memcpy(out + e, &b, sizeof(b));
		acc |= (b & expo) + one;
		b &= absmask;
		mx = b > mx ? b : mx;
	}
	acc1 = acc[0] | acc[1] | acc[2] | acc[3];
	mx1 = Max(Max(mx[0], mx[1]), Max(mx[2], mx[3]));
	for (; e < n; e++)
	{
		uint32		b = pgkm_float_bits(p[e]);

		out[e] = p[e];
		acc1 |= (b & 0x7f800000u) + 0x00800000u;
		mx1 = Max(mx1, b & 0x7fffffffu);
	}
	*maxbits = mx1;
	return (acc1 & 0x80000000u) == 0;
}

/*
 * Widen n reals or copy n doubles into the fp64 row; false when one is NaN
 * or infinite (the caller reports the first). Same bit test: a value is not
 * finite exactly when its exponent bits are all ones.
 */
static inline bool
pgkm_widen_finite_float4(double *out, const float4 *p, int n)
{
	uint32		bad = 0;

	for (int e = 0; e < n; e++)
	{
		out[e] = p[e];
		bad |= ((pgkm_float_bits(p[e]) & 0x7f800000u) + 0x00800000u) & 0x80000000u;
	}
	return bad == 0;
}

static inline bool
pgkm_copy_finite_float8(double *out, const float8 *p, int n)
{
	uint64		bad = 0;

	memcpy(out, p, sizeof(double) * n);
	for (int e = 0; e < n; e++)
	{
		uint64		b;

		memcpy(&b, &p[e], sizeof(b));
		bad |= ((b & UINT64CONST(0x7ff0000000000000)) + UINT64CONST(0x0010000000000000)) &
			UINT64CONST(0x8000000000000000);
	}
	return bad == 0;
}

/* After the last row: the transform and the distinct count into out. */
extern void pgkm_narrow_end(PgkmNarrow *nw, float *x, PgkmData *out);

/*
 * The NOTICE when the engine returned fewer clusters than asked: what is
 * true of the data in fp64 and at the engine's single precision.
 */
extern void pgkm_report_fewer_clusters(const PgkmData *data, const pgkm_result *r);

#endif							/* PGKM_ROW_CONVERT_H */
