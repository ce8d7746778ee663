/*
 * kernel_relocate.cpp: where kernel k-means' empty clusters go
 * (kernel_kmeans.h), the driver's policy for Lloyd in feature space: after
 * a pass, each cluster empty in the partition at hand takes a row farthest
 * from its own centroid (the largest D above rounding, lowest row on ties,
 * one distinct row per cluster; relocate.h). On the initial partition the
 * row must leave a cluster that keeps a row; after an iteration's or the
 * final assignment, a cluster a move empties is filled in its turn. A move
 * takes a row with D > 0 to D = 0, so the objective falls and no partition
 * repeats.
 */
#include "kernel_kmeans.h"
#include "relocate.h"

#include <algorithm>
#include <cmath>

namespace pgkm
{

/*
 * Is row i apart from its centroid (D above rounding)? A row equal to every
 * member of its cluster c gets D = 0 up to the rounding of C_c, a sum of
 * |L_c|^2 equal values: about |L_c| 2^-53 of K_ii + C_c (exactly 0 for one
 * member).
 */
static bool
apart(const KernelPassView &p, int64_t i)
{
	const int32_t c = p.labels[i];
	const double bound = (std::fabs(p.diag[i]) + std::fabs(p.norms[c])) *
		((double) p.sizes[c] + 4) * 0x1p-52;
	return p.dist2[i] > bound;
}

std::vector<int64_t>
kernel_rows_for_empty(const KernelPassView &p, const std::vector<int32_t> &part,
					  std::vector<int64_t> sizes, bool keep_donors)
{
	const int32_t empty = (int32_t) std::count(sizes.begin(), sizes.begin() + p.k, 0);
	if (empty == 0)
		return {};
	std::vector<double> far(p.n);
	for (int64_t i = 0; i < p.n; i++)
		far[i] = apart(p, i) ? p.dist2[i] : 0;
	if (!keep_donors)
		return farthest_distinct_rows(p.x, p.n, p.d, far.data(), empty);
	return farthest_distinct_rows(p.x, p.n, p.d, far.data(), empty, [&](int64_t r) {
		if (sizes[part[r]] < 2)
			return false;
		sizes[part[r]]--;
		return true;
	});
}

int32_t
kernel_fill_empty(const KernelPassView &p, std::vector<int32_t> &part, std::vector<int64_t> &sizes,
				  bool keep_donors)
{
	std::vector<int64_t> rows = kernel_rows_for_empty(p, part, sizes, keep_donors);
	std::vector<int32_t> empty;
	for (int32_t c = 0; c < p.k && empty.size() < rows.size(); c++)
		if (sizes[c] == 0)
			empty.push_back(c);
	for (size_t i = 0; i < rows.size(); i++)
	{
		sizes[part[rows[i]]]--;
		part[rows[i]] = empty[i];
		sizes[empty[i]] = 1;
	}
	return (int32_t) rows.size();
}

}							/* namespace pgkm */
