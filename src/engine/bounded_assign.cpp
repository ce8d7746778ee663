/*
 * bounded_assign.cpp: the common half of the pruned assignment methods
 * (bounded_assign.h): passes, the full search that (re)initialises a row's
 * bounds, and the counts.
 */
#include "bounded_assign.h"
#include "thread_pool.h"

#include <algorithm>
#include <limits>

namespace pgkm
{

/* Rows per call of the tiled kernel in dense_search (bounds the per-row scratch). */
static constexpr int64_t DENSE_ROWS = 256;

BoundedAssign::BoundedAssign(int32_t method, const float *x, int64_t n, int32_t d, int32_t kmax,
							 const double *mean, ThreadPool *pool)
	: method_(method), x_(x), n_(n), d_(d), kmax_(kmax), pool_(pool), geo_(d, kmax, mean)
{
	label_.resize(n);
	scratch_.resize(pool->size());
	const ArgminKernel &kern = geo_.kernel();
	for (Scratch &s : scratch_)
	{
		s.xc.resize(d);
		s.F.resize((size_t) (kmax + BLOCK - 1) / BLOCK * BLOCK);
		s.xt.resize((size_t) std::min(d, ARGMIN_KC) * kern.rows_per_block);
		if (d > ARGMIN_KC)
			s.partial.resize((size_t) ARGMIN_GROUP * kern.rows_per_block);
		for (auto *v : {&s.best, &s.second, &s.x2})
			v->resize(DENSE_ROWS);
		s.idx.resize(DENSE_ROWS);
		s.hi.resize(DENSE_ROWS);
		s.lo.resize(DENSE_ROWS);
		s.lab.resize(DENSE_ROWS);
	}
}

void
BoundedAssign::set_centroids(const double *centroids, int32_t k)
{
	CentroidGeometry::Change ch = geo_.set(centroids, k);
	const bool reset = ch.reset || restart_;
	restart_ = false;
	if (ch.passed)
		fresh_ = false;
	if (reset)
		fresh_ = true;
	on_centroids(reset, ch.passed);
}

void
BoundedAssign::nearest(int64_t r0, int64_t r1, int worker, int32_t *out)
{
	geo_.mark_pass();
	Scratch    &s = scratch_[worker];
	if (dense_)
		dense_rows(r0, r1, s, out);
	else if (fresh_)
		fresh_rows(r0, r1, s, out);
	else
		assign_rows(r0, r1, s, out);
}

void
BoundedAssign::fresh_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	for (int64_t i = r0; i < r1; i++)
	{
		double		hi;
		int32_t		b = full_search(i, s, &hi);
		init_bounds(i, b, hi, s);
		label_[i] = b;
		out[i - r0] = b;
	}
}

/*
 * Every 8th row (by row number, so the count does not depend on the
 * chunking) meets the method's O(1) test first: what a pruned pass would
 * have skipped, at a cost far below the pass's.
 */
void
BoundedAssign::dense_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	if (!fresh_)
		for (int64_t i = (r0 + 7) / 8 * 8; i < r1; i += 8)
		{
			s.tested++;
			s.kept += would_keep_row(i);
		}
	for (int64_t p0 = r0; p0 < r1; p0 += DENSE_ROWS)
	{
		const int64_t m = std::min<int64_t>(DENSE_ROWS, r1 - p0);
		s.ids.resize(m);
		for (int64_t r = 0; r < m; r++)
			s.ids[r] = p0 + r;
		dense_search(x_ + p0 * d_, s.ids.data(), m, s);
		for (int64_t r = 0; r < m; r++)
		{
			init_dense(p0 + r, s.lab[r], s.hi[r], s.lo[r]);
			label_[p0 + r] = s.lab[r];
			out[p0 - r0 + r] = s.lab[r];
		}
	}
}

