/*
 * label_bound.cpp: the constants of label_bound.h, and why they hold.
 *
 * Notation as in src/engine/label_bounds.cpp (whose lemma (ii) and bounds
 * this reuses): u = 2^-24, gamma_m = m u / (1 - m u), w = 2^-53; R_c =
 * sqdist_exact(x, c), D_c = ||x - c||^2. Lemma (ii): if float-side vectors
 * y, c~ satisfy | ||y - c~|| - ||x - c|| | <= Delta for every c, and
 * L_c <= ||y - c~||^2 <= U_c, then L_c > a U_b + b Delta^2 implies R_c > R_b
 * strictly (a, b from label_lemma_constants). No kernel is compiled with
 * fast math, so our own float operations round to nearest with gradual
 * underflow; cuBLAS's may flush subnormals, so FORM_SHIFTED allows 2^-126 per
 * operation.
 *
 * DIRECT (fused.cu, d < 16): v_c = fl(sum_j fl(fl(x_j - cf_j)^2)), cf =
 * float(c), features in order without contraction (__fsub_rn, __fmul_rn,
 * __fadd_rn; the first term is not added to 0, which changes no value):
 * the operations of the CPU's direct form, so DirectFormBound holds as it is.
 *
 * CENTRED (DOT in fused.cu, TILED in tiled.cu): x' = fl(x - mu) in the
 * kernel, c' = float(c - mu) with c - mu in fp64 (pass.cu), as on the CPU.
 * The kernels compute v_c = fl(bias_c + s) where s is -2 x'.c' summed in
 * some order with FMAs (DOT: one chain starting from bias_c and one from 0,
 * then added; TILED: one chain, then fmaf(-2, acc, bias_c)), and bias_c =
 * float(fp64 sum of c'^2), within (u + 2^-50) <= gamma_d of ||c'||^2. So
 *   |v_c - (||c'||^2 - 2 x'.c')| <= gamma_{d+1}(||c'||^2 + 2 X ||c'||) + a_u,
 * the CPU's GEMM-form error (a sum of d products and one more term with one
 * rounding each, in any order), and GemmFormBound holds with n_c = bias_c
 * (bias_c >= (1 - gamma_d) ||c'||^2, as its C^2 bound needs). x2 is the
 * kernel's float sum of x'^2 in any order; its x2_up covers it.
 *
 * SHIFTED (gemm.cu, both products): the device keeps x' = x - s, s the
 * column shifts of exact_shift (below), so x' is exact and the stored row is
 * x = x' + s, also exact in float: the fp64 decision reads it back. cuBLAS
 * computes p_c ~ x'.c' with c' = float(c - s) (c - s in fp64), and the argmin
 * kernel adds v_c = fl(b_c + t_c), t_c = -2 p_c (exact scaling), b_c =
 * float(fp64 ||c'||^2). Target: ||x' - c'||^2 = Y^2 + V_c, Y = ||x'||, V_c =
 * ||c'||^2 - 2 x'.c', and | ||x' - c'|| - ||x - c|| | <= rho =
 * max_c ||c' - (c - s)||. With C = max ||c'||:
 *   - b_c: fp64 (d + 1 roundings: g64 = gamma^w_{d+1}) then one float
 *     rounding: |b_c - ||c'||^2| <= (u (1 + g64) + g64) C^2;
 *   - p_c: |p_c - x'.c'| <= delta sum_j |x'_j||c'_j| <= delta Y C;
 *   - the add: u |b_c + t_c| <= u (1 + u)(1 + g64) C^2 + 2 u (1 + delta) Y C;
 * so |v_c - V_c| <= E = gb C^2 + 2 gx Y C + a_u, gb the sum of the C^2
 * factors above, gx = delta + u (1 + delta), a_u = (6d + 8) 2^-126. With
 * L_c = v_c + Y^2 - E, U_b = v_b + Y^2 + E, (ii) is
 *   v_c - v_b > (a - 1)(v_b + Y^2) + (a + 1) E + b rho^2,
 * i.e. kv = kx = a - 1, kxc = 2 (a + 1) gx C, k0 = (a + 1)(gb C^2 + a_u) +
 * b rho^2, with x2 >= Y^2 computed per row in fp64 and rounded up
 * (row_norms in elementwise.cu), x2_up = 1. A column without a large offset keeps s = 0
 * and loses nothing by it: its values are small next to their spread.
 * delta of the products:
 *   - fp32 SGEMM (CUBLAS_DEFAULT_MATH, no tensor cores): a sum of d products
 *     in any order, with or without FMA, split-K or not: delta = gamma_d.
 *   - 3xTF32 (gemm.cu): x = hx + lx, c' = hc + lc with h = tf32_hi (exact in
 *     TF32, |l| <= 2^-11 |v|, |h| <= (1 + 2^-11)|v|), l exact in fp32; the
 *     tensor cores take l rounded to TF32 (|l~ - l| <= 2^-10 |l|). The three
 *     products hc.hx, lc~.hx, hc.lx~ are exact (11 x 11 bits); lc.lx is
 *     left out (<= 2^-22 |x_j||c'_j|), the l~ roundings cost <= 2^-20
 *     (1 + 2^-11) |x_j||c'_j|. The accumulation is not IEEE: we assume each
 *     step (one product or partial added, or a block of B >= 2 products
 *     aligned to the largest and truncated, counted as B steps) errs by at
 *     most 4u of the sum of its operands' magnitudes (truncation without
 *     guard bits: (B + 2) 2u <= 4u B), d steps per product plus the two
 *     beta = 1 epilogue adds, so gamma^{4u}_{d+2} of the products'
 *     magnitudes (<= (1 + 2^-9) sum |x_j||c'_j|). delta = that sum.
 * The limit itself is evaluated in fp64 on the device (rounding < 2^-50
 * relative); the 2^-40 slack of label_bound.h covers it.
 *
 * TF32 (one product, PRODUCT_TF32) is the GPU tests' negative control:
 * FORM_NONE, its labels are never decided.
 */
