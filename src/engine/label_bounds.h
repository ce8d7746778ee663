/*
 * label_bounds.h: when does a float32 argmin give the exact label?
 *
 * The CPU kernels rank centroids by a float32 value v_c per (row, centroid)
 * (lloyd_assign.cpp). The label is defined in fp64 (exact_distance.h). The
 * bounds below, derived in label_bounds.cpp from the float error analysis,
 * say how far apart two float values must be for their exact distances to
 * be ordered the same way, strictly: a row whose runner-up float value is
 * further than that from the best needs nothing more; otherwise the
 * centroids within that distance of the best are decided in fp64.
 */
#ifndef PGKM_LABEL_BOUNDS_H
#define PGKM_LABEL_BOUNDS_H

#include <cmath>
#include <cstdint>
#include <limits>

namespace pgkm
{

/* The tests' own fp64 rounding, with room; beyond BOUND_HUGE_V a float overflow is near. */
constexpr double BOUND_SLACK = 0x1p-40;
constexpr double BOUND_HUGE_V = 0x1p120;

/* gamma_m = m unit / (1 - m unit): the relative error of m roundings to `unit` (2^-24 float, 2^-53 fp64). */
inline double
rounding_gamma(double m, double unit)
{
	return m * unit / (1 - m * unit);
}

/*
 * a and b of label_bounds.cpp's lemma (ii) for a d-feature sqdist_exact:
 * c may beat b only if L_c <= a U_b + b Delta^2. Shared with the GPU plugin,
 * whose value forms differ (cuda/label_bound.cpp).
 */
void		label_lemma_constants(int32_t d, double *a, double *b);

/*
 * max over the k centroids of ||c - centf_c||^2 (k x d each, centf = float(c):
 * the differences are exact), summed in fp64 (relative error gamma^w_d).
 */
double		float_copy_radius2(const double *cent, const float *centf, int32_t k, int32_t d);

/*
 * The direct form: v_c = fl(sum_j fl(fl(x_j - cf_j)^2)), cf = float(c),
 * features in order (any order, with or without FMA, is covered).
 */
struct DirectFormBound
{
	double		a1 = 0;			/* centroid c may beat the best b only if */
	double		b0 = 0;			/* v_c <= a1 * v_b + b0 */

	/* From the fp64 centroids and their float copies (k x d each); b0 = +inf: no bound. */
	void		set(const double *cent, const float *centf, int32_t k, int32_t d);
};

/*
 * The GEMM form: v_c = fl(n_c - 2 fl(x'.c')), x' = fl(x - m) and
 * c' = float(c - m) centred on the float vector m, n_c = fl(||c'||^2).
 */
struct GemmFormBound
{
	/* centroid c may beat b only if v_c - v_b <= kv v_b + kx X^2 + kxc X + k0, X^2 = x2_up * fl(||x'||^2) */
	double		kv = 0, kx = 0, kxc = 0, k0 = 0;
	double		x2_up = 0;

	/*
	 * From the fp64 centroids, the float centring vector, the float c' (k x d)
	 * and n_c. depth: roundings a dot product and n_c pass through (at least
	 * 2; 0: d, any order of summation).
	 */
	void		set(const double *cent, const float *mean, const float *centc, const float *cnorm,
					int32_t k, int32_t d, int32_t depth = 0);
	/* The largest float value that may still beat best, for a row with fl(||x'||^2) = x2. */
	double		limit(float best, float x2) const
	{
		const double vb = best, xx = (double) x2 * x2_up;
		const bool	finite = (std::fabs(vb) <= BOUND_HUGE_V) & (xx <= BOUND_HUGE_V) & (k0 <= BOUND_HUGE_V);
		const double g = kv * vb + kx * xx + kxc * std::sqrt(xx) + k0;
		const double lim = vb + g * (1 + BOUND_SLACK) + std::fabs(vb) * BOUND_SLACK;
		return finite ? lim : std::numeric_limits<double>::infinity();	/* no branch: vectorises */
	}
};

}							/* namespace pgkm */

#endif							/* PGKM_LABEL_BOUNDS_H */
