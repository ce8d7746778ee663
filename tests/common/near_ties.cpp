/*
 * near_ties.cpp: the near-tie generator (near_ties.h).
 */
#include "near_ties.h"

#include <cmath>
#include <random>

namespace pgkm_test
{

NearTies
near_ties(int64_t n, int32_t d, int32_t k, double offset, uint64_t seed)
{
	std::mt19937_64 gen(seed);
	std::normal_distribution<double> nd(0.0, 1.0);
	std::uniform_real_distribution<double> ud(0.0, 1.0);
	NearTies	t;
	t.c.resize((size_t) k * d);
	for (int32_t ci = 0; ci < k; ci++)
		for (int32_t j = 0; j < d; j++)
			t.c[(size_t) ci * d + j] = offset + 3.0 * nd(gen);
	for (int32_t ci = 1; ci < k; ci += 5)	/* near-duplicates */
		for (int32_t j = 0; j < d; j++)
			t.c[(size_t) ci * d + j] = t.c[(size_t) (ci - 1) * d + j] + 1e-6 * nd(gen);
	t.x.resize((size_t) n * d);
	std::vector<double> dir(d), p(d);
	for (int64_t i = 0; i < n; i++)
	{
		const int32_t a = (int32_t) (gen() % k);
		int32_t		b = (int32_t) (gen() % k);
		if (b == a)
			b = (a + 1) % k;
		const double *ca = &t.c[(size_t) a * d], *cb = &t.c[(size_t) b * d];
		double		len = 0;
		for (int32_t j = 0; j < d; j++)
		{
			dir[j] = ca[j] - cb[j];
			len += dir[j] * dir[j];
		}
		len = std::sqrt(len);
		/* a point of the bisector: the midpoint plus a step orthogonal to a - b */
		double		dot = 0;
		for (int32_t j = 0; j < d; j++)
		{
			p[j] = 0.5 * nd(gen);
			dot += p[j] * dir[j];
		}
		const double off = std::pow(10.0, -4.0 - 6.0 * ud(gen)) * (gen() % 2 ? 1 : -1);
		for (int32_t j = 0; j < d; j++)
		{
			const double on_bisector = 0.5 * (ca[j] + cb[j]) + p[j] - dot / (len * len) * dir[j];
			t.x[(size_t) i * d + j] = (float) (on_bisector + off * dir[j]);
		}
	}
	return t;
}

std::vector<float>
mod16_rows(int64_t n, int32_t d, uint64_t seed)
{
	std::mt19937_64 gen(seed);
	std::uniform_real_distribution<float> u(0.0f, 1.0f);
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			x[(size_t) i * d + j] = (float) (i % 16) + u(gen);
	return x;
}

}							/* namespace pgkm_test */
