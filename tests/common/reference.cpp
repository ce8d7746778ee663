/*
 * reference.cpp: the brute-force fp64 reference (reference.h).
 */
#include "reference.h"

#include <algorithm>
#include <cmath>

namespace pgkm_test
{

double
sqdist_fp64(const float *x, const double *c, int32_t d)
{
	double		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		t = (double) x[j] - c[j];
		s += t * t;
	}
	return s;
}

int32_t
nearest_fp64(const float *x, const double *centroids, int32_t k, int32_t d, double *dist2)
{
	int32_t		best = 0;
	double		bd = sqdist_fp64(x, centroids, d);
	for (int32_t c = 1; c < k; c++)
	{
		double		v = sqdist_fp64(x, centroids + (size_t) c * d, d);
		if (v < bd)
		{
			bd = v;
			best = c;
		}
	}
	if (dist2)
		*dist2 = bd;
	return best;
}

/* each column's fixed-point scale: 2^(min(50, 61 - e_n) - e_m), n + 1 < 2^e_n, max |x| < 2^e_m */
static std::vector<double>
sum_scales(const float *x, int64_t n, int32_t d)
{
	std::vector<double> scale(d);
	for (int32_t j = 0; j < d; j++)
	{
		double		top = 0;
		for (int64_t i = 0; i < n; i++)
			top = std::max(top, std::fabs((double) x[(size_t) i * d + j]));
		int			e_n, e_m;
		std::frexp((double) n + 1.0, &e_n);
		std::frexp(top > 0 ? top : 1.0, &e_m);
		scale[j] = std::ldexp(1.0, std::min(50, 61 - e_n) - e_m);
	}
	return scale;
}

std::vector<float>
ref_on_sum_grid(const std::vector<float> &x, int32_t d)
{
	const int64_t n = (int64_t) x.size() / d;
	const std::vector<double> scale = sum_scales(x.data(), n, d);
	std::vector<float> g(x.size());
	for (size_t i = 0; i < x.size(); i++)
		g[i] = (float) ((double) std::llrint((double) x[i] * scale[i % d]) / scale[i % d]);
	return g;
}

double
ref_update(const float *x, int64_t n, int32_t d, const int32_t *labels, int32_t k,
		   double *centroids, int64_t *sizes)
{
	const std::vector<double> scale = sum_scales(x, n, d);
	std::vector<long long> sums((size_t) k * d, 0);
	std::fill(sizes, sizes + k, 0);
	for (int64_t i = 0; i < n; i++)
	{
		sizes[labels[i]]++;
		for (int32_t j = 0; j < d; j++)
			sums[(size_t) labels[i] * d + j] += std::llrint((double) x[(size_t) i * d + j] * scale[j]);
	}
	double		shift = 0;
	for (int32_t c = 0; c < k; c++)
		for (int32_t j = 0; j < d; j++)
		{
			double		old = centroids[(size_t) c * d + j];
			double		v = sizes[c] ? (double) sums[(size_t) c * d + j] / scale[j] / (double) sizes[c] : old;
			shift += (v - old) * (v - old);
			centroids[(size_t) c * d + j] = v;
		}
	return shift;
}

/* Mean per-feature variance, as scikit-learn scales tol with it. */
static double
mean_variance(const std::vector<float> &x, int32_t d)
{
	int64_t		n = (int64_t) x.size() / d;
	double		var = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		m = 0, v = 0;
		for (int64_t i = 0; i < n; i++)
			m += x[i * d + j];
		m /= n;
		for (int64_t i = 0; i < n; i++)
			v += (x[i * d + j] - m) * (x[i * d + j] - m);
		var += v / n;
	}
	return var / d;
}

static void
assign_all(const std::vector<float> &x, int32_t d, const std::vector<double> &c, int32_t k,
		   std::vector<int32_t> &labels)
{
	for (size_t i = 0; i < labels.size(); i++)
		labels[i] = nearest_fp64(&x[i * d], c.data(), k, d);
}

RefResult
ref_lloyd(const std::vector<float> &data, int32_t d, std::vector<double> centers, int max_iter,
		  double tol)
{
	const std::vector<float> x = ref_on_sum_grid(data, d);
	int64_t		n = (int64_t) x.size() / d;
	int32_t		k = (int32_t) (centers.size() / d);
	double		tol_s = mean_variance(x, d) * tol;
	RefResult	r;
	std::vector<int32_t> labels(n, -1), old(n, -1);
	std::vector<int64_t> sizes(k);
	bool		strict = false;
	int			i;
	for (i = 0; i < max_iter; i++)
	{
		assign_all(x, d, centers, k, labels);
		double		shift = ref_update(x.data(), n, d, labels.data(), k, centers.data(), sizes.data());
		if (labels == old)
		{
			strict = true;
			break;
		}
		if (shift <= tol_s)
			break;
		old = labels;
	}
	r.converged = strict || i < max_iter;
	if (i == max_iter)
		i--;
	assign_all(x, d, centers, k, labels);
	r.inertia = 0;
	for (int64_t p = 0; p < n; p++)
		r.inertia += sqdist_fp64(&x[p * d], &centers[(size_t) labels[p] * d], d);
	r.labels = labels;
	r.centers = centers;
	r.iterations = i + 1;
	return r;
}

}							/* namespace pgkm_test */