void
BoundedAssign::dense_search(const float *xs, const int64_t *ids, int64_t m, Scratch &s)
{
	const int32_t k = geo_.k(), np = geo_.nblocks() * BLOCK;
	const ExactMargins &mg = geo_.margins();
	const ArgminKernel &kern = geo_.kernel();
	ArgminArgs	a {xs, m, d_, geo_.mean(), geo_.panels(), geo_.panel_norms(), k, s.xt.data(),
		s.partial.data(), s.idx.data(), s.best.data(), s.second.data(), s.x2.data()};
	kern.run(a);
	s.distances += m * k;
	gemm_row_bounds(s.best.data(), s.second.data(), s.x2.data(), m, geo_.gemm(), geo_.err_max(),
					s.hi.data(), s.lo.data());
	for (int64_t r = 0; r < m; r++)
	{
		if (k > 1 ? s.lo[r] > mg.thr(s.hi[r]) : s.hi[r] < 1e300)
		{
			s.lab[r] = s.idx[r];
			if (k == 1)
				s.lo[r] = std::numeric_limits<double>::infinity();
			continue;
		}
		double		hi;
		const int32_t b = full_search(ids[r], s, &hi);
		s.distances -= k;	/* the same pairs again, counted once */
		s.lab[r] = b;
		s.hi[r] = hi;
		s.lo[r] = s.slow ? 0.0 : lo_any(s, min_f_except(s, 0, np, b));
	}
}

AssignCounts
BoundedAssign::take_counts(int64_t)
{
	AssignCounts c;
	c.distances = 0;
	c.method = method_;
	for (Scratch &s : scratch_)
	{
		c.distances += s.distances;
		c.exact += s.exact;
		s.distances = s.exact = 0;
		s.kept = s.tested = 0;
	}
	return c;
}

void
BoundedAssign::keep_counts(int64_t *kept, int64_t *tested) const
{
	*kept = *tested = 0;
	for (const Scratch &s : scratch_)
	{
		*kept += s.kept;
		*tested += s.tested;
	}
}

/*
 * Every centroid in float, then intervals only for those under the cut of
 * the smallest float distance (usually one). A non-finite float distance
 * (overflow) sends the row to E for every centroid, with zero lower bounds;
 * padding lanes hold FLT_MAX.
 */
int32_t
BoundedAssign::full_search(int64_t i, Scratch &s, double *hi)
{
	centre(i, s);
	const int32_t nb = geo_.nblocks(), np = nb * BLOCK, k = geo_.k();
	const std::vector<int32_t> &order = geo_.order();
	float	   *F = s.F.data();
	fsqdist_blocks(s.xc.data(), geo_.blocks(), d_, nb, F);
	s.distances += k;
	for (int32_t p : geo_.padding())
		F[p] = std::numeric_limits<float>::max();	/* never below a finite real distance */
	bool		finite;
	float		fmin;
	const int32_t pmin = argmin_f(F, np, &fmin, &finite);
	s.nt.clear();
	if (!finite || order[pmin] < 0)
	{
		const float *xi = x_ + i * d_;
		const int32_t b = nearest_exact(xi, geo_.cent(), d_, nullptr, k);
		const double be = sqdist_exact(xi, geo_.centroid(b), d_);
		s.exact += k;
		std::fill(F, F + np, 0.0f);
		s.slow = true;
		*hi = geo_.margins().hi_exact(be);
		return b;
	}
	s.slow = false;
	float		cut = std::numeric_limits<float>::infinity();
	consider(s, order[pmin], F[pmin], cut);
	for (int32_t p = 0; p < np; p++)
		if (F[p] <= cut && p != pmin && order[p] >= 0)
			consider(s, order[p], F[p], cut);
	return resolve(i, s, hi);
}

float
BoundedAssign::min_f_except(const Scratch &s, int32_t p0, int32_t p1, int32_t not_c) const
{
	const std::vector<int32_t> &order = geo_.order();
	float		m = std::numeric_limits<float>::infinity();
	for (int32_t p = p0; p < p1; p++)
		if (order[p] >= 0 && order[p] != not_c && s.F[p] < m)
			m = s.F[p];
	return m;
}

}							/* namespace pgkm */
