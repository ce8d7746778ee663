/*
 * nearest.cpp: the nearest centroid to an fp64 point (nearest.h).
 *
 * Why not the plain sum of squares: features (1e200, 100) against
 * centroids (0, 0.5) and (0, 100.5) square to 1e400 (infinity) for both,
 * and even below overflow a huge common term absorbs the difference. The
 * pairwise difference cancels the common term exactly (a_j = b_j gives 0),
 * and scaling each term by a power of two keeps every intermediate finite.
 * Accuracy: each term carries at most four fp64 roundings of
 * |a_j - b_j| (|a_j + b_j| + 2 |x_j|) and each addition one, so the sign is
 * right whenever the two squared distances differ by more than about
 * (d + 4) 2^-53 times the sum of those; an exact tie such as x at the
 * midpoint of a and b computes exactly 0.
 */
#include "nearest.h"

#include <algorithm>
#include <cmath>

namespace pgkm
{

/*
 * A running sum kept as m 2^e with |m| < 1 after each addition, so any
 * number of terms of any size can be added without overflow. Terms far
 * below the sum (2^-1074 of it) vanish, as they would in any fp64 sum.
 */
class ScaledSum
{
public:
	void		add(double m, int e)	/* adds m 2^e, |m| < 2 */
	{
		if (m == 0)
			return;
		if (m_ == 0 || e > e_)
		{
			m_ = std::ldexp(m_, e_ - e) + m;
			e_ = e;
		}
		else
			m_ += std::ldexp(m, e - e_);
		int			ex;
		m_ = std::frexp(m_, &ex);
		e_ += ex;
	}
	int			sign() const { return (m_ > 0) - (m_ < 0); }
	double		value() const { return std::ldexp(m_, e_); }	/* +-inf beyond range */

private:
	double		m_ = 0;
	int			e_ = 0;
};

int
compare_distances(const double *x, const double *a, const double *b, int32_t d)
{
	ScaledSum	sum;
	for (int32_t j = 0; j < d; j++)
	{
		if (a[j] == b[j])
			continue;			/* exactly 0, however large x_j is */
		/*
		 * Each factor scaled below 1 by its own power of two (exact, but for
		 * bits far below the factor's size): p by a_j and b_j only, so a
		 * huge x_j cannot wash out a tiny a_j - b_j.
		 */
		const int	sp = std::ilogb(std::max(std::fabs(a[j]), std::fabs(b[j]))) + 1;
		const int	sq = std::ilogb(std::max({std::fabs(a[j]), std::fabs(b[j]), std::fabs(x[j])})) + 2;
		const double p = std::ldexp(a[j], -sp) - std::ldexp(b[j], -sp);	/* |p| < 2 */
		const double q = (std::ldexp(a[j], -sq) + std::ldexp(b[j], -sq)) - 2 * std::ldexp(x[j], -sq);	/* |q| < 2 */
		int			ex;
		const double t = std::frexp(p * q, &ex);
		sum.add(t, ex + sp + sq);
	}
	return sum.sign();
}

int32_t
nearest_centroid(const double *centroids, int32_t k, int32_t d, const double *x)
{
	int32_t		best = 0;
	for (int32_t c = 1; c < k; c++)
		if (compare_distances(x, centroids + (size_t) c * d, centroids + (size_t) best * d, d) < 0)
			best = c;
	return best;
}

double
squared_distance(const double *x, const double *c, int32_t d)
{
	ScaledSum	sum;
	for (int32_t j = 0; j < d; j++)
	{
		double		t = x[j] - c[j];
		int			ex;
		double		m;
		if (std::isfinite(t))
			m = std::frexp(t, &ex);
		else
		{
			m = std::frexp(0.5 * x[j] - 0.5 * c[j], &ex);	/* exact halving at that size */
			ex++;
		}
		sum.add(m * m, 2 * ex);
	}
	return sum.value();
}

}							/* namespace pgkm */
