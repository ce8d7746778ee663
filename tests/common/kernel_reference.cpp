/*
 * kernel_reference.cpp: the fp64 kernel k-means reference (kernel_reference.h).
 */
#include "kernel_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace pgkm_test
{

/* pgkm_kernel's values */
enum
{
	LINEAR = 0,
	POLYNOMIAL = 1,
	RBF = 2,
	SIGMOID = 3
};

std::vector<double>
ref_kernel_matrix(const std::vector<float> &x, int32_t d, const RefKernel &p)
{
	const int64_t n = (int64_t) x.size() / d;
	std::vector<double> K((size_t) n * n);
	for (int64_t i = 0; i < n; i++)
		for (int64_t l = 0; l < n; l++)
		{
			double		dot = 0, d2 = 0;
			for (int32_t j = 0; j < d; j++)
			{
				double		a = x[i * d + j], b = x[l * d + j];
				dot += a * b;
				d2 += (a - b) * (a - b);
			}
			double		v;
			switch (p.kind)
			{
				case LINEAR:
					v = dot;
					break;
				case POLYNOMIAL:
					v = std::pow(p.gamma * dot + p.coef0, p.degree);
					break;
				case RBF:
					v = std::exp(-p.gamma * d2);
					break;
				default:
					v = std::tanh(p.gamma * dot + p.coef0);
					break;
			}
			K[(size_t) i * n + l] = v;
		}
	return K;
}

std::vector<double>
ref_kernel_distances(const std::vector<double> &K, int64_t n, const std::vector<int32_t> &labels,
					 int32_t k)
{
	std::vector<std::vector<int64_t>> rows(k);
	for (int64_t i = 0; i < n; i++)
		rows[labels[i]].push_back(i);
	std::vector<double> D((size_t) n * k, std::numeric_limits<double>::infinity());
	for (int32_t c = 0; c < k; c++)
	{
		const auto &L = rows[c];
		if (L.empty())
			continue;
		double		within = 0;
		for (int64_t l : L)
			for (int64_t m : L)
				within += K[(size_t) l * n + m];
		const double sz = (double) L.size();
		for (int64_t i = 0; i < n; i++)
		{
			double		s = 0;
			for (int64_t l : L)
				s += K[(size_t) i * n + l];
			D[(size_t) i * k + c] = K[(size_t) i * n + i] - 2.0 / sz * s + within / (sz * sz);
		}
	}
	return D;
}

double
ref_feature_distance(const std::vector<double> &K, int64_t n, const std::vector<int32_t> &a,
					 const std::vector<int32_t> &b)
{
	auto		block = [&](const std::vector<int32_t> &u, const std::vector<int32_t> &v) {
		double		s = 0;
		for (int32_t i : u)
			for (int32_t l : v)
				s += K[(size_t) i * n + l];
		return s / ((double) u.size() * (double) v.size());
	};
	return block(a, a) + block(b, b) - 2 * block(a, b);
}

/* argmin over clusters, lowest index on ties; D at the label into dist2. */
static void
assign(const std::vector<double> &D, int64_t n, int32_t k, std::vector<int32_t> &labels,
	   std::vector<double> &dist2)
{
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		best = 0;
		for (int32_t c = 1; c < k; c++)
			if (D[(size_t) i * k + c] < D[(size_t) i * k + best])
				best = c;
		labels[i] = best;
		dist2[i] = D[(size_t) i * k + best];
	}
}

