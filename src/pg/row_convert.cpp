/*
 * row_convert.cpp: table values into the engine's float32 buffer
 * (row_convert.h): the shift chosen from the first rows, the scale kept in
 * its window as rows arrive, and the distinct rows counted in fp64.
 *
 * The shift. Per column, the midpoint of the first rows' [min, max], when
 * it is further from 0 than that range is wide (the column is offset by
 * more than its spread), else 0 (always 0 when the caller forbids shifts);
 * rounded to float when the column's first values are all floats, so that
 * a real value near it converts exactly (x - shift is exact by Sterbenz).
 * The midpoint of a subset lies inside the whole column's range, so
 * |x - shift| never exceeds the column's full range (and with shift 0,
 * twice it): the stored resolution is that of the data's spread, whatever
 * the order of the rows.
 *
 * The scale. One power of two e for all columns; e = 0 while the largest
 * |x - shift| stays within [2^-32, 2^40], else it is brought to [1, 2). A
 * later row beyond 2^40 scales the rows already stored down in place (a
 * power of two: exact, except values that fall below float's normal range,
 * which are then under 2^-94 of the largest); rows before the first
 * nonzero one are zeros and need nothing. So every float the engine's
 * kernels form stays below 2^120 for any d up to 2^31 (max_safe_abs in the
 * engine's units.h), and the spread's resolution (2^-24 of the largest
 * value) squares to a normal float.
 */
#include "row_convert.h"
#include "rng.h"

#include <cmath>

/* The first rows buffered to choose the shift: about 1 MB, 1 to 1024 rows. */
#define PGKM_FIRST_ROWS_BYTES (1 << 20)
#define PGKM_FIRST_ROWS_MAX 1024

typedef struct DistinctKey
{
	uint64		h1;
	uint64		h2;
} DistinctKey;

