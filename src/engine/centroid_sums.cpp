/*
 * centroid_sums.cpp: the update's fixed-point per-cluster row sums
 * (centroid_sums.h), built for AVX-512, AVX2 and the baseline and picked at
 * load time; integer sums, so every build gives the same bits.
 */
#include "centroid_sums.h"
#include "simd.h"
#include "thread_pool.h"

#include <atomic>
#include <vector>

namespace pgkm
{

/* D > 0 fixes d at compile time: at small d the loop's own overhead was most of a row's cost */
template <int D>
__attribute__((always_inline)) static inline void
add_rows(const float *x, int64_t rows, int32_t dd, const int32_t *labels, const double *scale,
		 uint64_t *sums)
{
	const int32_t d = D > 0 ? D : dd;
	for (int64_t i = 0; i < rows; i++)
	{
		const float *xi = x + i * d;
		uint64_t   *__restrict sr = sums + (int64_t) labels[i] * d;
		for (int32_t j = 0; j < d; j++)
			sr[j] += fixed_point(xi[j], scale[j]);
	}
}

PGKM_TARGET_CLONES_V4 void
add_rows_fixed(const float *x, int64_t rows, int32_t d, const int32_t *labels, const double *scale,
			   uint64_t *sums)
{
	switch (d)
	{
		case 1: add_rows<1>(x, rows, d, labels, scale, sums); break;
		case 2: add_rows<2>(x, rows, d, labels, scale, sums); break;
		case 3: add_rows<3>(x, rows, d, labels, scale, sums); break;
		case 4: add_rows<4>(x, rows, d, labels, scale, sums); break;
		default: add_rows<0>(x, rows, d, labels, scale, sums); break;
	}
}

template <int D>
__attribute__((always_inline)) static inline void
move_rows(const float *x, int32_t dd, const int32_t *rows, const int32_t *from, int32_t m,
		  const int32_t *to, const double *scale, uint64_t *sums)
{
	const int32_t d = D > 0 ? D : dd;
	for (int32_t t = 0; t < m; t++)
	{
		const int32_t r = rows[t];
		const float *xr = x + (int64_t) r * d;
		uint64_t   *__restrict sa = sums + (int64_t) to[r] * d;
		for (int32_t j = 0; j < d; j++)
			sa[j] += fixed_point(xr[j], scale[j]);
		if (from[t] < 0)
			continue;
		uint64_t   *__restrict sb = sums + (int64_t) from[t] * d;
		for (int32_t j = 0; j < d; j++)
			sb[j] -= fixed_point(xr[j], scale[j]);
	}
}

PGKM_TARGET_CLONES_V4 void
move_rows_fixed(const float *x, int32_t d, const int32_t *rows, const int32_t *from, int32_t m,
				const int32_t *to, const double *scale, uint64_t *sums)
{
	switch (d)
	{
		case 1: move_rows<1>(x, d, rows, from, m, to, scale, sums); break;
		case 2: move_rows<2>(x, d, rows, from, m, to, scale, sums); break;
		case 3: move_rows<3>(x, d, rows, from, m, to, scale, sums); break;
		case 4: move_rows<4>(x, d, rows, from, m, to, scale, sums); break;
		default: move_rows<0>(x, d, rows, from, m, to, scale, sums); break;
	}
}

/* Values per test of put_on_sum_grid, and values per task (a multiple). */
static constexpr int64_t GRID_BLOCK = 256;
static constexpr int64_t GRID_TASK = 1 << 18;

/* Whether a value of x[0, cnt) is nonzero and below lim in magnitude. */
PGKM_TARGET_CLONES static bool
any_small(const float *x, int64_t cnt, float lim)
{
	const vf8	l = splat(lim), zero = {};
	vi8			hit = {};
	int64_t		t = 0;
	for (; t + 8 <= cnt; t += 8)
	{
		vi8			bits;
		std::memcpy(&bits, x + t, sizeof(bits));
		bits &= 0x7fffffff;		/* |v| */
		vf8			a;
		std::memcpy(&a, &bits, sizeof(a));
		hit |= (a < l) & (a > zero);
	}
	bool		any = false;
	for (int i = 0; i < 8; i++)
		any |= hit[i] != 0;
	for (; t < cnt; t++)
		any |= std::fabs(x[t]) < lim && x[t] != 0;
	return any;
}

bool
put_on_sum_grid(float *x, int64_t n, int32_t d, const float *maxabs, ThreadPool *pool,
				std::vector<double> *scales)
{
	std::vector<double> scale(d);
	std::vector<float> below(d);
	float		below_max = 0;
	for (int32_t j = 0; j < d; j++)
	{
		scale[j] = fixed_point_scale(n, maxabs[j]);
		below[j] = (float) sum_grid_below(scale[j]);
		below_max = std::max(below_max, below[j]);
	}
	const int64_t total = n * d, ntasks = (total + GRID_TASK - 1) / GRID_TASK;
	if (scales)
		*scales = scale;
	std::atomic<bool> changed {false};
	pool->parallel_for(ntasks, [&](int64_t task, int) {
		const int64_t t1 = std::min(total, (task + 1) * GRID_TASK);
		for (int64_t b = task * GRID_TASK; b < t1; b += GRID_BLOCK)
		{
			const int64_t e = std::min(t1, b + GRID_BLOCK);
			if (!any_small(x + b, e - b, below_max))
				continue;
			int32_t		j = (int32_t) (b % d) - 1;
			for (int64_t t = b; t < e; t++)
			{
				j = j + 1 == d ? 0 : j + 1;	/* t's column */
				if (!(std::fabs(x[t]) < below[j] && x[t] != 0))
					continue;
				const float q = on_sum_grid(x[t], scale[j]);
				if (q != x[t])
				{
					x[t] = q;
					changed.store(true, std::memory_order_relaxed);
				}
			}
		}
	});
	return changed.load();
}

/* Listed rows ahead whose first line add_listed asks for. */
static constexpr int32_t LISTED_PREFETCH = 8;

/* D > 0: every feature of d = D rows (j0 = 0, j1 = D) */
template <int D>
__attribute__((always_inline)) static inline void
add_listed(const float *x, int32_t d, int32_t j0, int32_t j1, const int32_t *rows, int32_t m,
		   const int32_t *labels, const double *scale, uint64_t *sums)
{
	if (D > 0)
		d = D, j0 = 0, j1 = D;
	for (int32_t t = 0; t < m; t++)
	{
		/* the listed rows are far apart: their loads would wait one at a time behind the sums */
		if (D == 0 && t + LISTED_PREFETCH < m)
			__builtin_prefetch(x + (int64_t) rows[t + LISTED_PREFETCH] * d + j0);
		const float *xi = x + (int64_t) rows[t] * d;
		uint64_t   *__restrict sr = sums + (int64_t) labels[rows[t]] * d;
		for (int32_t j = j0; j < j1; j++)
			sr[j] += fixed_point(xi[j], scale[j]);
	}
}

/* fixed below 5 features only: at d = 16 the fixed loop took twice as long */
PGKM_TARGET_CLONES_V4 void
add_listed_rows(const float *x, int32_t d, int32_t j0, int32_t j1, const int32_t *rows, int32_t m,
				const int32_t *labels, const double *scale, uint64_t *sums)
{
	switch (j0 == 0 && j1 == d ? d : 0)
	{
		case 1: add_listed<1>(x, d, j0, j1, rows, m, labels, scale, sums); break;
		case 2: add_listed<2>(x, d, j0, j1, rows, m, labels, scale, sums); break;
		case 3: add_listed<3>(x, d, j0, j1, rows, m, labels, scale, sums); break;
		case 4: add_listed<4>(x, d, j0, j1, rows, m, labels, scale, sums); break;
		default: add_listed<0>(x, d, j0, j1, rows, m, labels, scale, sums); break;
	}
}

}							/* namespace pgkm */
