/*
 * rng.h: the engine's seeded random numbers. Header-only and free of engine
 * types, so the CUDA plugin's host code can draw the same stream (and the
 * glue hash with the same mixing function).
 *
 * SplitMix64 is tiny, fast and fully specified, so a seed means the same
 * stream on every platform and compiler.
 */
#ifndef PGKM_RNG_H
#define PGKM_RNG_H

#include <cstdint>

namespace pgkm
{

/* SplitMix64's finaliser: a bijection of 64 bits that spreads every input bit. */
inline uint64_t
splitmix64_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* SplitMix64's step: its i-th value (from 0) is splitmix64_mix(seed + (i + 1) gamma). */
constexpr uint64_t SPLITMIX64_GAMMA = 0x9E3779B97F4A7C15ULL;

struct SplitMix64
{
	uint64_t	state;
	explicit SplitMix64(uint64_t seed) : state(seed) {}
	uint64_t	next() { return splitmix64_mix(state += SPLITMIX64_GAMMA); }
	/* uniform in [0, 1) with 53 random bits */
	double		uniform() { return (double) (next() >> 11) * 0x1.0p-53; }
	/* uniform integer in [0, n), n > 0 (multiply-shift; bias < n / 2^64) */
	int64_t		below(int64_t n)
	{
		return (int64_t) (((unsigned __int128) next() * (uint64_t) n) >> 64);
	}
};

/*
 * k-means++'s sample, the same on the CPU device and the GPU plugin: ns rows,
 * rows[i] uniform in the i-th of ns equal strata [i n / ns, (i + 1) n / ns),
 * drawn from rng (a stream of seed ^ KPP_SAMPLE_STREAM).
 */
constexpr uint64_t KPP_SAMPLE_STREAM = 0x5851f42d4c957f2dULL;

/*
 * rows[i] of the sample drawn from a stream whose state was `start`, alone
 * (the stream's i-th value without the ones before), so that blocks of the
 * sample can be drawn on different threads.
 */
inline int64_t
kpp_stratum_row(int64_t n, int64_t ns, uint64_t start, int64_t i)
{
	const int64_t lo = (int64_t) ((unsigned __int128) i * n / ns);
	const int64_t hi = (int64_t) ((unsigned __int128) (i + 1) * n / ns);
	const uint64_t v = splitmix64_mix(start + (uint64_t) (i + 1) * SPLITMIX64_GAMMA);
	return lo + (int64_t) (v % (uint64_t) (hi - lo));
}

inline void
kpp_strata_rows(int64_t n, int64_t ns, SplitMix64 &rng, int64_t *rows)
{
	for (int64_t i = 0; i < ns; i++)
		rows[i] = kpp_stratum_row(n, ns, rng.state, i);
	rng.state += (uint64_t) ns * SPLITMIX64_GAMMA;
}

/* Seed of run r among n_init: decorrelated from neighbouring seeds and runs. */
inline uint64_t
derive_seed(uint64_t seed, int run)
{
	SplitMix64	r(seed ^ (0xD1B54A32D192ED03ULL * (uint64_t) (run + 1)));
	r.next();
	return r.next();
}

}							/* namespace pgkm */

#endif							/* PGKM_RNG_H */
