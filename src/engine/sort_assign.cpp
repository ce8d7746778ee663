/*
 * sort_assign.cpp: Wu & Hong's labelling (the compare/sort-means test of
 * Phillips 2002): each centroid's row of inter-centroid distances, ranked;
 * a row computes its distance to its old centroid a, then visits the other
 * centroids nearest to a first and stops at the first one farther from a
 * than the distance to a plus the distance to the best so far (their test,
 * "farther than twice the current distance", is the case best = a). No
 * bounds are carried across passes: O(k^2) memory, at least one distance
 * per row and pass. Exactness: exact_bounds.h.
 */
#include "bounded_assign.h"

#include <algorithm>
#include <numeric>

namespace pgkm
{

class SortAssign : public BoundedAssign
{
public:
	SortAssign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
			   ThreadPool *pool)
		: BoundedAssign(PGKM_METHOD_SORT, x, n, d, kmax, mean, pool)
	{
		/* the k x (k-1) tables' memory now (untouched): a k too large fails before the init runs */
		const size_t cells = (size_t) kmax * (size_t) std::max(kmax - 1, 0);
		rank_.reserve(cells);
		icd_.reserve(cells);
	}

protected:
	/* Each row of the inter-centroid lower bounds, sorted ascending (ties by index). */
	void		on_centroids(bool, bool) override
	{
		const int32_t k = geo_.k(), w = k - 1;
		rank_.resize((size_t) k * w);
		icd_.resize((size_t) k * w);
		geo_.icd_rows(pool_, [&](int32_t a, const double *lo) {
			int32_t    *r = rank_.data() + (size_t) a * w;
			int32_t		p = 0;
			for (int32_t c = 0; c < k; c++)
				if (c != a)
					r[p++] = c;
			std::sort(r, r + w, [&](int32_t x, int32_t y) {
				return lo[x] < lo[y] || (lo[x] == lo[y] && x < y);
			});
			for (int32_t j = 0; j < w; j++)
				icd_[(size_t) a * w + j] = lo[r[j]];
		});
	}

	void		init_bounds(int64_t, int32_t, double, Scratch &) override {}
	void		init_dense(int64_t, int32_t, double, double) override {}
	bool		would_keep_row(int64_t) const override { return false; }

	void		assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;

private:
	std::vector<int32_t> rank_;	/* k x (k-1): other centroids, nearest to the row's first */
	std::vector<double> icd_;	/* their distance lower bounds, same order */
};

/*
 * A visited centroid c with icd(a, c) > up(hi_a + thr(H)) is farther than
 * thr(H) from the row (exact_bounds.h point 2), and so is every later one
 * (the ranking ascends, H only falls): the walk stops there.
 */
void
SortAssign::assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	const int32_t w = geo_.k() - 1;
	for (int64_t i = r0; i < r1; i++)
	{
		const int32_t a = label_[i];
		centre(i, s);
		float		F = dist(s, a);
		double		e = err(s, a);
		const double hi_a = m.hi_float(F, e);
		s.nt.clear();
		s.nt.add(a, m.lo_float(F, e), hi_a, m);
		float		cf = cut(s);
		double		lim = ExactMargins::sep_limit(hi_a, m.thr(s.nt.best_hi()));
		const int32_t *r = rank_.data() + (size_t) a * w;
		const double *ic = icd_.data() + (size_t) a * w;
		for (int32_t j = 0; j < w && ic[j] <= lim; j++)
		{
			const int32_t c = r[j];
			float		Fc = dist(s, c);
			if (Fc > cf)
				continue;
			double		ec = err(s, c);
			s.nt.add(c, m.lo_float(Fc, ec), m.hi_float(Fc, ec), m);
			cf = cut(s);
			lim = ExactMargins::sep_limit(hi_a, m.thr(s.nt.best_hi()));
		}
		double		hi;
		int32_t		b = resolve(i, s, &hi);
		label_[i] = b;
		out[i - r0] = b;
	}
}

std::unique_ptr<BoundedAssign>
make_sort_assign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				 ThreadPool *pool)
{
	return std::unique_ptr<BoundedAssign>(new SortAssign(x, n, d, kmax, mean, pool));
}

}							/* namespace pgkm */
