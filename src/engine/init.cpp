/*
 * init.cpp: random initial centroids and the k-means++ trial pick (init.h).
 */
#include "init.h"
#include "rng.h"
#include "thread_pool.h"

#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace pgkm
{

/*
 * Rows in a seeded random order (lazy Fisher-Yates), skipping rows equal to
 * one already taken, until k distinct rows are found or the data runs out.
 */
int32_t
random_init(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed, ThreadPool *pool,
			double *centers)
{
	SplitMix64	rng(seed);
	std::unordered_map<int64_t, int64_t> swapped;
	std::unordered_set<std::string> seen;
	int32_t		found = 0;
	std::string key(sizeof(float) * d, '\0');
	for (int64_t i = 0; i < n && found < k; i++)
	{
		if ((i & 0xFFF) == 0)
			pool->poll();
		int64_t		j = i + rng.below(n - i);
		auto		fj = swapped.find(j);
		int64_t		row = fj == swapped.end() ? j : fj->second;
		auto		fi = swapped.find(i);
		swapped[j] = fi == swapped.end() ? i : fi->second;
		const float *xr = x + row * d;
		for (int32_t c = 0; c < d; c++)
		{
			float		v = xr[c] + 0.0f;	/* -0 -> +0 */
			memcpy(&key[sizeof(float) * c], &v, sizeof(float));
		}
		if (!seen.insert(key).second)
			continue;
		for (int32_t c = 0; c < d; c++)
			centers[(size_t) found * d + c] = xr[c];
		found++;
	}
	return found;
}

int
best_trial(const double *tpart, int64_t nchunks, int trials)
{
	int			best = 0;
	double		best_pot = 0;
	for (int t = 0; t < trials; t++)
	{
		double		s = 0;
		for (int64_t ch = 0; ch < nchunks; ch++)
			s += tpart[(size_t) ch * trials + t];
		if (t == 0 || s < best_pot)
		{
			best = t;
			best_pot = s;
		}
	}
	return best;
}

}							/* namespace pgkm */
