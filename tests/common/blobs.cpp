/*
 * blobs.cpp: seeded test data (blobs.h).
 */
#include "blobs.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace pgkm_test
{

std::vector<float>
blobs(int64_t n, int32_t d, int centers, uint64_t seed, double spread, double box,
	  std::vector<double> *centres_out)
{
	std::mt19937_64 g(seed);
	std::uniform_real_distribution<double> u(-box, box);
	std::normal_distribution<double> z(0, spread);
	std::vector<double> c((size_t) centers * d);
	for (auto &v : c)
		v = u(g);
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		b = (int64_t) (g() % (uint64_t) centers);
		for (int32_t j = 0; j < d; j++)
			x[(size_t) i * d + j] = (float) (c[(size_t) b * d + j] + z(g));
	}
	if (centres_out)
		*centres_out = c;
	return x;
}

std::vector<float>
wu_hong_blobs(int64_t n, int32_t d, int centers, double sigma2, uint64_t seed)
{
	std::mt19937_64 g(seed);
	std::uniform_real_distribution<double> u(0.0, 1.0);
	std::normal_distribution<double> z(0, std::sqrt(sigma2));
	std::vector<double> c((size_t) centers * d);
	for (auto &v : c)
		v = u(g);
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
	{
		const double *ci = &c[(size_t) (i % centers) * d];
		for (int32_t j = 0; j < d; j++)
			x[(size_t) i * d + j] = (float) (ci[j] + z(g));
	}
	return x;
}

std::vector<double>
pick_rows(const std::vector<float> &x, int32_t d, int k, uint64_t seed)
{
	int64_t		n = (int64_t) x.size() / d;
	std::mt19937_64 g(seed);
	std::vector<double> c;
	std::vector<int64_t> used;
	while ((int) used.size() < k)
	{
		int64_t		i = (int64_t) (g() % (uint64_t) n);
		if (std::find(used.begin(), used.end(), i) != used.end())
			continue;
		used.push_back(i);
		for (int32_t j = 0; j < d; j++)
			c.push_back(x[(size_t) i * d + j]);
	}
	return c;
}

uint64_t
fnv1a(const void *p, size_t len)
{
	uint64_t	h = 1469598103934665603ULL;
	const unsigned char *b = (const unsigned char *) p;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

std::vector<float>
rings(int64_t n, double factor, double noise, uint64_t seed, std::vector<int32_t> *labels)
{
	std::mt19937_64 g(seed);
	std::uniform_real_distribution<double> angle(0, 2 * M_PI);
	std::normal_distribution<double> z(0, noise);
	std::vector<float> x((size_t) n * 2);
	labels->resize(n);
	for (int64_t i = 0; i < n; i++)
	{
		const int32_t ring = i < n / 2 ? 0 : 1;
		const double r = ring == 0 ? 1.0 : factor, a = angle(g);
		x[(size_t) i * 2] = (float) (r * std::cos(a) + z(g));
		x[(size_t) i * 2 + 1] = (float) (r * std::sin(a) + z(g));
		(*labels)[i] = ring;
	}
	return x;
}

}							/* namespace pgkm_test */
