/*
 * kernel_predict.cpp: pgkm_kernel_nearest (pgkm_engine.h), kernel k-means
 * prediction against a stored partition: one row against every training
 * row, O(n d) in fp64, inside engine_guard (a failed allocation returns -1).
 * The row is brought into the training rows' units first (the fit's shift
 * and scale, gamma 2^-2e) and rounded to float as the fit's buffer rounds
 * it, so it meets them as the fit's rows met each other.
 */
#include "errors.h"
#include "kernel_function.h"
#include "units.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace pgkm;

extern "C" int32_t
pgkm_kernel_nearest(const pgkm_options *kernel, const float *rows, const int32_t *members,
					int64_t n, int32_t d, int32_t k, const double *norms, const double *x,
					double *dist2)
{
	if (!kernel || !rows || !members || !norms || !x || n < 1 || d < 1 || k < 1)
		return -1;
	int32_t		best = -1;
	int			st = engine_guard(nullptr, 0, [&]() -> int {
		const Units units(kernel->shift, kernel->scale_log2, d);
		const KernelParams p = KernelParams::from_options(*kernel, d).in_engine_units(kernel->scale_log2);
		std::vector<double> xe(d);
		double		xx = 0;
		for (int32_t j = 0; j < d; j++)
		{
			/* the float the fit's buffer holds for this value, so a training row meets K as it was fitted */
			xe[j] = units.to_buffer(x[j], j);
			xx += xe[j] * xe[j];
		}
		const double kxx = p.by_distance() ? p.of_sqdist(0) : p.of_dot(xx);
		std::vector<double> s(k, 0.0);
		std::vector<int64_t> cnt(k, 0);
		bool		same;
		for (int64_t l = 0; l < n; l++)
		{
			const int32_t c = members[l];
			if (c < 0 || c >= k)
				continue;
			s[c] += p.of_rows(xe.data(), rows + l * d, d, &same);
			cnt[c]++;
		}
		double		bd = std::numeric_limits<double>::infinity();
		for (int32_t c = 0; c < k; c++)
		{
			if (cnt[c] == 0)
				continue;
			double		v = kxx - 2.0 * s[c] / (double) cnt[c] + norms[c];
			if (!std::isfinite(v))
				return PGKM_ERR_RANGE;	/* x so far out that its kernel values overflow */
			if (best < 0 || v < bd)
			{
				bd = v;
				best = c;
			}
		}
		if (dist2)
			*dist2 = p.kind == PGKM_KERNEL_LINEAR ? units.squared(bd) : bd;
		return PGKM_OK;
	});
	if (st == PGKM_ERR_RANGE)
		return -2;
	return st == PGKM_OK ? best : -1;
}
