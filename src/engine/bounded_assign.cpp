/*
 * bounded_assign.cpp: the common half of the pruned assignment methods
 * (bounded_assign.h): passes, the full search that (re)initialises a row's
 * bounds, and the counts.
 */
#include "bounded_assign.h"
#include "thread_pool.h"

#include <limits>

namespace pgkm
{

BoundedAssign::BoundedAssign(int32_t method, const float *x, int64_t n, int32_t d, int32_t kmax,
							 const double *mean, ThreadPool *pool)
	: method_(method), x_(x), n_(n), d_(d), kmax_(kmax), pool_(pool), geo_(d, kmax, mean)
{
	label_.assign(n, 0);
	scratch_.resize(pool->size());
	for (Scratch &s : scratch_)
	{
		s.xc.resize(d);
		s.F.resize((size_t) (kmax + BLOCK - 1) / BLOCK * BLOCK);
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
	if (!fresh_)
	{
		assign_rows(r0, r1, s, out);
		return;
	}
	for (int64_t i = r0; i < r1; i++)
	{
		double		hi;
		int32_t		b = full_search(i, s, &hi);
		init_bounds(i, b, hi, s);
		label_[i] = b;
		out[i - r0] = b;
	}
}

AssignCounts
BoundedAssign::take_counts()
{
	AssignCounts c;
	c.distances = 0;
	c.method = method_;
	for (Scratch &s : scratch_)
	{
		c.distances += s.distances;
		c.exact += s.exact;
		s.distances = s.exact = 0;
	}
	return c;
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
