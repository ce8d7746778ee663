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
		if (labels[i] >= 0)
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

static std::vector<int32_t>
rows_of(const std::vector<int32_t> &labels, int32_t c)
{
	std::vector<int32_t> r;
	for (size_t i = 0; i < labels.size(); i++)
		if (labels[i] == c)
			r.push_back((int32_t) i);
	return r;
}

/* A pass from the partition L: the argmin, D at it, and what the apart test needs. */
struct Pass
{
	std::vector<int32_t> labels;
	std::vector<double> dist2, norm;	/* norm: ||c||^2 of L's clusters */
	std::vector<int64_t> size;	/* of L's clusters */
};

static Pass
pass_from(const std::vector<double> &K, int64_t n, const std::vector<int32_t> &L, int32_t k)
{
	Pass		p;
	p.labels.resize(n);
	p.dist2.resize(n);
	p.norm.assign(k, 0.0);
	p.size.assign(k, 0);
	assign(ref_kernel_distances(K, n, L, k), n, k, p.labels, p.dist2);
	for (int32_t c = 0; c < k; c++)
	{
		auto		rows = rows_of(L, c);
		p.size[c] = (int64_t) rows.size();
		for (int32_t a : rows)
			for (int32_t b : rows)
				p.norm[c] += K[(size_t) a * n + b] / ((double) rows.size() * (double) rows.size());
	}
	return p;
}

/*
 * The documented move into empty clusters after pass p: each cluster empty
 * in part, in index order, takes the next row by D (largest first, lowest
 * row on ties) that is apart from its centroid (D above the rounding of a
 * cluster of equal rows) and differs from the rows already taken;
 * keep_donors (the initial partition): and leaves a cluster of part that
 * keeps a row. Returns the rows moved.
 */
static int
fill_empty(std::vector<int32_t> &part, const Pass &p, const std::vector<double> &K,
		   const std::vector<float> &x, int32_t d, int32_t k, bool keep_donors)
{
	const int64_t n = (int64_t) part.size();
	std::vector<int64_t> size(k, 0);
	for (int32_t l : part)
		size[l]++;
	std::vector<int64_t> order;
	for (int64_t i = 0; i < n; i++)
	{
		const int32_t c = p.labels[i];
		const double bound = (std::fabs(K[(size_t) i * n + i]) + std::fabs(p.norm[c])) *
			((double) p.size[c] + 4) * 0x1p-52;
		if (p.dist2[i] > bound)
			order.push_back(i);
	}
	std::stable_sort(order.begin(), order.end(),
					 [&](int64_t a, int64_t b) { return p.dist2[a] > p.dist2[b]; });
	std::vector<int32_t> empty;	/* those of the partition given, not those a move empties */
	for (int32_t c = 0; c < k; c++)
		if (size[c] == 0)
			empty.push_back(c);
	std::vector<int64_t> taken;
	int			moved = 0;
	size_t		next = 0;
	for (int32_t c : empty)
	{
		for (; next < order.size(); next++)
		{
			const int64_t r = order[next];
			bool		dup = false;
			for (int64_t t : taken)
				dup = dup || std::equal(&x[r * d], &x[r * d] + d, &x[t * d]);
			if (dup || (keep_donors && size[part[r]] < 2))
				continue;
			size[part[r]]--;
			part[r] = c;
			size[c] = 1;
			taken.push_back(r);
			moved++;
			next++;
			break;
		}
	}
	return moved;
}

static bool
has_empty(const std::vector<int32_t> &labels, int32_t k)
{
	std::vector<char> used(k, 0);
	for (int32_t l : labels)
		used[l] = 1;
	return std::find(used.begin(), used.end(), 0) != used.end();
}

RefKernelResult
ref_kernel_kmeans(const std::vector<double> &K, const std::vector<float> &x, int32_t d,
				  std::vector<int32_t> init, int32_t k, int max_iter, double tol)
{
	const int64_t n = (int64_t) x.size() / d;
	double		trace = 0, sum = 0;
	for (int64_t i = 0; i < n; i++)
	{
		trace += K[(size_t) i * n + i];
		for (int64_t l = 0; l < n; l++)
			sum += K[(size_t) i * n + l];
	}
	const double tol_s = tol * std::max(0.0, trace / n - sum / ((double) n * n)) / d;
	RefKernelResult r;
	if (has_empty(init, k))
		r.repairs += fill_empty(init, pass_from(K, n, init, k), K, x, d, k, true);
	r.init = init;
	std::vector<int32_t> L = init, prev;
	Pass		p;
	bool		repaired_before = false;
	for (int s = 0;; s++)
	{
		p = pass_from(K, n, L, k);
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
			moved += p.labels[i] != L[i];
		std::vector<int32_t> next = p.labels;
		int			rep = fill_empty(next, p, K, x, d, k, false);
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
			p = pass_from(K, n, L, k);
			break;
		}
	}
	/* the final assignment p.labels (against L): empty clusters move, the assignment is made again */
	for (int round = 0; has_empty(p.labels, k); round++)
	{
		std::vector<int32_t> next = p.labels;
		const int	rep = round < k ? fill_empty(next, p, K, x, d, k, false) : 0;
		if (rep == 0)
		{
			std::vector<int32_t> probe = p.labels;
			if (round >= k && fill_empty(probe, p, K, x, d, k, false) > 0)
				for (int32_t c = 0; c < k; c++)
					r.unfilled += rows_of(p.labels, c).empty();
			break;
		}
		r.repairs += rep;
		L = next;
		p = pass_from(K, n, L, k);
	}
	r.labels = p.labels;
	r.members = L;
	r.dist2 = p.dist2;
	for (double v : p.dist2)
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
