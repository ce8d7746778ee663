/*
 * exact_bounds.h: the arithmetic that lets the pruned assignment methods
 * (Elkan, Hamerly, Yinyang, sort) return exactly the label of the contract
 *
 *   label(x) = argmin over c of E(x, c), the lowest index on exact ties,
 *   E(x, c) = sqdist_exact(x, c) (exact_distance.h): the fp64 sum over
 *             features in order of ((double) x_j - c_j)^2 (x the float32
 *             row, c the fp64 centroid),
 *
 * while skipping most distance computations. Every bound is an interval on
 * the true Euclidean distance delta(x, c) = ||x - c|| (real arithmetic on the
 * stored values), kept with outward rounding, and a candidate is dropped only
 * when its bounds prove E(x, c) > E(x, a) for a candidate a that stays.
 *
 * Why the margins suffice (u = 2^-53, v = 2^-24, G = gamma_{d+2}(u) =
 * (d+2)u / (1 - (d+2)u), gf = gamma_{d+2}(v)):
 *
 * 1. E vs delta. Each ((double) x_j - c_j) is one rounding, its square one,
 *    and the d partial sums of non-negative terms at most d-1 more, so
 *    |E - delta^2| <= G delta^2 + eta, eta = 3d 2^-1075 (gradual underflow).
 *
 * 2. The prune rule. Let lo_c <= delta(x, c), hi_a >= delta(x, a) and
 *    thr = max(fl(hi_a R), TINY), R = 1 + 2.02 G + 2^-45, TINY = 2^-399.
 *    If lo_c > thr, then delta_c > hi_a R (1 - u) >= delta_a (1 + 2G + 2^-46)
 *    and delta_c > 2^-400, hence delta_c^2 (1 - G) >= delta_a^2 (1 + G +
 *    2^-46) (true for G <= 1/2), and the gap (at least delta_c^2 2^-48)
 *    dwarfs 2 eta: E(x, c) > E(x, a) strictly, so c is neither the argmin
 *    nor tied with it. The separation form: if a lower bound s of
 *    delta(a', c) (a' any centroid, hi' >= delta(x, a')) satisfies
 *    s > up(hi' + thr), then delta_c >= s - delta(x, a') > thr, and the
 *    same argument applies with delta_c > thr in place of lo_c > thr.
 *
 * 3. Float32 distances. The kernels (float_kernels.h) compute F, the float
 *    squared distance between the centred float row x' = fl32(x - m) and the
 *    centred float centroid c' = fl32(c - m), in any order, with or without
 *    FMA: |F - ||x' - c'||^2| <= gf ||x' - c'||^2 + 3d 2^-150 (each of the
 *    at most d+1 roundings on the path of a non-negative term is relative,
 *    underflow is absolute). The triangle inequality moves the interval from
 *    (x', c') to (x, c): delta(x, c) is within e_x + e_c of ||x' - c'||, with
 *    e_x >= ||x' - (x - m)|| and e_c >= ||c' - (c - m)|| (both computed with
 *    outward rounding). Centring on the column means m keeps e_x and e_c
 *    relative to the spread of the data, not to its offset.
 *    A non-finite F (overflow) gives the interval [0, +inf): the candidate
 *    always survives and is settled by E.
 *
 * 4. Outward rounding. A value computed from exact non-negative inputs by a
 *    chain of at most 8 roundings (+, *, /, sqrt) is within (1 +- u)^8 of the
 *    exact one; down() multiplies by 1 - 2^-49 (= 1 - 16u), up() by 1 + 2^-49
 *    and adds 2^-1000 for subnormal results, so down(y) <= exact <= up(y).
 *    A difference is formed only from an already rounded-down minuend and a
 *    rounded-up subtrahend, and rounded down again. Sums of d terms (norms,
 *    drifts) use the d-dependent factors norm_down/norm_up.
 *
 * 5. Near-ties. Among the candidates that were computed, H = min hi; every
 *    candidate with lo <= thr(H) may still be the argmin (the others are
 *    proven worse than H's holder); if more than one remains, E decides.
 */
#ifndef PGKM_EXACT_BOUNDS_H
#define PGKM_EXACT_BOUNDS_H

#include <cstddef>	/* before exact_distance.h, which uses size_t */

