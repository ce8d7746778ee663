/*
 * kernel_function.h: the kernels of kernel k-means as elementwise maps,
 * header-only and free of engine types, so that the CPU device, prediction
 * and the CUDA plugin's host code evaluate the same formulas.
 *
 * Every kernel is computed from the data's Gram entries: linear, polynomial
 * and sigmoid from the dot product <x, y>, the RBF from the squared distance
 * ||x||^2 + ||y||^2 - 2 <x, y>, clamped at 0 (in float the three terms can
 * cancel to a small negative number for nearby rows).
 */
#ifndef PGKM_KERNEL_FUNCTION_H
#define PGKM_KERNEL_FUNCTION_H

#include "pgkm_engine.h"

#include <cfloat>
#include <cmath>
#include <cstdint>

namespace pgkm
{

struct KernelParams
{
	int32_t		kind = PGKM_KERNEL_RBF;	/* pgkm_kernel */
	double		gamma = 1;		/* resolved: never the 0 = 1/d default */
	double		coef0 = 1;
	int32_t		degree = 3;
	double		table_gamma = 1;	/* gamma in the caller's units, for reports */

	/* The options' kernel with gamma's 1 / d default resolved, in the caller's units. */
	static KernelParams from_options(const pgkm_options &o, int32_t d)
	{
		KernelParams p;
		p.kind = o.kernel;
		p.gamma = o.gamma > 0 ? o.gamma : 1.0 / d;
		p.coef0 = o.coef0;
		p.degree = o.degree;
		p.table_gamma = p.gamma;
		return p;
	}

	/*
	 * The same kernel on the engine's data x = (X - shift) 2^e: gamma 2^-2e
	 * makes gamma <x, y> and gamma ||x - y||^2 the caller's values, so the
	 * RBF, polynomial and sigmoid K are the caller's K; the linear K is
	 * 2^2e times the caller's (its distances are converted back). Clamped to
	 * double's range (an infinite gamma would make 0 * gamma a NaN).
	 */
	KernelParams in_engine_units(int32_t scale_log2) const
	{
		KernelParams p = *this;
		p.gamma = std::fmin(std::ldexp(gamma, -2 * scale_log2), DBL_MAX);
		return p;
	}

	/* Does K change with a translation of the rows? (then the data must not be shifted) */
	bool		needs_origin() const
	{
		return kind == PGKM_KERNEL_POLYNOMIAL || kind == PGKM_KERNEL_SIGMOID;
	}

	/* Does K depend on the rows only through their squared distances? */
	bool		by_distance() const { return kind == PGKM_KERNEL_RBF; }

	/* K from a dot product (linear, polynomial, sigmoid; not the RBF). */
	double		of_dot(double dot) const
	{
		switch (kind)
		{
			case PGKM_KERNEL_POLYNOMIAL:
				{
					/* an integer power by squaring: exact for small degrees, no pow() */
					double		b = gamma * dot + coef0, r = 1;
					for (int32_t e = degree; e > 0; e >>= 1, b *= b)
						if (e & 1)
							r *= b;
					return r;
				}
			case PGKM_KERNEL_SIGMOID:
				return std::tanh(gamma * dot + coef0);
			default:
				return dot;
		}
	}

	/* K from a squared distance (RBF), clamped at 0. */
	double		of_sqdist(double d2) const { return std::exp(-gamma * (d2 > 0 ? d2 : 0)); }

	/*
	 * K(a, b) of two rows straight from their features, in fp64; *same is
	 * set when the rows are identical (their K equals K(a, a) exactly).
	 */
	template <typename A, typename B>
	double		of_rows(const A *a, const B *b, int32_t d, bool *same) const
	{
		double		d2 = 0, dot = 0;
		for (int32_t j = 0; j < d; j++)
		{
			const double u = a[j], v = b[j];
			d2 += (u - v) * (u - v);
			dot += u * v;
		}
		*same = d2 == 0;
		return by_distance() ? of_sqdist(d2) : of_dot(dot);
	}
};

}							/* namespace pgkm */

#endif							/* PGKM_KERNEL_FUNCTION_H */
