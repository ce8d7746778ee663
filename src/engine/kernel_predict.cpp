/*
 * kernel_predict.cpp: pgkm_kernel_nearest (pgkm_engine.h), kernel k-means
 * prediction against a stored partition: one row against every training
 * row, O(n d) in fp64, inside engine_guard (a failed allocation returns -1).
 */
#include "errors.h"
#include "kernel_function.h"

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
		const KernelParams p = KernelParams::from_options(*kernel, d);
		bool		same;
		const double kxx = p.of_rows(x, x, d, &same);
		std::vector<double> s(k, 0.0);
		std::vector<int64_t> cnt(k, 0);
		for (int64_t l = 0; l < n; l++)
		{
			const int32_t c = members[l];
			if (c < 0 || c >= k)
				continue;
			s[c] += p.of_rows(x, rows + l * d, d, &same);
			cnt[c]++;
		}
		double		bd = std::numeric_limits<double>::infinity();
		for (int32_t c = 0; c < k; c++)
		{
			if (cnt[c] == 0)
				continue;
			double		v = kxx - 2.0 * s[c] / (double) cnt[c] + norms[c];
			if (best < 0 || v < bd)
			{
				bd = v;
				best = c;
			}
		}
		if (dist2)
			*dist2 = bd;
		return PGKM_OK;
	});
	return st == PGKM_OK ? best : -1;
}