#include "exact_distance.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace pgkm
{

/* Rounding helpers of point 4 (see above). */
constexpr double BOUND_TINY = 0x1p-399;

inline double
down(double y)
{
	return y * (1.0 - 0x1p-49) - 0x1p-1000;
}

inline double
up(double y)
{
	return y * (1.0 + 0x1p-49) + 0x1p-1000;
}

/* max(0, a - b) rounded down, a a lower bound, b an upper bound. */
inline double
sub_down(double a, double b)
{
	double		r = down(a - b);
	return r > 0 ? r : 0.0;
}

/* A lower bound as a float, never above y (y >= 0 or NaN-free). */
inline float
to_float_down(double y)
{
	if (!(y > 0x1p-100))
		return 0.0f;
	if (y >= 1e38)
		return 1e38f;
	return (float) (y * (1.0 - 0x1p-21));
}

/* An upper bound as a float, never below y. */
inline float
to_float_up(double y)
{
	if (y >= 1e38 || std::isnan(y))
		return std::numeric_limits<float>::infinity();
	return (float) (y * (1.0 + 0x1p-21)) + 0x1p-120f;
}

/*
 * Float lower bound minus a float upper bound, rounded down in float
 * (two float roundings, each at most 1 + v, covered by 1 - 2^-22 = 1 - 4v);
 * results under 2^-100 (where float rounding stops being relative) are 0.
 */
inline float
sub_down_f(float l, float s)
{
	float		r = (l - s) * (1.0f - 0x1p-22f);
	return r > 0x1p-100f ? r : 0.0f;
}

/*
 * Lower bounds in float for whole arrays of float distances (vectorisable):
 * lo_f(F) <= delta for a finite F, given a <= f_lo (1 - 2^-20) and
 * b >= e: sqrtf and the product round up by at most (1 + v)^2, covered by
 * the 2^-20; the difference rounds by 1 + v, covered by the final 1 - 4v.
 */
struct FloatLo
{
	float		a, b;
};

inline float
lo_f(float F, FloatLo p)
{
	float		r = (__builtin_sqrtf(F) * p.a - p.b) * (1.0f - 0x1p-22f);
	return r > 0x1p-100f ? r : 0.0f;
}

/* The per-d constants of points 1-4. */
class ExactMargins
{
public:
	explicit ExactMargins(int32_t d);

	/* The float kernels' bound holds: (d + 2) v well below 1. */
	static bool usable(int32_t d) { return d >= 1 && d <= (1 << 20); }

	/* The prune threshold of point 2 for the best candidate's upper bound hi. */
	double		thr(double hi) const { return std::max(hi * ratio_, BOUND_TINY); }

	/*
	 * Separation limit of point 2: a lower bound s of delta(a', c) proves c
	 * worse than the best (threshold t) when s > sep_limit(hi', t), hi' an
	 * upper bound of delta(x, a').
	 */
	static double sep_limit(double hi, double t) { return up(hi + t); }

	/*
	 * Interval on delta(x, c) from a float squared distance F and an error
	 * e >= e_x + e_c + 2^-60 (the last term covers the underflow of F: sqrt
	 * of 3d 2^-150 for d <= 2^20).
	 */
	double		lo_float(float F, double e) const
	{
		if (!(F <= std::numeric_limits<float>::max()) || !(e < 1e300))
			return 0.0;
		return sub_down(down(std::sqrt((double) F) * f_lo_), e);
	}
	double		hi_float(float F, double e) const
	{
		if (!(F <= std::numeric_limits<float>::max()) || !(e < 1e300))
			return std::numeric_limits<double>::infinity();
		return up(std::sqrt((double) F) * f_hi_ + e);
	}

	/*
	 * A float pre-filter: F > f_cut(H, e_max) implies lo_float(F, e) >
	 * thr(H) for every e <= e_max (the cut is sqrt'ed back with 2^-30 to
	 * spare for the roundings of lo_float), so such a candidate needs no
	 * interval at all.
	 */
	float		f_cut(double H, double e_max) const
	{
		double		r = (thr(H) + e_max) * (1.0 + 0x1p-30) / f_lo_;
		return to_float_up(r * r);
	}

	/* lo_f's constants for an error e (see FloatLo). */
	FloatLo		float_lo(double e) const
	{
		return {(float) (f_lo_ * (1.0 - 0x1p-19)), to_float_up(e)};
	}

	/* Upper bound on delta(x, c) from E(x, c) (point 1). */
	double		hi_exact(double E) const { return up(std::sqrt(E) * e_hi_ + 0x1p-500); }

	/* Outward rounding of sqrt(sum of d squares) computed in fp64. */
	double		norm_up(double y) const { return y * (1.0 + nu_) + 0x1p-1000; }
	double		norm_down(double y) const
	{
		double		r = y * (1.0 - nu_) - 0x1p-1000;
		return r > 0 ? r : 0.0;
	}

	/* Upper bound of ||fl32(x - m) - (x - m)|| from the norm of the centred float row. */
	double		row_error(double norm_centred) const
	{
		return up(norm_centred * (0x1p-24 * (1.0 + 0x1p-20)) + 0x1p-100);
	}

	int32_t		d() const { return d_; }

private:
	int32_t		d_;
	double		ratio_;			/* R */
	double		f_lo_, f_hi_;	/* 1/sqrt(1 + gf) rounded down, 1/sqrt(1 - gf) rounded up */
	double		e_hi_;			/* 1/sqrt(1 - G) rounded up */
	double		nu_;			/* relative error of a d-term fp64 norm, generous */
};

/*
 * The near-tie set of one row (point 5): the candidates computed so far,
 * then resolve() keeps those that may still be the argmin and lets E decide.
 */
struct Candidate
{
	int32_t		c;
	double		lo, hi;
};

class NearTies
{
public:
	void		clear()
	{
		cand_.clear();
		best_hi_ = std::numeric_limits<double>::infinity();
		best_ = -1;
	}
	/* Records a computed candidate (keeps only those that may still win). */
	void		add(int32_t c, double lo, double hi, const ExactMargins &m)
	{
		if (hi < best_hi_ || (hi == best_hi_ && c < best_))
		{
			best_hi_ = hi;
			best_ = c;
		}
		if (lo <= m.thr(best_hi_))
			cand_.push_back({c, lo, hi});
	}
	double		best_hi() const { return best_hi_; }
	int32_t		best() const { return best_; }

	/*
	 * The exact argmin among the candidates (E for each survivor when more
	 * than one survives); *hi gets an upper bound of its distance, *exact the
	 * number of E evaluations. cent: fp64 centroids, k x d.
	 */
	int32_t		resolve(const float *x, const double *cent, const ExactMargins &m, double *hi,
						int64_t *exact);

private:
	std::vector<Candidate> cand_;
	double		best_hi_ = std::numeric_limits<double>::infinity();
	int32_t		best_ = -1;
};

}							/* namespace pgkm */

#endif							/* PGKM_EXACT_BOUNDS_H */
