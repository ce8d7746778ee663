/*
 * device/bracket.cuh: [lo, hi] around ||x - c|| from a float direct-form sum
 * E = sum_j (x_j - f_j)^2, f = float(c), whose terms each pass through at
 * most m roundings (the derivation is in exact_labels.cu): with g1 =
 * gamma_m (u = 2^-24), au for the underflows and rho >= ||c - f||,
 *   lo = sqrt((E - 2 au)(1 - g1)) - rho,  hi = sqrt((E + 2 au)(1 + 2 g1)) + rho,
 * each widened by 2^-40 for its own fp64 roundings. band: a centroid whose lo
 * is above band times another's hi has a larger sqdist_exact (d + 2
 * roundings in fp64).
 */
#ifndef PGKM_CUDA_DEVICE_BRACKET_CUH
#define PGKM_CUDA_DEVICE_BRACKET_CUH

#include "device/exact_label.cuh"

#include <cfloat>

namespace pgkm_cuda
{

struct Bracket
{
	double		g1, au, band, rho;
};

inline double
gamma_of(double m, double unit)
{
	return m * unit / (1 - m * unit);
}

/* m: roundings per term of E; rho: max ||c - float(c)|| (float_centroid_radius). */
inline Bracket
make_bracket(int m, int d, double rho)
{
	Bracket		b;
	b.g1 = gamma_of(m, 0x1p-24);
	b.au = (d + 32) * 0x1p-149;
	b.band = (1 + 2 * gamma_of(d + 2, 0x1p-53)) * (1 + 0x1p-40);
	b.rho = rho;
	return b;
}

/* Non-finite E (overflow, NaN): [-inf, inf]. */
__device__ __forceinline__ double
bracket_lo(const Bracket &b, float e)
{
	if (!(e <= FLT_MAX))
		return -dinf();
	return sqrt(fmax((double) e - 2 * b.au, 0.0) * (1 - b.g1)) * (1 - 0x1p-40) - b.rho;
}

__device__ __forceinline__ double
bracket_hi(const Bracket &b, float e)
{
	if (!(e <= FLT_MAX))
		return dinf();
	return (sqrt(((double) e + 2 * b.au) * (1 + 2 * b.g1)) + b.rho) * (1 + 0x1p-40);
}

}							/* namespace pgkm_cuda */

#endif
