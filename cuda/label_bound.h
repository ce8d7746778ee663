/*
 * label_bound.h: when is a pass kernel's float32 argmin the exact label?
 *
 * A row's label is the argmin of sqdist_exact (src/engine/exact_distance.h),
 * the fp64 distance to each centroid, lowest index on exact ties: the CPU
 * engine's label. Each GPU path ranks centroids by a float32 value v_c of
 * its own form; LabelTest says, from the best value v_b of a row, which
 * v_c can still belong to a centroid at least as close in fp64
 * (v_c <= limit). A row whose runner-up is above the limit keeps its float
 * argmin; the others are decided in fp64 among those centroids
 * (device/exact_label.cuh). label_bound.cpp derives the constants.
 *
 * Plain data (host and device); computed on the host at each centroid upload.
 */
#ifndef PGKM_CUDA_LABEL_BOUND_H
#define PGKM_CUDA_LABEL_BOUND_H

#include "plan.h"

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define PGKM_HOST_DEVICE __host__ __device__
#else
#define PGKM_HOST_DEVICE
#endif

namespace pgkm_cuda
{

enum LabelForm
{
	FORM_NONE,					/* one TF32 product: labels as computed, never decided (a test's control) */
	FORM_DIRECT,				/* sum_j (x_j - cf_j)^2 in float: limit = a1 v_b + b0 */
	FORM_CENTRED,				/* ||c'||^2 - 2 x'.c', x' = fl(x - mu) in the kernel: x2 = fl(||x'||^2) */
	FORM_SHIFTED				/* ||c'||^2 - 2 x'.c', x' = x - s exact (GEMM): x2 >= ||x'||^2 (row_norms) */
};

/*
 * FORM_DIRECT: limit = (a1 v_b + b0)(1 + 2^-40), +inf when v_b > 2^100 or b0 is not finite.
 * FORM_CENTRED, FORM_SHIFTED, with X^2 = x2 x2_up >= ||x'||^2:
 *   limit = v_b + (kv v_b + kx X^2 + kxc X + k0)(1 + 2^-40) + |v_b| 2^-40,
 *   +inf when v_b, X^2 or k0 is above 2^120 (float overflow near) or NaN.
 */
struct LabelTest
{
	int			form;
	double		a1, b0;
	double		kv, kx, kxc, k0, x2_up;
	double		rho_f;			/* TILED: max_c ||c - float(c)||, rounded up (exact_labels.cu's float level) */
};

/*
 * The largest float value that may still be the exact label's, for a row
 * whose float argmin has value vb and whose x2 the form reads (unused by
 * DIRECT). -inf: never decided; +inf: every centroid is a candidate. fp64
 * throughout (pgkm::GemmFormBound::limit's formula).
 */
PGKM_HOST_DEVICE inline double
label_limit(const LabelTest &t, float vb, float x2)
{
	const double slack = 0x1p-40, huge = 0x1p120, inf = INFINITY;
	if (t.form == FORM_NONE)
		return -inf;
	if (t.form == FORM_DIRECT)
	{
		if (!(vb <= 0x1p100f) || !(t.b0 <= huge))
			return inf;
		return (t.a1 * vb + t.b0) * (1 + slack);
	}
	const double v = vb, xx = (double) x2 * t.x2_up;
	if (!(fabs(v) <= huge) || !(xx <= huge) || !(t.k0 <= huge))
		return inf;
	const double g = t.kv * v + t.kx * xx + t.kxc * sqrt(xx) + t.k0;
	return v + g * (1 + slack) + fabs(v) * slack;
}

/*
 * The test of a pass: path and product, the fp64 centroids cent (k x d), the
 * fp32 centring point mu (d; the GEMM path's exact shift s), the float
 * centroids the path ranks with, cfl (k x d: float(c) for DIRECT, c' =
 * float(c - mu) otherwise), and for FORM_CENTRED their float ||c'||^2 as the
 * kernels read them (bias).
 */
LabelTest	label_test(Path path, Product product, const double *cent, const float *mu, const float *cfl,
					   const float *bias, int k, int d);

/*
 * The GEMM path's shift of a column whose values lie in [lo, hi], near the
 * column's mean: x - s is exact in float for every x there (Sterbenz: s/2 <=
 * x <= 2s), so the device may keep x - s and still recover x = (x - s) + s
 * exactly. 0 when no such s exists (values of both signs, or spanning more
 * than a factor 4): such a column has no large common offset to remove.
 */
float		exact_shift(float lo, float hi, double mean);

/*
 * max over the centroids of ||c - float(c)|| (cent k x d, fp64), rounded up;
 * +inf when a centroid is beyond float's range.
 */
double		float_centroid_radius(const double *cent, int k, int d);

}							/* namespace pgkm_cuda */

#endif
