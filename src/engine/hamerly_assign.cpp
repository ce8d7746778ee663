/*
 * hamerly_assign.cpp: Hamerly's method (Hamerly 2010): per row one upper
 * bound on the distance to its centroid and one lower bound on the distance
 * to every other centroid, carried across passes with the drifts; a row is
 * skipped when the upper bound is below the lower bound or below the
 * distance from its centroid to the nearest other one minus itself. O(n)
 * memory; pays from moderate k on well-separated data, and late in any run.
 * Exactness: exact_bounds.h.
 */
#include "bounded_assign.h"

#include <limits>

namespace pgkm
{

class HamerlyAssign : public BoundedAssign
{
public:
	HamerlyAssign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				  ThreadPool *pool)
		: BoundedAssign(PGKM_METHOD_HAMERLY, x, n, d, kmax, mean, pool)
	{
		u_.assign(n, 0.0);
		l_.assign(n, 0.0);
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

	void		assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;

private:
	/* Does a row with bounds u (own centroid a) and l keep its label? */
	bool		keeps(int32_t a, double u, double l) const
	{
		const double t = geo_.margins().thr(u);
		return l > t || sep_[a] > ExactMargins::sep_limit(u, t);
	}

	std::vector<double> u_, l_;
	std::vector<double> sep_;	/* lower bound of the distance to the nearest other centroid */
};

void
HamerlyAssign::assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	for (int64_t i = r0; i < r1; i++)
	{
		const int32_t a = label_[i];
		double		u = up(u_[i] + geo_.drift(a));
		double		l = sub_down(l_[i], geo_.drift_max_except(a));
		l_[i] = l;
		if (!keeps(a, u, l))
		{
			centre(i, s);
			float		F = dist(s, a);
			u = m.hi_float(F, err(s, a));
		}
		if (keeps(a, u, l))
		{
			u_[i] = u;
			out[i - r0] = a;
			continue;
		}
		double		hi;
		int32_t		b = full_search(i, s, &hi);
		init_bounds(i, b, hi, s);
		label_[i] = b;
		out[i - r0] = b;
	}
}

std::unique_ptr<BoundedAssign>
make_hamerly_assign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
					ThreadPool *pool)
{
	return std::unique_ptr<BoundedAssign>(new HamerlyAssign(x, n, d, kmax, mean, pool));
}

}							/* namespace pgkm */
