/*
 * label_bounds.cpp: the error bounds of label_bounds.h, and why they hold.
 *
 * Notation: u = 2^-24, gamma_m = m u / (1 - m u); w = 2^-53 and g_m the same
 * for fp64. A float operation result is (exact)(1 + delta), |delta| <= u,
 * plus, when it underflows, an absolute error below 2^-150 (additions and
 * subtractions are then exact). A sum of m products, in ANY order, with or
 * without FMA (so OpenBLAS's sgemm too) is within gamma_m * sum |products|
 * of the exact value; a sum of m non-negative terms with p roundings each is
 * within gamma_{m+p} of it, relatively.
 *
 * The label's distance: R_c = sqdist_exact(x, c) = D_c (1 + theta), |theta|
 * <= g := g_{d+2}, D_c = ||x - c||^2 exactly. So R_c > R_b holds when
 * sqrt(D_c) > (1 + 2 g) sqrt(D_b)   (i)
 * since sqrt((1 + g) / (1 - g)) <= 1 + 2 g.
 *
 * Both forms give, per centroid, bounds L_c <= ||y - c~||^2 <= U_c for some
 * float-side vectors y and c~ with | ||y - c~|| - ||x - c|| | <= Delta. Then
 * (i) holds if sqrt(L_c) - Delta > (1 + 2g)(sqrt(U_b) + Delta), which holds if
 *   L_c > a U_b + b Delta^2,   a = (1 + e)(1 + 2g)^2,  b = (1 + 1/e) 4 (1 + g)^2   (ii)
 * for any e > 0, by (p + q)^2 <= (1 + e) p^2 + (1 + 1/e) q^2. e = 2^-16 keeps
 * both slacks at the size of the float rounding itself. Centroids failing
 * (ii) against the float argmin b are recomputed in fp64 (exact_distance.h);
 * every other centroid has R_c > R_b strictly, so the result is the exact
 * label, lowest index on exact ties.
 *
 * Direct form. cf_c = float(c); D'_c = ||x - cf_c||^2. All terms are >= 0,
 * each with 3 roundings, d - 1 additions:
 *   |v_c - D'_c| <= gamma_{d+2} D'_c + a_u,  a_u = 2 d 2^-149 (underflow).
 * So L_c = (v_c - a_u) / (1 + gamma), U_b = (v_b + a_u) / (1 - gamma), and
 * Delta = rho = max_c ||c - cf_c|| (computed exactly: c - cf_c is exact by
 * Sterbenz). (ii) becomes v_c > a1 v_b + b0 with
 *   a1 = a (1 + gamma) / (1 - gamma),  b0 = a1 a_u + (1 + gamma) b rho^2 + a_u.
 *
 * GEMM form. x' = fl(x - m) = (x - m)(1 + delta_j) per feature, so with
 * x~ = x - m, ||x' - x~|| <= u ||x~|| <= u' X, X = ||x'||, u' = u / (1 - u).
 * c' = float(c - m) (one fp64 and one float rounding of c - m); rho =
 * max_c ||c' - (c - m)|| is computed in fp64. So Delta = u' X + rho bounds
 * | ||x' - c'|| - ||x - c|| |. The float value approximates
 * ||c'||^2 - 2 x'.c' = ||x' - c'||^2 - X^2:
 *   n_c = ||c'||^2 (1 + theta_d); dot = x'.c' + eta, |eta| <= gamma_d X C;
 *   v_c = (n_c - 2 dot)(1 + delta); C = max ||c'||; so, as in the issue,
 *   |v_c - (||c'||^2 - 2 x'.c')| <= gamma_{d+1} (||c'||^2 + 2 X ||c'||) + a_u
 *                                 <= gamma_{d+1} (C^2 + 2 X C) + a_u =: E,
 * a_u = (2 d + 2) 2^-149. With L_c = v_c + X^2 - E and U_b = v_b + X^2 + E,
 * (ii) is v_c - v_b > (a - 1)(v_b + X^2) + (a + 1) E + b Delta^2, and
 * Delta^2 <= 2 u'^2 X^2 + 2 rho^2, so it holds when
 *   v_c - v_b > kv v_b + kx X^2 + kxc X + k0,
 *   kv = a - 1,  kx = (a - 1) + 2 b u'^2,  kxc = 2 (a + 1) gamma_{d+1} C,
 *   k0 = (a + 1)(gamma_{d+1} C^2 + a_u) + 2 b rho^2.
 * X is kept apart (one square root per row) rather than bounding 2 X C by
 * X^2 + C^2: centroids, being means, are often far shorter than rows, and
 * at large d the gamma term dominates the whole bound.
 * Blocked sums: when the dot products are summed in blocks (each from 0,
 * then added to a running sum) and n_c is rounded once from fp64, every term
 * passes through at most m roundings, m = the block length plus the number
 * of blocks (argmin_kernels.h), and m + 1 replaces d + 1 in gamma above
 * (the error analysis is term by term: m roundings of any order bound it).
 * X^2 itself is a float sum of d squares (any order): the true value is at
 * most fl(X^2) / (1 - gamma_d), which is what x2_up applies.
 *
 * The GEMM test runs in fp64 on float inputs, so its own rounding is below
 * 2^-50 relatively; limit() adds 2^-40. Values above 2^120 (an overflow is
 * near) or NaN give +inf: every centroid is decided in fp64. The direct test
 * runs in float in the kernel's lanes (lloyd_assign.cpp rounds a1 and b0 up
 * to cover that).
 */
