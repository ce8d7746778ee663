/*
 * relocate.cpp: the rows empty clusters move to (relocate.h).
 */
#include "relocate.h"

#include <algorithm>

namespace pgkm
{

static bool
same_row(const float *a, const float *b, int32_t d)
{
	for (int32_t j = 0; j < d; j++)
		if (!(a[j] == b[j]))
			return false;
	return true;
}

std::vector<int64_t>
farthest_distinct_rows(const float *x, int64_t n, int32_t d, const double *dist2, int32_t m,
					   const std::function<bool(int64_t)> &accept)
{
	std::vector<int64_t> rows;
	for (int64_t i = 0; i < n; i++)
		if (dist2[i] > 0)
			rows.push_back(i);
	auto		farther = [&](int64_t a, int64_t b) {
		return dist2[a] > dist2[b] || (dist2[a] == dist2[b] && a < b);
	};
	std::vector<int64_t> out;
	/* sort only a prefix, widened while duplicates use it up */
	size_t		sorted = 0,
				want = std::min(rows.size(), (size_t) m * 2 + 16);
	size_t		next = 0;
	while (out.size() < (size_t) m && next < rows.size())
	{
		if (next == sorted)
		{
			std::partial_sort(rows.begin() + sorted, rows.begin() + want, rows.end(), farther);
			sorted = want;
			want = std::min(rows.size(), want * 4);
		}
		const int64_t r = rows[next++];
		bool		dup = false;
		for (int64_t o : out)
			if (same_row(x + r * d, x + o * d, d))
			{
				dup = true;
				break;
			}
		if (!dup && (!accept || accept(r)))
			out.push_back(r);
	}
	return out;
}

}							/* namespace pgkm */
