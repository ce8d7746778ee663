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
 *
 * 6. GEMM-form float values. The blocked kernels (gemm_rows_block in
 *    float_kernels.h, Lloyd's tiled kernel in argmin_kernels.h) compute
 *    V = fl(n_c - 2 fl(x'.c')), n_c = fl(||c'||^2), in any order, with or
 *    without FMA. With X = ||x'|| and C >= max ||c'||, label_bounds.cpp's
 *    analysis gives |V - (||c'||^2 - 2 x'.c')| <= gamma_{d+1}(v) (C^2 +
 *    2 X C) + 4 (d + 1) 2^-149 <= gf (C^2 + 2 X C) + 2^-100 =: Eg (the
 *    last term covers underflow for d <= 2^20). Since ||x' - c'||^2 =
 *    ||c'||^2 - 2 x'.c' + X^2 exactly, for X2lo <= X^2 <= X2hi
 *      V - Eg + X2lo <= ||x' - c'||^2 <= V + Eg + X2hi,
 *    and point 3's triangle inequality moves this to delta(x, c) with the
 *    same e_x + e_c. X^2 comes either from the fp64 sum of the squares of
 *    x' (exact squares, d roundings: norm_down/norm_up), or from the
 *    kernel's float sum x2 of them (any order): |x2 - X^2| <= gamma_d(v) X^2
 *    + d 2^-149. V may be negative, so the sums are not chains of
 *    non-negative values (point 4): s = fl(fl(V -+ Eg) + X2) is within
 *    2u (1 + u) (|V| + Eg + X2) of the real sum, and the code moves it out
 *    by 2^-50 (|V| + Eg + X2) >= that (the slack's own two roundings are
 *    covered: 8u (1 - u)^2 > 2u (1 + u)); what remains is non-negative and
 *    rounded with down()/up(). lo(V) is non-decreasing in V in real
 *    arithmetic and computed rounded down, so lo(m) bounds every centroid
 *    whose V >= m (a group minimum bounds the group).
 *    The cut: if V > vcut(t) >= (t + e)^2 + Eg - X2lo (e >= e_x + e_c), then
 *    ||x' - c'||^2 > (t + e)^2, so delta(x, c) > t: with t = thr(H) the
 *    candidate is proven worse (point 2) without an interval.
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

/* Inlined into the vectorised loops of float_kernels.cpp (target_clones), whatever the heuristics. */
#define PGKM_BOUND_INLINE inline __attribute__((always_inline))

/* Rounding helpers of point 4 (see above). */
constexpr double BOUND_TINY = 0x1p-399;

PGKM_BOUND_INLINE double
down(double y)
{
	return y * (1.0 - 0x1p-49) - 0x1p-1000;
}

PGKM_BOUND_INLINE double
up(double y)
{
	return y * (1.0 + 0x1p-49) + 0x1p-1000;
}

/* max(0, a - b) rounded down, a a lower bound, b an upper bound. */
PGKM_BOUND_INLINE double
sub_down(double a, double b)
{
	double		r = down(a - b);
	return r > 0 ? r : 0.0;
}

/* A lower bound as a float, never above y (y >= 0 or NaN-free). */
PGKM_BOUND_INLINE float
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
	static PGKM_BOUND_INLINE double row_error(double norm_centred)
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

/* What point 6 needs of one row: X^2 between x2lo and x2hi, Eg, and e_x. */
struct GemmRow
{
	double		x2lo, x2hi, eg, ex;
};

/*
 * Point 6 for one set of centroids: C (an upper bound of max ||c'||) and
 * gf; then per row a GemmRow, and intervals and cuts for GEMM-form values.
 */
class GemmMargins
{
public:
	explicit GemmMargins(int32_t d);

	/* c_up >= max ||c'|| (+inf: no value is bounded). */
	void		set_c(double c_up) { c_ = c_up; }
	double		c_up() const { return c_; }

	/* From the fp64 sum n2 of the squares of x' (centre()'s) and e_x. */
	GemmRow		row_exact(double n2, double ex) const
	{
		return row(m_.norm_down(n2), m_.norm_up(n2), ex);
	}
	/* From the float sum x2 of the squares of x' (the tiled kernel's); eg = +inf if not finite. */
	PGKM_BOUND_INLINE GemmRow row_float(float x2) const
	{
		GemmRow		r;
		row_float_v(x2, x2_abs_, inv_lo_, inv_hi_, g_, c_, &r);
		return r;
	}
	/* row_float with the constants spelled out (for vectorised loops: no loads through this). */
	static PGKM_BOUND_INLINE void row_float_v(double x, double x2_abs, double inv_lo, double inv_hi,
											  double g, double c, GemmRow *r)
	{
		const double l = down((x - x2_abs) * inv_lo);
		const double h = up((x + x2_abs) * inv_hi);
		r->x2lo = l > 0 ? l : 0.0;
		r->x2hi = h < 1e300 ? h : std::numeric_limits<double>::infinity();	/* x not finite */
		const double xu = up(std::sqrt(r->x2hi));
		r->eg = eg_of(xu, g, c);
		r->ex = ExactMargins::row_error(xu);
	}
	double		x2_abs() const { return x2_abs_; }
	double		inv_lo() const { return inv_lo_; }
	double		inv_hi() const { return inv_hi_; }
	double		g() const { return g_; }

	/*
	 * A lower bound of delta(x, c) from V, e >= e_x + e_c; 0 when V or the
	 * row is not finite. Branch-free (a negative square gives NaN, which
	 * the last test turns into 0), so that loops over it vectorise.
	 */
	PGKM_BOUND_INLINE double lo(const GemmRow &r, float V, double e) const
	{
		return lo_v(V, r.x2lo, r.eg, e);
	}
	static PGKM_BOUND_INLINE double lo_v(double v, double x2lo, double eg, double e)
	{
		const double s = (v - eg) + x2lo;
		const double q = down(s - (std::fabs(v) + eg + x2lo) * 0x1p-50);
		/* selects one at a time (no mixed masks, which GCC will not vectorise) */
		double		l = down(down(std::sqrt(q)) - e);
		l = l > 0 ? l : 0.0;
		l = std::fabs(v) < 1e300 ? l : 0.0;	/* V finite, as a float */
		return eg < 1e300 ? l : 0.0;
	}
	/* An upper bound of delta(x, c) from V, e >= e_x + e_c; +inf when not finite. */
	PGKM_BOUND_INLINE double hi(const GemmRow &r, float V, double e) const
	{
		return hi_v(V, r.x2hi, r.eg, e);
	}
	static PGKM_BOUND_INLINE double hi_v(double v, double x2hi, double eg, double e)
	{
		const double s = (v + eg) + x2hi;
		const double q = up(s + (std::fabs(v) + eg + x2hi) * 0x1p-50);
		const double inf = std::numeric_limits<double>::infinity();
		double		h = up(up(std::sqrt(q > 0 ? q : 0.0)) + e);
		h = std::fabs(v) < 1e300 ? h : inf;
		h = eg < 1e300 ? h : inf;
		h = x2hi < 1e300 ? h : inf;
		return e < 1e300 ? h : inf;
	}
	/* The cut of point 6: a float V > vcut(r, t, e) has delta(x, c) > t for every e_c <= e - e_x. */
	float		vcut(const GemmRow &r, double t, double e) const
	{
		const double a = up(t + e), a2 = up(a * a);
		const double y = ((a2 + r.eg) - r.x2lo) + (a2 + r.eg + r.x2lo) * 0x1p-50;
		return float_at_least(y);
	}

	/* The smallest float not below y (+inf beyond float; NaN gives +inf). */
	static float float_at_least(double y)
	{
		if (!(y <= std::numeric_limits<float>::max()))
			return std::numeric_limits<float>::infinity();
		float		f = (float) y;
		if ((double) f < y)
			f = std::nextafter(f, std::numeric_limits<float>::infinity());
		return f;
	}

private:
	GemmRow		row(double x2lo, double x2hi, double ex) const
	{
		return {x2lo, x2hi, eg_of(up(std::sqrt(x2hi)), g_, c_), ex};
	}
	/* Eg of point 6 for X <= xu. */
	static PGKM_BOUND_INLINE double eg_of(double xu, double g, double c)
	{
		return up(g * up(up(c * c) + up(2.0 * xu * c))) + 0x1p-100;
	}

	ExactMargins m_;
	double		g_;				/* gf of point 3 */
	double		x2_abs_;		/* d 2^-149, the underflow of a float sum of d squares */
	double		inv_lo_, inv_hi_;	/* 1 / (1 + gf) rounded down, 1 / (1 - gf) rounded up */
	double		c_ = std::numeric_limits<double>::infinity();
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