#include "label_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pgkm
{

static constexpr double U = 0x1p-24;
static constexpr double W = 0x1p-53;
static constexpr double EPS = 0x1p-16;	/* e of (ii) */
static constexpr double SLACK = BOUND_SLACK;
static constexpr double HUGE_V = BOUND_HUGE_V;

static double
gamma_f(double m)
{
	return rounding_gamma(m, U);
}

void
label_lemma_constants(int32_t d, double *a, double *b)
{
	const double g = rounding_gamma(d + 2, W);
	*a = (1 + EPS) * (1 + 2 * g) * (1 + 2 * g);
	*b = (1 + 1 / EPS) * 4 * (1 + g) * (1 + g);
}

double
float_copy_radius2(const double *cent, const float *centf, int32_t k, int32_t d)
{
	double		rho2 = 0;
	for (int32_t c = 0; c < k; c++)
	{
		double		s = 0;
		for (int32_t j = 0; j < d; j++)
		{
			const double t = cent[(size_t) c * d + j] - (double) centf[(size_t) c * d + j];
			s += t * t;
		}
		rho2 = std::max(rho2, s);
	}
	return rho2;
}

void
DirectFormBound::set(const double *cent, const float *centf, int32_t k, int32_t d)
{
	double		rho2 = float_copy_radius2(cent, centf, k, d);
	rho2 *= 1 + SLACK;			/* the fp64 sum above */
	double		a, b;
	label_lemma_constants(d, &a, &b);
	const double gm = gamma_f(d + 2);
	const double au = 2.0 * d * 0x1p-149;
	a1 = a * (1 + gm) / (1 - gm);
	b0 = a1 * au + (1 + gm) * b * rho2 + au;
}

void
GemmFormBound::set(const double *cent, const float *mean, const float *centc, const float *cnorm,
				   int32_t k, int32_t d, int32_t depth)
{
	const int32_t m = depth > 0 ? std::max(depth, 2) : d;
	double		rho2 = 0, c2 = 0;
	for (int32_t c = 0; c < k; c++)
	{
		double		s = 0;
		for (int32_t j = 0; j < d; j++)
		{
			const double t = (double) centc[(size_t) c * d + j] -
				(cent[(size_t) c * d + j] - (double) mean[j]);
			s += t * t;
		}
		rho2 = std::max(rho2, s);
		c2 = std::max(c2, (double) cnorm[c] / (1 - gamma_f(d)));
	}
	/* c - m above is rounded in fp64: at most w |c - m| per feature, i.e. w C in norm */
	const double rho = std::sqrt(rho2) * (1 + SLACK) + 2 * W * std::sqrt(c2);
	double		a, b;
	label_lemma_constants(d, &a, &b);
	const double g1 = gamma_f(m + 1);
	const double up = U / (1 - U);
	const double au = (2.0 * d + 2) * 0x1p-149;
	kv = a - 1;
	kx = (a - 1) + 2 * b * up * up;
	kxc = 2 * (a + 1) * g1 * std::sqrt(c2);
	k0 = (a + 1) * (g1 * c2 + au) + 2 * b * rho * rho;
	x2_up = (1 + SLACK) / (1 - gamma_f(d));
	if (!(c2 <= HUGE_V))
		k0 = std::numeric_limits<double>::infinity();
}


}							/* namespace pgkm */
