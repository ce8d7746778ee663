/*
 * yinyang_groups.cpp: how Yinyang splits the centroids into groups of at
 * most one block (yinyang_groups.h).
 */
#include "bounded_assign.h"
#include "yinyang_groups.h"

#include <algorithm>

namespace pgkm
{

int32_t
yinyang_groups(int32_t k)
{
	return (k + BLOCK - 1) / BLOCK;
}

/*
 * Groups of close centroids: a few Lloyd steps on the (centred float)
 * centroids from evenly spaced ones, then each centroid to its nearest group
 * with room left (pairs taken in order of distance), so no group exceeds a
 * block. Any grouping is exact; close groups prune more.
 */
std::vector<int32_t>
yinyang_group_order(const CentroidGeometry &geo, int32_t t)
{
	const int32_t k = geo.k(), d = geo.d();
	std::vector<double> ctr((size_t) t * d);
	for (int32_t g = 0; g < t; g++)
		for (int32_t j = 0; j < d; j++)
			ctr[(size_t) g * d + j] = geo.rowf((int32_t) ((int64_t) g * k / t))[j];
	auto		sq = [&](int32_t c, int32_t g) {
		double		s = 0;
		for (int32_t j = 0; j < d; j++)
		{
			double		v = geo.rowf(c)[j] - ctr[(size_t) g * d + j];
			s += v * v;
		}
		return s;
	};
	std::vector<int32_t> of(k, 0);
	for (int it = 0; it < 5 && t > 1; it++)
	{
		for (int32_t c = 0; c < k; c++)
		{
			double		best = sq(c, 0);
			of[c] = 0;
			for (int32_t g = 1; g < t; g++)
			{
				double		v = sq(c, g);
				if (v < best)
				{
					best = v;
					of[c] = g;
				}
			}
		}
		std::vector<double> sum((size_t) t * d, 0.0);
		std::vector<int32_t> cnt(t, 0);
		for (int32_t c = 0; c < k; c++)
		{
			cnt[of[c]]++;
			for (int32_t j = 0; j < d; j++)
				sum[(size_t) of[c] * d + j] += geo.rowf(c)[j];
		}
		for (int32_t g = 0; g < t; g++)
			if (cnt[g] > 0)
				for (int32_t j = 0; j < d; j++)
					ctr[(size_t) g * d + j] = sum[(size_t) g * d + j] / cnt[g];
	}
	struct Pair
	{
		double		dist;
		int32_t		c, g;
	};
	std::vector<Pair> pairs;
	pairs.reserve((size_t) k * t);
	for (int32_t c = 0; c < k; c++)
		for (int32_t g = 0; g < t; g++)
			pairs.push_back({sq(c, g), c, g});
	std::sort(pairs.begin(), pairs.end(), [](const Pair &p, const Pair &q) {
		return p.dist < q.dist || (p.dist == q.dist && (p.c < q.c || (p.c == q.c && p.g < q.g)));
	});
	std::vector<int32_t> fill(t, 0), order((size_t) t * BLOCK, -1);
	std::vector<char> done(k, 0);
	for (const Pair &p : pairs)
	{
		if (done[p.c] || fill[p.g] == BLOCK)
			continue;
		done[p.c] = 1;
		order[(size_t) p.g * BLOCK + fill[p.g]++] = p.c;
	}
	for (int32_t g = 0; g < t; g++)
		std::sort(order.begin() + (size_t) g * BLOCK, order.begin() + (size_t) g * BLOCK + fill[g]);
	return order;
}

}							/* namespace pgkm */
