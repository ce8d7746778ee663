/*
 * hamerly_assign.cpp: Hamerly's method (Hamerly 2010): per row one upper
 * bound on the distance to its centroid and one lower bound on the distance
 * to every other centroid, carried across passes with the drifts; a row is
 * skipped when the upper bound is below the lower bound or below the
 * distance from its centroid to the nearest other one minus itself; the
 * others are searched whole, a batch at a time, by Lloyd's tiled kernel
 * (its best and runner-up values are exactly the two bounds). O(n) memory;
 * pays at small k on well-separated data, and late in any run.
 * Exactness: exact_bounds.h.
 */
#include "bounded_assign.h"

#include <algorithm>
#include <limits>

namespace pgkm
{

/* Rows searched together by the tiled kernel (at most dense_search's block). */
static constexpr int64_t HAMERLY_GATHER = 64;

class HamerlyAssign : public BoundedAssign
{
public:
	HamerlyAssign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				  ThreadPool *pool)
		: BoundedAssign(PGKM_METHOD_HAMERLY, x, n, d, kmax, mean, pool)
	{
		u_.resize(n);				/* unwritten: see bounded_assign.h */
		l_.resize(n);
		sep_.assign(kmax, 0.0);
	}

protected:
	void		on_centroids(bool, bool) override
	{
		const int32_t k = geo_.k();
		geo_.icd_rows(pool_, [&](int32_t a, const double *lo) {
			double		m = std::numeric_limits<double>::infinity();
			for (int32_t c = 0; c < k; c++)
				if (c != a && lo[c] < m)
					m = lo[c];
			sep_[a] = m;
		});
	}

	void		init_bounds(int64_t i, int32_t b, double hi, Scratch &s) override
	{
		u_[i] = hi;
		l_[i] = lo_any(s, min_f_except(s, 0, geo_.nblocks() * BLOCK, b));
	}

	void		init_dense(int64_t i, int32_t, double hi, double lo) override
	{
		u_[i] = hi;
		l_[i] = lo;
	}

	bool		would_keep_row(int64_t i) const override
	{
		const int32_t a = label_[i];
		return keeps(a, up(u_[i] + geo_.drift(a)), sub_down(l_[i], geo_.drift_max_except(a)));
	}

	void		assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;
	/* The first pass: the tiled kernel's best and runner-up are Hamerly's bounds. */
	void		fresh_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override
	{
		dense_rows(r0, r1, s, out);
	}

private:
	/* Does a row with bounds u (own centroid a) and l keep its label? */
	bool		keeps(int32_t a, double u, double l) const
	{
		const double t = geo_.margins().thr(u);
		return l > t || sep_[a] > ExactMargins::sep_limit(u, t);
	}

	RowArray<double> u_, l_;
	std::vector<double> sep_;	/* lower bound of the distance to the nearest other centroid */
};

/*
 * The rows neither bound settles (after tightening the upper bound with
 * one distance) are gathered and searched together by Lloyd's tiled kernel
 * (dense_search), which also gives their new bounds.
 */
void
HamerlyAssign::assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	s.rows.resize((size_t) HAMERLY_GATHER * d_);
	s.ids.resize(HAMERLY_GATHER);
	int64_t		ng = 0;
	auto		flush = [&]() {
		dense_search(s.rows.data(), s.ids.data(), ng, s);
		s.distances -= ng;	/* each row's distance to its label, counted before */
		for (int64_t r = 0; r < ng; r++)
		{
			const int64_t i = s.ids[r];
			init_dense(i, s.lab[r], s.hi[r], s.lo[r]);
			label_[i] = s.lab[r];
			out[i - r0] = s.lab[r];
		}
		ng = 0;
	};
	for (int64_t i = r0; i < r1; i++)
	{
		const int32_t a = label_[i];
		double		u = up(u_[i] + geo_.drift(a));
		double		l = sub_down(l_[i], geo_.drift_max_except(a));
		l_[i] = l;
		out[i - r0] = a;
		s.tested++;
		if (keeps(a, u, l))
		{
			s.kept++;
			u_[i] = u;
			continue;
		}
		centre(i, s);
		float		F = dist(s, a);
		u = std::min(u, m.hi_float(F, err(s, a)));
		u_[i] = u;
		if (keeps(a, u, l))
			continue;
		std::copy(x_ + i * d_, x_ + (i + 1) * d_, s.rows.begin() + ng * d_);
		s.ids[ng++] = i;
		if (ng == HAMERLY_GATHER)
			flush();
	}
	if (ng > 0)
		flush();
}

std::unique_ptr<BoundedAssign>
make_hamerly_assign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
					ThreadPool *pool)
{
	return std::unique_ptr<BoundedAssign>(new HamerlyAssign(x, n, d, kmax, mean, pool));
}

}							/* namespace pgkm */
