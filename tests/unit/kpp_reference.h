/*
 * kpp_reference.h: brute-force fp64 k-means++ from its definition, drawing
 * from the engine's seeded stream (rng.h), and the integer data on which
 * every sum is exact (test_kmeanspp.cpp, test_kmeans_parallel.cpp).
 */
#ifndef PGKM_TEST_KPP_REFERENCE_H
#define PGKM_TEST_KPP_REFERENCE_H

#include "rng.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace pgkm_test
{

inline double
row_dist2(const std::vector<float> &x, int32_t d, int64_t a, int64_t b)
{
	double		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		t = (double) x[a * d + j] - (double) x[b * d + j];
		s += t * t;
	}
	return s;
}

struct KppReference
{
	std::vector<int64_t> rows;	/* chosen rows, in order */
	double		potential = 0;
};

/*
 * k-means++ from its definition: first row uniform (rng.below(n)), or drawn
 * proportional to its weight when weighted; then, while
 * fewer than k centers and some D^2 > 0, 2 + floor(ln k) candidates, each the
 * first row (in row order, among rows with D^2 > 0) whose running D^2 sum
 * reaches u * potential; keep the candidate whose potential is lowest (first
 * on ties). D^2 in fp64 from the float rows; weights (empty: all 1) multiply
 * each row's D^2 in the draws and the potentials.
 */
inline KppReference
reference_kmeanspp(const std::vector<float> &x, int32_t d, int32_t k, uint64_t seed,
				   const std::vector<double> &weights = {})
{
	auto		wt = [&](int64_t i) { return weights.empty() ? 1.0 : weights[i]; };
	const int64_t n = (int64_t) x.size() / d;
	const int	trials = 2 + (int) std::log((double) k);
	pgkm::SplitMix64 rng(seed);
	auto		dist2 = [&](int64_t a, int64_t b) { return row_dist2(x, d, a, b); };
	KppReference ref;
	if (weights.empty())
		ref.rows.push_back(rng.below(n));
	else
	{
		/* weighted: the first row too is drawn, proportional to its weight */
		double		total = 0, cum = 0;
		for (double v : weights)
			total += v;
		const double r = rng.uniform() * total;
		int64_t		pick = -1;
		for (int64_t i = 0; i < n && pick < 0; i++)
			if (weights[i] > 0 && (cum += weights[i]) >= r)
				pick = i;
		ref.rows.push_back(pick);
	}
	std::vector<double> closest(n);
	for (int64_t i = 0; i < n; i++)
		closest[i] = dist2(i, ref.rows[0]);
	auto		total = [&](const std::vector<double> &v) {
		double		s = 0;
		for (size_t i = 0; i < v.size(); i++)
			s += wt((int64_t) i) * v[i];
		return s;
	};
	double		pot = total(closest);
	while ((int32_t) ref.rows.size() < k && pot > 0)
	{
		std::vector<int64_t> cand;
		for (int t = 0; t < trials; t++)
		{
			const double r = rng.uniform() * pot;
			double		cum = 0;
			int64_t		pick = -1;
			for (int64_t i = 0; i < n && pick < 0; i++)
				if (closest[i] > 0 && wt(i) > 0)
				{
					cum += wt(i) * closest[i];
					if (cum >= r)
						pick = i;
				}
			cand.push_back(pick);
		}
		int			best = 0;
		double		best_pot = 0;
		std::vector<double> best_closest;
		for (int t = 0; t < trials; t++)
		{
			std::vector<double> c(closest);
			for (int64_t i = 0; i < n; i++)
				c[i] = std::min(c[i], dist2(i, cand[t]));
			const double p = total(c);
			if (t == 0 || p < best_pot)
			{
				best = t;
				best_pot = p;
				best_closest = c;
			}
		}
		ref.rows.push_back(cand[best]);
		closest = best_closest;
		pot = best_pot;
	}
	ref.potential = pot;
	return ref;
}

/* n rows: base's rows first, then random repeats of them drawn from rng. */
inline std::vector<float>
repeat_rows(const std::vector<float> &base, int32_t d, int64_t n, pgkm::SplitMix64 &rng)
{
	const int64_t distinct = (int64_t) base.size() / d;
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
	{
		const int64_t s = i < distinct ? i : rng.below(distinct);
		std::copy(&base[s * d], &base[(s + 1) * d], &x[i * d]);
	}
	return x;
}

/* n integer rows in [-range, range]: `distinct` random rows, then random repeats of them. */
inline std::vector<float>
integer_rows(int64_t n, int32_t d, int range, int64_t distinct, uint64_t seed)
{
	pgkm::SplitMix64 rng(seed);
	std::vector<float> base((size_t) distinct * d);
	for (float &v : base)
		v = (float) (rng.below(2 * range + 1) - range);
	return repeat_rows(base, d, n, rng);
}

}							/* namespace pgkm_test */

#endif							/* PGKM_TEST_KPP_REFERENCE_H */
