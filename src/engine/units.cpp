/*
 * units.cpp: the caller's units and the engine's float units (units.h).
 */
#include "units.h"
#include "errors.h"
#include "thread_pool.h"
#include "util.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>

namespace pgkm
{

double
max_safe_abs(int32_t d)
{
	/* direct: d (2M)^2; GEMM: ||c'||^2 + 2 |x'.c'| <= 3 d (2M)^2 = 12 d M^2 <= 2^120 */
	return std::ldexp(1.0, 60) / std::sqrt(12.0 * (d > 0 ? d : 1));
}

Units::Units(const double *shift, int32_t scale_log2, int32_t d)
	: shift_(d, 0.0), e_(scale_log2), identity_(scale_log2 == 0)
{
	if (std::abs(scale_log2) <= 500)
	{
		inv_scale_ = std::ldexp(1.0, -scale_log2);
		inv_scale2_ = std::ldexp(1.0, -2 * scale_log2);
	}
	if (scale_log2 < -PGKM_MAX_SCALE_LOG2 || scale_log2 > PGKM_MAX_SCALE_LOG2)
		throw EngineError(PGKM_ERR_INVALID,
						  fmt("scale_log2 must be between %d and %d (got %d)", -PGKM_MAX_SCALE_LOG2,
							  PGKM_MAX_SCALE_LOG2, scale_log2));
	if (!shift)
		return;
	for (int32_t j = 0; j < d; j++)
	{
		if (!std::isfinite(shift[j]))
			throw EngineError(PGKM_ERR_INVALID, fmt("shift of feature %d is not finite", j));
		shift_[j] = shift[j];
		identity_ = identity_ && shift[j] == 0;
	}
}

double
Units::to_engine(double v, int32_t j) const
{
	const double t = v - shift_[j];
	if (std::isfinite(t))
		return std::ldexp(t, e_);
	/* |v - shift| beyond DBL_MAX: halve both first (exact at that size) */
	return std::ldexp(0.5 * v - 0.5 * shift_[j], e_ + 1);
}

double
Units::to_buffer(double v, int32_t j) const
{
	const double t = to_engine(v, j);
	const float f = (float) t;
	return std::isfinite(f) ? (double) f : t;
}

double
Units::coordinate(double v, int32_t j) const
{
	if (identity_)
		return v;
	const double c = std::ldexp(v, -e_) + shift_[j];
	if (std::isfinite(c) || !std::isfinite(v))
		return c;
	/* v 2^-e beyond DBL_MAX with an opposite shift may still sum within range: halve both first */
	return 2.0 * (std::ldexp(v, -e_ - 1) + 0.5 * shift_[j]);
}

/*
 * Called for every row of a result. A product by an exact power of two is
 * rounded once, as ldexp's result is, subnormal and overflowing results
 * included, so both give the same bits; the product is the cheaper.
 */
double
Units::distance(double v) const
{
	return e_ == 0 ? v : inv_scale_ != 0 ? v * inv_scale_ : std::ldexp(v, -e_);
}

double
Units::squared(double v) const
{
	return e_ == 0 ? v : inv_scale2_ != 0 ? v * inv_scale2_ : std::ldexp(v, -2 * e_);
}

/* Rows per task of the distances' conversion. */
static constexpr int64_t UNITS_CHUNK = 65536;

void
results_to_callers_units(const Units &u, int32_t d, bool scaled_distances, double *dist, int64_t n,
						 std::vector<double> &cluster_inertia, double &inertia,
						 std::initializer_list<std::vector<double> *> coordinates, ThreadPool *pool)
{
	/*
	 * A value each, so any split gives the same bits; a task that meets a
	 * value beyond range looks for its first one again (the loop itself
	 * only ands a flag, so that it vectorises).
	 */
	const int64_t nchunks = (n + UNITS_CHUNK - 1) / UNITS_CHUNK;
	const bool	scale = scaled_distances && !u.identity_distances();
	std::vector<int64_t> first_bad(nchunks, -1);
	const auto	convert = [&](int64_t ch, int) {
		double	   *v = dist;
		const int64_t i0 = ch * UNITS_CHUNK, i1 = std::min(n, i0 + UNITS_CHUNK);
		bool		ok = true;
		if (scale)
			for (int64_t i = i0; i < i1; i++)
			{
				v[i] = u.distance(std::sqrt(v[i]));
				ok &= std::fabs(v[i]) <= DBL_MAX;
			}
		else
			for (int64_t i = i0; i < i1; i++)
			{
				v[i] = std::sqrt(v[i]);
				ok &= std::fabs(v[i]) <= DBL_MAX;	/* false for NaN and infinity */
			}
		for (int64_t i = i0; !ok; i++)
			if (!(std::fabs(v[i]) <= DBL_MAX))
			{
				first_bad[ch] = i;
				ok = true;
			}
	};
	if (pool && nchunks > 1)
		pool->parallel_for(nchunks, convert);
	else
		for (int64_t ch = 0; ch < nchunks; ch++)
			convert(ch, 0);
	if (scaled_distances)
	{
		for (double &v : cluster_inertia)
			v = u.squared(v);
		inertia = u.squared(inertia);
	}
	/*
	 * A coordinate is a mean of finite doubles (or one of them), so never
	 * beyond DBL_MAX: one that rounds past it is within the float buffer's
	 * resolution (2^-24 of the column's spread) of DBL_MAX, and is that.
	 */
	for (std::vector<double> *m : coordinates)
		for (size_t i = 0; i < m->size(); i++)
		{
			const double v = (*m)[i];
			double		c = u.coordinate(v, (int32_t) (i % d));
			if (std::isinf(c) && std::isfinite(v))
				c = std::copysign(DBL_MAX, c);
			(*m)[i] = c;
			if (!std::isfinite(c))
				throw EngineError(PGKM_ERR_RANGE, "a centroid is beyond the range of double precision");
		}
	for (int64_t i : first_bad)
		if (i >= 0)
			throw EngineError(PGKM_ERR_RANGE,
							  fmt("the distance of row %lld (0-based) to its centroid is beyond the range of double precision",
								  (long long) i));
	for (double v : cluster_inertia)
		if (!std::isfinite(v))
			throw EngineError(PGKM_ERR_RANGE,
							  "a cluster's sum of squared distances is beyond the range of double precision");
	if (!std::isfinite(inertia))
		throw EngineError(PGKM_ERR_RANGE,
						  "the inertia (sum of squared distances) is beyond the range of double precision");
}

}							/* namespace pgkm */
