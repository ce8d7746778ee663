/*
 * exact_bounds.cpp: the per-d margins and the near-tie resolution
 * (exact_bounds.h says why the margins suffice). Compiled for the engine's
 * baseline ISA (no FMA), so sqdist_exact here is the contract's arithmetic.
 */
#include "exact_bounds.h"

namespace pgkm
{

ExactMargins::ExactMargins(int32_t d) : d_(d)
{
	const double u = 0x1p-53, v = 0x1p-24;
	const double nu = (d + 2.0) * u, nv = (d + 2.0) * v;
	const double G = up(nu / (1.0 - nu));
	const double gf = up(nv / (1.0 - nv) * (1.0 + 0x1p-20));
	ratio_ = 1.0 + (2.02 * G + 0x1p-45);
	f_lo_ = down(1.0 / std::sqrt(1.0 + gf));
	f_hi_ = up(1.0 / std::sqrt(1.0 - gf));
	e_hi_ = up(1.0 / std::sqrt(1.0 - G));
	nu_ = 4.0 * (d + 16.0) * u;
}

GemmMargins::GemmMargins(int32_t d) : m_(d)
{
	const double v = 0x1p-24, nv = (d + 2.0) * v;
	g_ = up(nv / (1.0 - nv) * (1.0 + 0x1p-20));
	x2_abs_ = d * 0x1p-149;
	inv_lo_ = down(1.0 / (1.0 + g_));
	inv_hi_ = up(1.0 / (1.0 - g_));
}

int32_t
NearTies::resolve(const float *x, const double *cent, const ExactMargins &m, double *hi,
				  int64_t *exact)
{
	const double t = m.thr(best_hi_);
	int			near = 0;
	for (const Candidate &cd : cand_)
		near += cd.lo <= t;
	if (near <= 1)
	{
		*hi = best_hi_;
		return best_;
	}
	const int32_t d = m.d();
	int32_t		b = -1;
	double		be = 0, bhi = 0;
	for (const Candidate &cd : cand_)
	{
		if (cd.lo > t)
			continue;
		double		e = sqdist_exact(x, cent + (size_t) cd.c * d, d);
		++*exact;
		if (b < 0 || e < be || (e == be && cd.c < b))
		{
			b = cd.c;
			be = e;
			bhi = cd.hi;
		}
	}
	*hi = std::min(bhi, m.hi_exact(be));
	return b;
}

}							/* namespace pgkm */