#include "label_bound.h"

#include "label_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pgkm_cuda
{

static constexpr double U = 0x1p-24;
static constexpr double W = 0x1p-53;
static constexpr double SLACK = pgkm::BOUND_SLACK;

/* gamma_m for unit roundoff unit */
static double
gamma_of(double m, double unit)
{
	return m * unit / (1 - m * unit);
}

/* FORM_SHIFTED: the constants derived above; shift is s. */
static LabelTest
shifted_test(Product product, const double *cent, const float *shift, const float *cp, int k, int d)
{
	double		rho2 = 0, c2 = 0;
	for (int c = 0; c < k; c++)
	{
		double		s = 0, n2 = 0;
		for (int j = 0; j < d; j++)
		{
			const double v = cp[(size_t) c * d + j];
			const double t = v - (cent[(size_t) c * d + j] - (double) shift[j]);
			s += t * t;
			n2 += v * v;
		}
		rho2 = std::max(rho2, s);
		c2 = std::max(c2, n2);
	}
	c2 *= 1 + SLACK;			/* the fp64 sums above */
	const double C = std::sqrt(c2);
	/* c - mu above is rounded in fp64: at most w |c - mu| per feature */
	const double rho = std::sqrt(rho2) * (1 + SLACK) + 2 * W * C;
	double		a, b;
	pgkm::label_lemma_constants(d, &a, &b);
	const double delta = product == PRODUCT_3XTF32
		? gamma_of(d + 2, 4 * U) * (1 + 0x1p-9) + 0x1p-20 * (1 + 0x1p-11) + 0x1p-22
		: gamma_of(d, U);
	const double gx = delta + U * (1 + delta);
	const double g64 = gamma_of(d + 1, W);
	const double gb = U * (1 + g64) + g64 + U * (1 + U) * (1 + g64);
	const double au = (6.0 * d + 8) * 0x1p-126;
	LabelTest	t {};
	t.form = FORM_SHIFTED;
	t.kv = t.kx = a - 1;
	t.x2_up = 1;
	t.kxc = 2 * (a + 1) * gx * C;
	t.k0 = (a + 1) * (gb * c2 + au) + b * rho * rho;
	if (!(c2 <= pgkm::BOUND_HUGE_V))
		t.k0 = std::numeric_limits<double>::infinity();
	return t;
}

float
exact_shift(float lo, float hi, double mean)
{
	if (lo < 0 && hi < 0)		/* the mirror image */
		return -exact_shift(-hi, -lo, -mean);
	if (!(lo > 0) || !((double) hi / 2 <= 2.0 * lo))
		return 0.0f;
	const float s = (float) std::min(std::max(mean, (double) hi / 2), 2.0 * lo);
	/* every x in [lo, hi] within [s/2, 2s]; checked in fp64, where these are exact */
	return (double) s / 2 <= lo && (double) hi <= 2.0 * s ? s : 0.0f;
}

/*
 * c_j - float(c_j) is exact in fp64 (the low bits of c_j); the sum of d
 * squares errs by at most gamma^w_{d+1} < 2^-40 relatively (d <= 2^12) and
 * the square root by w more, which the (1 + 2^-38) covers.
 */
double
float_centroid_radius(const double *cent, int k, int d)
{
	double		r2 = 0;
	for (int c = 0; c < k; c++)
	{
		double		s = 0;
		for (int j = 0; j < d; j++)
		{
			const double v = cent[(size_t) c * d + j];
			const double t = v - (double) (float) v;	/* inf - inf: NaN, caught below */
			s += t * t;
		}
		if (!(s <= std::numeric_limits<double>::max()))
			return std::numeric_limits<double>::infinity();
		r2 = std::max(r2, s);
	}
	return std::sqrt(r2) * (1 + 0x1p-38);
}

LabelTest
label_test(Path path, Product product, const double *cent, const float *mu, const float *cfl, const float *bias,
		   int k, int d)
{
	LabelTest	t {};
	if (path == PATH_GEMM && product == PRODUCT_TF32)
	{
		t.form = FORM_NONE;
		return t;
	}
	if (path == PATH_DIRECT)
	{
		pgkm::DirectFormBound b;
		b.set(cent, cfl, k, d);
		t.form = FORM_DIRECT;
		t.a1 = b.a1;
		t.b0 = b.b0;
		return t;
	}
	if (path == PATH_GEMM)
		return shifted_test(product, cent, mu, cfl, k, d);
	pgkm::GemmFormBound b;
	b.set(cent, mu, cfl, bias, k, d);
	t.form = FORM_CENTRED;
	t.kv = b.kv;
	t.kx = b.kx;
	t.kxc = b.kxc;
	t.k0 = b.k0;
	t.x2_up = b.x2_up;
	if (path == PATH_TILED)
		t.rho_f = float_centroid_radius(cent, k, d);
	return t;
}

}							/* namespace pgkm_cuda */
