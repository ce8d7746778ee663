/*
 * exact_recheck.cpp: the float level of exact_recheck.h, and why it is exact.
 *
 * Notation as in label_bounds.cpp: u = 2^-24, gamma_m = m u / (1 - m u),
 * w = 2^-53, g = gamma^w_{d+2} (fp64). f_c = float(c), D'_c = ||x - f_c||^2.
 *
 * E_c = float_sqdist(x, f_c): 32 lanes, lane l summing the features j = l
 * mod 32 in order (L = ceil(d / 32) terms, a zero-padded tail adds exact
 * zeros), then the lanes added in a tree of depth 5. Each term's
 * t = fl(x_j - f_j) is (x_j - f_j)(1 + delta) (exact when subnormal), so t^2
 * carries 2 factors (1 + delta), the product 1 more (none if contracted to
 * FMA), the lane's chain at most L and the tree 5: every term, >= 0, passes
 * through at most L + 8 roundings, in any order, FMA or not. With
 * g1 = gamma_{L+8} and au = (d + 32) 2^-149 for the products' underflows
 * (2^-150 each; additions are exact when subnormal):
 *   |E_c - D'_c| <= g1 D'_c + 2 au,
 * so, for g1 <= 1/2,
 *   lo_c = sqrt(max(E_c - 2 au, 0)(1 - g1)) <= sqrt(D'_c) <= sqrt((E_c + 2 au)(1 + 2 g1)) = hi_c.
 * By the triangle inequality | ||x - c|| - sqrt(D'_c) | <= ||c - f_c|| <= rho
 * (rho: the largest over the centroids, from the exact differences c - f_c,
 * Sterbenz), so ||x - c|| lies in [lo_c - rho, hi_c + rho].
 * label_bounds.cpp's (i): R_c > R_b (R = sqdist_exact) when
 * ||x - c|| > (1 + 2 g) ||x - b||. So with H = min over the candidates of
 * hi_c + rho, reached at b, a candidate with lo_c - rho > H (1 + 2 g) has
 * R_c > R_b strictly: dropping it changes neither the argmin nor the
 * lowest-index tie rule (b itself, and every exact tie of the argmin, stays).
 * The fp64 steps here round by w each; the factors (1 -+ 2^-40) cover them.
 * A non-finite E_c (overflow, NaN) gives [-inf, inf]: that candidate stays,
 * and if H is infinite every one does.
 */
#include "exact_recheck.h"

#include "exact_distance.h"
#include "label_bounds.h"
#include "simd.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace pgkm
{

static constexpr int LANES = 32;
static constexpr int NV = LANES / 8;
static constexpr double U = 0x1p-24;
static constexpr double W = 0x1p-53;

/* E_c above: sum of (x_j - f_j)^2 over 32 lanes, then a tree of depth 5. */
PGKM_TARGET_CLONES static float
float_sqdist(const float *x, const float *f, int32_t d)
{
	vf8			acc[NV] = {};
	int32_t		j = 0;
	for (; j + LANES <= d; j += LANES)
		for (int v = 0; v < NV; v++)
		{
			vf8			xv, fv;
			memcpy(&xv, x + j + v * 8, sizeof(xv));
			memcpy(&fv, f + j + v * 8, sizeof(fv));
			const vf8	t = xv - fv;
			acc[v] += t * t;
		}
	if (j < d)
	{
		float		xt[LANES] = {}, ft[LANES] = {};
		memcpy(xt, x + j, sizeof(float) * (d - j));
		memcpy(ft, f + j, sizeof(float) * (d - j));
		for (int v = 0; v < NV; v++)
		{
			vf8			xv, fv;
			memcpy(&xv, xt + v * 8, sizeof(xv));
			memcpy(&fv, ft + v * 8, sizeof(fv));
			const vf8	t = xv - fv;
			acc[v] += t * t;
		}
	}
	const vf8	s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

void
ExactRecheck::set(const double *cent, const float *centf, int32_t k, int32_t d)
{
	const double rho2 = float_copy_radius2(cent, centf, k, d);
	const int32_t m = (d + LANES - 1) / LANES + 8;
	g1_ = rounding_gamma(m, U);
	au_ = (d + 32.0) * 0x1p-149;
	const double g = rounding_gamma(d + 2, W);
	band_ = (1 + 2 * g) * (1 + BOUND_SLACK);	/* BOUND_SLACK: the bracket's own fp64 roundings */
	/* the fp64 sum of squares above: gamma^w_{d+1} relatively */
	rho_ = std::sqrt(rho2 * (1 + 2 * (d + 2) * W)) * (1 + BOUND_SLACK);
	if (!(rho_ <= BOUND_HUGE_V) || g1_ > 0.5)
		rho_ = std::numeric_limits<double>::infinity();
}

int32_t
ExactRecheck::nearest(const float *x, const double *cent, const float *centf, int32_t d,
					  const int32_t *cand, int32_t n, std::vector<int32_t> &cand_out,
					  std::vector<double> &vals) const
{
	if (n <= 1 || !(rho_ <= BOUND_HUGE_V))
		return nearest_exact(x, cent, d, cand, n);
	vals.resize(n);
	double		h = std::numeric_limits<double>::infinity();
	for (int32_t i = 0; i < n; i++)
	{
		const int32_t c = cand ? cand[i] : i;
		const float e = float_sqdist(x, centf + (size_t) c * d, d);
		vals[i] = e <= FLT_MAX ? (double) e : std::numeric_limits<double>::infinity();
		const double hi = (std::sqrt((vals[i] + 2 * au_) * (1 + 2 * g1_)) + rho_) * (1 + BOUND_SLACK);
		h = std::min(h, hi);
	}
	const double limit = h * band_;
	cand_out.clear();
	for (int32_t i = 0; i < n; i++)
	{
		const double lo = vals[i] <= DBL_MAX
			? std::sqrt(std::max(vals[i] - 2 * au_, 0.0) * (1 - g1_)) * (1 - BOUND_SLACK) - rho_
			: -std::numeric_limits<double>::infinity();
		if (!(lo > limit))
			cand_out.push_back(cand ? cand[i] : i);
	}
	if (cand_out.size() == 1)
		return cand_out[0];
	return nearest_exact(x, cent, d, cand_out.data(), (int32_t) cand_out.size());
}

}							/* namespace pgkm */