void
pgkm_narrow_begin(PgkmNarrow *nw, int32 d, int32 k, bool shift_allowed, MemoryContext cxt)
{
	HASHCTL		ctl;

	memset(nw, 0, sizeof(*nw));
	nw->d = d;
	nw->shift_allowed = shift_allowed;
	nw->k = Max(k, 1);
	nw->cxt = cxt;
	nw->row = (double *) MemoryContextAlloc(cxt, sizeof(double) * d);
	nw->shift = (double *) MemoryContextAllocZero(cxt, sizeof(double) * d);
	nw->scale_a = nw->scale_b = 1.0;
	nw->cap_first = Min(Max(PGKM_FIRST_ROWS_BYTES / ((int64) sizeof(double) * d), 1),
						PGKM_FIRST_ROWS_MAX);
	nw->first = (double *) MemoryContextAlloc(cxt, sizeof(double) * d * nw->cap_first);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(DistinctKey);
	ctl.entrysize = sizeof(DistinctKey);
	ctl.hcxt = cxt;
	nw->distinct = hash_create("pg_kmeans distinct rows", Min(nw->k, 1024), &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * Count nw->row among the distinct rows until k of them are known. Why a
 * 128-bit hash and not the row: k rows of d doubles may not fit in memory;
 * two rows that differ collide with probability about 2^-128 per pair. -0
 * counts as 0, as in every distance.
 */
static void
count_distinct(PgkmNarrow *nw)
{
	DistinctKey key;
	bool		found;
	uint64		h1 = UINT64CONST(0x243f6a8885a308d3),
				h2 = UINT64CONST(0x13198a2e03707344);

	if (nw->distinct == NULL)
		return;
	for (int32 j = 0; j < nw->d; j++)
	{
		double		v = nw->row[j] + 0.0;
		uint64		w;

		memcpy(&w, &v, sizeof(w));
		h1 = pgkm::splitmix64_mix(h1 ^ w) + (uint64) j;
		h2 = pgkm::splitmix64_mix(h2 + w * UINT64CONST(0x9e3779b97f4a7c15)) ^ (uint64) j;
	}
	key.h1 = pgkm::splitmix64_mix(h1);
	key.h2 = pgkm::splitmix64_mix(h2 ^ h1);
	hash_search(nw->distinct, &key, HASH_ENTER, &found);
	if (!found && ++nw->ndistinct >= nw->k)
	{
		hash_destroy(nw->distinct);
		nw->distinct = NULL;
	}
}

/* floor(log2 |v - s|) without overflow; INT_MIN for 0. */
static int
diff_log2(double v, double s)
{
	double		t = v - s;

	if (t == 0)
		return INT_MIN;
	if (std::isfinite(t))
		return std::ilogb(t);
	return std::ilogb(0.5 * v - 0.5 * s) + 1;	/* |v - s| beyond DBL_MAX */
}

/* The scale for a largest |x - shift| of 2^l .. 2^(l+1): 1 inside the window, else to [1, 2). */
static int32
scale_for(int l)
{
	return (l >= PGKM_NARROW_LO_LOG2 && l < PGKM_NARROW_HI_LOG2) ? 0 : -l;
}

static void
set_scale(PgkmNarrow *nw, int32 e)
{
	nw->scale_log2 = e;
	nw->scale_a = std::ldexp(1.0, e / 2);
	nw->scale_b = std::ldexp(1.0, e - e / 2);
}

/*
 * Convert nw->row into out; returns the largest |scaled value| (fp64, may
 * be infinite: then the row does not fit and out is to be rewritten).
 */
static double
convert_row(const PgkmNarrow *nw, float *out)
{
	const double *row = nw->row,
			   *shift = nw->shift;
	const double a = nw->scale_a,
				b = nw->scale_b;
	double		mx = 0;

	for (int32 j = 0; j < nw->d; j++)
	{
		double		t = row[j] - shift[j];
		double		y;

		if (likely(std::isfinite(t)))
			y = t * a * b;
		else
			y = (0.5 * row[j] - 0.5 * shift[j]) * a * b * 2.0;	/* exact halving at that size */
		out[j] = (float) y;
		mx = Max(mx, std::fabs(y));
	}
	return mx;
}

static inline float
float_from_bits(uint32 b)
{
	float		f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

/*
 * Rows 0..n-1 are stored with scale e_old; make it e_new < e_old (a row is
 * about to exceed the window). Scaling by a power of two in float is exact
 * but for results below float's normal range.
 */
static void
rescale_down(PgkmNarrow *nw, float *x, int64 n, int32 e_new)
{
	const int32 delta = e_new - nw->scale_log2;
	const int64 len = n * nw->d;

	for (int32 left = delta; left < 0;)
	{
		const int32 step = Max(left, -126);
		const float f = std::ldexp(1.0f, step);

		for (int64 i = 0; i < len; i++)
			x[i] *= f;
		left -= step;
	}
	nw->maxbits = pgkm_float_bits((float) std::ldexp((double) float_from_bits(nw->maxbits), delta));
	set_scale(nw, e_new);
}

/* Copying reals unchanged is the transform, and nothing is left to count. */
static void
update_fast(PgkmNarrow *nw)
{
	nw->fast = nw->decided && nw->scale_log2 == 0 && !nw->has_shift && nw->distinct == NULL;
}

/* Store nw->row as row n in the chosen transform, rescaling first if it leaves the window. */
static void
store_decided(PgkmNarrow *nw, float *x, int64 n)
{
	float	   *out = x + n * nw->d;
	double		mx = convert_row(nw, out);

	if (unlikely(!(mx <= PGKM_NARROW_HI) ||
				 (mx > 0 && mx < PGKM_NARROW_LO && nw->maxbits == 0)))
	{
		int			l = INT_MIN;

		for (int32 j = 0; j < nw->d; j++)
			l = Max(l, diff_log2(nw->row[j], nw->shift[j]));
		if (nw->maxbits == 0)
			set_scale(nw, scale_for(l));	/* every stored value is 0: nothing to rescale */
		else
			rescale_down(nw, x, n, scale_for(l));
		mx = convert_row(nw, out);
	}
	nw->maxbits = Max(nw->maxbits, pgkm_float_bits((float) mx));
	update_fast(nw);
}

/*
 * Choose the shift and the scale from the buffered first rows (see the top
 * of this file), then store them as rows 0..nfirst-1.
 */
static void
decide(PgkmNarrow *nw, float *x)
{
	const int32 d = nw->d;
	int			l = INT_MIN;

	for (int32 j = 0; j < d; j++)
	{
		double		lo = nw->first[j],
					hi = lo,
					mid;
		bool		reals = true;	/* every value is a float */

		for (int64 i = 0; i < nw->nfirst; i++)
		{
			const double v = nw->first[i * d + j];

			lo = Min(lo, v);
			hi = Max(hi, v);
			reals = reals && (double) (float) v == v;
		}
		mid = 0.5 * lo + 0.5 * hi;
		if (nw->shift_allowed && std::fabs(mid) > hi - lo)	/* false when hi - lo overflows */
		{
			/*
			 * Reals near a float shift convert exactly; other values keep
			 * the exact midpoint, since rounding it to float could move it
			 * by far more than their spread (1.7e9 + microseconds).
			 */
			nw->shift[j] = reals ? (double) (float) mid : mid;
			nw->has_shift = true;
		}
	}
	for (int64 i = 0; i < nw->nfirst * d; i++)
		l = Max(l, diff_log2(nw->first[i], nw->shift[i % d]));
	set_scale(nw, l == INT_MIN ? 0 : scale_for(l));
	nw->decided = true;
	for (int64 i = 0; i < nw->nfirst; i++)
	{
		memcpy(nw->row, nw->first + i * d, sizeof(double) * d);
		store_decided(nw, x, i);
	}
	pfree(nw->first);
	nw->first = NULL;
	update_fast(nw);
}

void
pgkm_narrow_store_slow(PgkmNarrow *nw, float *x, int64 n)
{
	count_distinct(nw);
	if (likely(nw->decided))
	{
		store_decided(nw, x, n);
		return;
	}
	memcpy(nw->first + nw->nfirst * nw->d, nw->row, sizeof(double) * nw->d);
	nw->nfirst++;
	if (nw->nfirst == nw->cap_first)
		decide(nw, x);
}

void
pgkm_narrow_refit(PgkmNarrow *nw, float *x, int64 n)
{
	const float *out = x + n * nw->d;

	for (int32 j = 0; j < nw->d; j++)
		nw->row[j] = out[j];
	store_decided(nw, x, n);
}

void
pgkm_narrow_end(PgkmNarrow *nw, float *x, PgkmData *out)
{
	if (!nw->decided && nw->nfirst > 0)
		decide(nw, x);
	out->shift = nw->has_shift ? nw->shift : NULL;
	out->scale_log2 = nw->scale_log2;
	out->distinct_rows = nw->ndistinct;
	if (nw->distinct != NULL)
	{
		hash_destroy(nw->distinct);
		nw->distinct = NULL;
	}
}

void
pgkm_report_fewer_clusters(const PgkmData *data, const pgkm_result *r)
{
	if (r->k >= r->k_requested)
		return;
	if (r->unfilled_clusters > 0 && r->kernel != NULL)
		ereport(NOTICE,
				(errmsg("returning %d clusters instead of %d: %d stayed empty although rows lie apart from every centroid",
						r->k, r->k_requested, r->unfilled_clusters),
				 errdetail("Kernel k-means moved them to far rows %d times, and the next assignment emptied them again.",
						   r->k_requested)));
	else if (r->unfilled_clusters > 0)
		ereport(NOTICE,
				(errmsg("returning %d clusters instead of %d: %d stayed empty after the GPU's single-precision assignment",
						r->k, r->k_requested, r->unfilled_clusters),
				 errhint("Run with device => 'cpu', whose labels are exact.")));
	else if (data->distinct_rows <= r->k)
		ereport(NOTICE,
				(errmsg_plural("the data has only %d distinct point; returning %d cluster instead of %d",
							   "the data has only %d distinct points; returning %d clusters instead of %d",
							   r->k, r->k, r->k, r->k_requested)));
	else
		ereport(NOTICE,
				(errmsg_plural("the data has %s%lld distinct points, but only %d is distinct in %s; returning %d cluster instead of %d",
							   "the data has %s%lld distinct points, but only %d are distinct in %s; returning %d clusters instead of %d",
							   r->k,
							   data->distinct_rows >= r->k_requested ? "at least " : "",
							   (long long) data->distinct_rows, r->k,
							   r->kernel ? "the kernel's feature space" : "single precision",
							   r->k, r->k_requested),
				 errdetail("%s", r->kernel ?
						   "Kernel k-means compares rows through their kernel values in single precision: rows the kernel maps to one point (x and -x for an even degree and coef0 0), or whose values coincide there, are one point to it." :
						   "k-means computes in single precision, which resolves about 2^-24 of the largest value after centring each column (tiny values beside a huge one in a column: coarser, README \"Precision\"); closer points coincide.")));
}
