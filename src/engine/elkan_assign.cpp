/*
 * elkan_assign.cpp: Elkan's method (Elkan 2003): per row an upper bound on
 * the distance to its centroid and a lower bound on the distance to every
 * centroid (n x k floats), carried across passes with each centroid's own
 * drift; a candidate is computed only when neither its lower bound nor half
 * the inter-centroid distance rules it out. The tightest bounds of the
 * family, at O(nk) memory and O(nk) bound updates per pass: it pays at small
 * k. Exactness: exact_bounds.h.
 */
#include "bounded_assign.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace pgkm
{

class ElkanAssign : public BoundedAssign
{
public:
	ElkanAssign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				ThreadPool *pool)
		: BoundedAssign(PGKM_METHOD_ELKAN, x, n, d, kmax, mean, pool)
	{
		u_.resize(n);				/* unwritten: see bounded_assign.h */
		l_.resize((size_t) n * kmax);
		icd_.assign((size_t) kmax * kmax, 0.0f);
		sep_.assign(kmax, 0.0);
		driftf_.assign(kmax, 0.0f);
		keep_.resize(scratch_.size());
		for (auto &v : keep_)
			v.resize(kmax);
	}

protected:
	void		on_centroids(bool, bool) override
	{
		const int32_t k = geo_.k();
		geo_.icd_rows(pool_, [&](int32_t a, const double *lo) {
			float	   *row = &icd_[(size_t) a * kmax_];
			double		m = std::numeric_limits<double>::infinity();
			for (int32_t c = 0; c < k; c++)
			{
				row[c] = to_float_down(lo[c]);
				if (c != a && lo[c] < m)
					m = lo[c];
			}
			sep_[a] = m;
		});
		for (int32_t c = 0; c < k; c++)
			driftf_[c] = to_float_up(geo_.drift(c));
	}

	void		init_bounds(int64_t i, int32_t, double hi, Scratch &s) override
	{
		u_[i] = hi;
		float	   *l = &l_[(size_t) i * kmax_];
		if (s.slow)
			std::fill(l, l + geo_.k(), 0.0f);
		else
			lo_f_array(s.F.data(), geo_.k(), geo_.margins().float_lo(up(s.ex + geo_.err_max())), l);
	}

	void		init_dense(int64_t i, int32_t b, double hi, double lo) override
	{
		u_[i] = hi;
		float	   *l = &l_[(size_t) i * kmax_];
		std::fill(l, l + geo_.k(), to_float_down(lo));
		l[b] = 0.0f;
	}

	bool		would_keep_row(int64_t i) const override
	{
		const int32_t a = label_[i];
		const double u = up(u_[i] + geo_.drift(a));
		return sep_[a] > ExactMargins::sep_limit(u, geo_.margins().thr(u));
	}

	void		assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;

private:
	RowArray<double> u_;
	RowArray<float> l_;		/* n x kmax lower bounds */
	std::vector<float> icd_;	/* kmax x kmax inter-centroid lower bounds */
	std::vector<double> sep_;	/* lower bound of the distance to the nearest other centroid */
	std::vector<float> driftf_;
	std::vector<std::vector<uint8_t>> keep_;	/* per worker: candidates left by the filter */
};

/*
 * One row: lower the bounds by the drifts, filter every candidate with the
 * bounds of the old centroid, then visit the survivors in index order,
 * re-testing each against the current best (its distance tightened on the
 * first survivor, its inter-centroid row once it changes).
 */
void
ElkanAssign::assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	const int32_t k = geo_.k();
	const int worker = (int) (&s - scratch_.data());
	uint8_t    *keep = keep_[worker].data();
	for (int64_t i = r0; i < r1; i++)
	{
		const int32_t a = label_[i];
		float	   *l = &l_[(size_t) i * kmax_];
		double		u = up(u_[i] + geo_.drift(a));
		lower_bounds_drift(l, driftf_.data(), k);
		double		t = m.thr(u);
		out[i - r0] = a;
		if (sep_[a] > ExactMargins::sep_limit(u, t) ||
			bounds_filter(l, &icd_[(size_t) a * kmax_], to_float_up(t),
						  to_float_up(ExactMargins::sep_limit(u, t)), k, keep) == keep[a])
		{
			u_[i] = u;
			continue;
		}
		bool		tight = false;
		int32_t		best = a;
		double		H = u, lo_a = 0;
		float		cf = std::numeric_limits<float>::infinity();
		s.nt.clear();
		for (int32_t c = 0; c < k; c++)
		{
			if (c % 8 == 0 && c + 8 <= k)
			{
				uint64_t	w;
				memcpy(&w, keep + c, 8);
				if (w == 0)
				{
					c += 7;
					continue;
				}
			}
			if (!keep[c] || c == best)
				continue;
			t = m.thr(H);
			if ((double) l[c] > t ||
				(double) icd_[(size_t) best * kmax_ + c] > ExactMargins::sep_limit(H, t))
				continue;
			if (!tight)
			{
				tight = true;
				centre(i, s);
				float		F = dist(s, a);
				double		e = err(s, a);
				lo_a = m.lo_float(F, e);
				s.nt.add(a, lo_a, m.hi_float(F, e), m);
				H = s.nt.best_hi();
				cf = cut(s);
				t = m.thr(H);
				if ((double) l[c] > t ||
					(double) icd_[(size_t) best * kmax_ + c] > ExactMargins::sep_limit(H, t))
					continue;
			}
			float		F = dist(s, c);
			double		e = err(s, c);
			double		lo = m.lo_float(F, e);
			l[c] = to_float_down(lo);
			if (F > cf)
				continue;
			s.nt.add(c, lo, m.hi_float(F, e), m);
			best = s.nt.best();
			H = s.nt.best_hi();
			cf = cut(s);
		}
		if (!tight)
		{
			u_[i] = u;
			continue;
		}
		double		hi;
		int32_t		b = resolve(i, s, &hi);
		u_[i] = hi;
		if (b != a)
			l[a] = to_float_down(lo_a);
		label_[i] = b;
		out[i - r0] = b;
	}
}

std::unique_ptr<BoundedAssign>
make_elkan_assign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				  ThreadPool *pool)
{
	return std::unique_ptr<BoundedAssign>(new ElkanAssign(x, n, d, kmax, mean, pool));
}

}							/* namespace pgkm */