/* The documented repair: each empty cluster takes the farthest row of a cluster of >= 2 rows. */
static int
repair(std::vector<int32_t> &labels, const std::vector<double> &dist2, int32_t k,
	   std::vector<char> &repaired_last, std::vector<char> &given_up)
{
	const int64_t n = (int64_t) labels.size();
	std::vector<int64_t> size(k, 0);
	for (int32_t l : labels)
		size[l]++;
	std::vector<char> now(k, 0), taken(n, 0);
	int			repairs = 0;
	for (int32_t c = 0; c < k; c++)
	{
		if (size[c] != 0 || given_up[c])
			continue;
		if (repaired_last[c])
		{
			given_up[c] = 1;
			continue;
		}
		int64_t		far = -1;
		for (int64_t i = 0; i < n; i++)
			if (!taken[i] && size[labels[i]] >= 2 && dist2[i] > 0 &&
				(far < 0 || dist2[i] > dist2[far]))
				far = i;
		if (far < 0)
			break;
		size[labels[far]]--;
		labels[far] = c;
		size[c] = 1;
		taken[far] = 1;
		now[c] = 1;
		repairs++;
	}
	repaired_last.swap(now);
	return repairs;
}

static std::vector<int32_t>
rows_of(const std::vector<int32_t> &labels, int32_t c)
{
	std::vector<int32_t> r;
	for (size_t i = 0; i < labels.size(); i++)
		if (labels[i] == c)
			r.push_back((int32_t) i);
	return r;
}

RefKernelResult
ref_kernel_kmeans(const std::vector<double> &K, int64_t n, int32_t d, std::vector<int32_t> init,
				  int32_t k, int max_iter, double tol)
{
	double		trace = 0, sum = 0;
	for (int64_t i = 0; i < n; i++)
	{
		trace += K[(size_t) i * n + i];
		for (int64_t l = 0; l < n; l++)
			sum += K[(size_t) i * n + l];
	}
	const double tol_s = tol * std::max(0.0, trace / n - sum / ((double) n * n)) / d;
	RefKernelResult r;
	std::vector<int32_t> L = init, prev, next(n);
	std::vector<double> dist2(n);
	std::vector<char> repaired_last(k, 0), given_up(k, 0);
	bool		repaired_before = false;
	for (int s = 0;; s++)
	{
		std::vector<double> D = ref_kernel_distances(K, n, L, k);
		assign(D, n, k, next, dist2);
		if (s >= 1 && tol_s > 0 && !repaired_before)
		{
			double		shift = 0;
			for (int32_t c = 0; c < k; c++)
			{
				auto		a = rows_of(L, c), b = rows_of(prev, c);
				if (!a.empty() && !b.empty())
					shift += ref_feature_distance(K, n, a, b);
			}
			if (shift <= tol_s)
			{
				r.iterations = s;
				r.converged = true;
				break;
			}
		}
		int64_t		moved = 0;
		for (int64_t i = 0; i < n; i++)
			moved += next[i] != L[i];
		int			rep = repair(next, dist2, k, repaired_last, given_up);
		r.repairs += rep;
		r.iterations = s + 1;
		if (rep == 0 && moved == 0)
		{
			r.converged = true;
			break;
		}
		prev = L;
		L = next;
		repaired_before = rep > 0;
		if (r.iterations >= max_iter)
		{
			D = ref_kernel_distances(K, n, L, k);
			assign(D, n, k, next, dist2);
			break;
		}
	}
	r.labels = next;
	r.members = L;
	r.dist2 = dist2;
	for (double v : dist2)
		r.inertia += std::max(v, 0.0);
	return r;
}

double
adjusted_rand_index(const std::vector<int32_t> &a, const std::vector<int32_t> &b)
{
	std::map<std::pair<int32_t, int32_t>, double> cont;
	std::map<int32_t, double> ra, rb;
	for (size_t i = 0; i < a.size(); i++)
	{
		cont[{a[i], b[i]}] += 1;
		ra[a[i]] += 1;
		rb[b[i]] += 1;
	}
	auto		c2 = [](double v) { return v * (v - 1) / 2; };
	double		idx = 0, sa = 0, sb = 0;
	for (auto &e : cont)
		idx += c2(e.second);
	for (auto &e : ra)
		sa += c2(e.second);
	for (auto &e : rb)
		sb += c2(e.second);
	const double expected = sa * sb / c2((double) a.size());
	const double maxi = (sa + sb) / 2;
	return maxi == expected ? 1.0 : (idx - expected) / (maxi - expected);
}

}							/* namespace pgkm_test */
