/*
 * yinyang.cu: what Yinyang (Ding et al. 2015) adds to a Hamerly pass
 * (hamerly.cu runs both; plan.yinyang): the centroids split once into t
 * groups of YY_GROUP (the last one smaller), and per row and group a lower
 * bound l_g on ||x - c|| over the group's centroids but the row's label.
 * Per pass, after hamerly.cu's geometry:
 *   - the filter: T >= ||x - c_label|| as Hamerly's (row_filter.cuh), each
 *     l_g lowered by the largest drift of its group's centroids (rounded
 *     down: the drifts are upper bounds, geometry_kernel), and the row
 *     listed unless max(min_g l_g, 2 s_label - T) > T: then every other
 *     centroid is proven farther (hamerly.cu's argument, with l = min_g l_g);
 *   - the list sorted by the position of each row's label in the groups'
 *     order, so that a block's rows share their labels' neighbourhood;
 *   - the listed rows labelled by hamerly_label.cu over the groups in order,
 *     a block skipping a group whose bound is above T for each of its rows
 *     (and holds none of their labels), every computed group's l_g set anew.
 * The groups only choose which centroids share a bound; any split is exact.
 * This one is spatial so that a row's far centroids share groups: recursive
 * halving along the centroids' widest coordinate, into whole groups.
 */
#include "device/row_filter.cuh"
#include "hamerly_args.h"
#include "launch.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <numeric>

namespace pgkm_cuda
{

static constexpr int YF_THREADS = 256;
static constexpr int YF_WARPS = YF_THREADS / 32;

/* Bits of a position key 0 .. k (k: past the list). */
static int
key_bits(int k)
{
	int			b = 1;
	while ((1LL << b) <= k)
		b++;
	return b;
}

/* Positions lo .. hi - 1 of order (lo a multiple of YY_GROUP) split into whole groups by location. */
static void
split_groups(const std::vector<double> &c, int d, std::vector<int32_t> &order, int lo, int hi)
{
	const int	groups = (hi - lo + YY_GROUP - 1) / YY_GROUP;
	if (groups <= 1)
		return;
	int			widest = 0;
	double		span = -1;
	for (int j = 0; j < d; j++)
	{
		double		mn = c[(size_t) order[lo] * d + j], mx = mn;
		for (int p = lo; p < hi; p++)
		{
			mn = std::min(mn, c[(size_t) order[p] * d + j]);
			mx = std::max(mx, c[(size_t) order[p] * d + j]);
		}
		if (mx - mn > span)
		{
			span = mx - mn;
			widest = j;
		}
	}
	const int	mid = lo + groups / 2 * YY_GROUP;
	std::nth_element(order.begin() + lo, order.begin() + mid, order.begin() + hi, [&](int32_t u, int32_t v) {
		const double cu = c[(size_t) u * d + widest], cv = c[(size_t) v * d + widest];
		return cu < cv || (cu == cv && u < v);
	});
	split_groups(c, d, order, lo, mid);
	split_groups(c, d, order, mid, hi);
}

void
form_yinyang_groups(Run &r)
{
	const int	k = r.k;
	std::vector<int32_t> perm(2 * (size_t) k);
	std::vector<int32_t> order(k);
	std::iota(order.begin(), order.end(), 0);
	split_groups(r.cent, r.d, order, 0, k);
	for (int p = 0; p < k; p++)
	{
		perm[p] = order[p];
		perm[(size_t) k + order[p]] = p;
	}
	size_t		need = 0;
	cub::DoubleBuffer<int32_t> keys(r.buf.d_sort_keys[0], r.buf.d_sort_keys[1]), rows(r.buf.d_open, r.buf.d_open_alt);
	CK(cub::DeviceRadixSort::SortPairs(nullptr, need, keys, rows, (int) r.n, 0, key_bits(k)));
	if (need > (size_t) yinyang_sort_bytes(r.n))
		CK(cudaErrorInvalidConfiguration);	/* a sizing bug (plan.cpp): say so, never sort */
	CK(cudaMemcpyAsync(r.buf.d_perm, perm.data(), perm.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
					   r.buf.s_comp));
	CK(cudaStreamSynchronize(r.buf.s_comp));	/* perm is a stack vector */
	r.groups_formed = true;
}

/* The filter: a warp per 32 consecutive rows; each block first takes every group's largest drift. */
__global__ void __launch_bounds__(YF_THREADS)
yinyang_filter_kernel(HamArgs a)
{
	extern __shared__ double gdrift[];	/* t, then 0 up to a multiple of 4 (launch_yinyang_filter) */
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int	k = a.k, t = a.t;
	for (int g = threadIdx.x; !a.first && g < (t + 3) / 4 * 4; g += YF_THREADS)
	{
		double		m = 0;
		for (int p = g * YY_GROUP; p < min(k, (g + 1) * YY_GROUP); p++)
		{
			const double v = a.geom[a.perm[p]];
			m = v > m || v != v ? v : m;	/* NaN: every bound of the group NaN, every row listed */
		}
		gdrift[g] = m;
	}
	__syncthreads();
	for (int64_t base = ((int64_t) blockIdx.x * YF_WARPS + warp) * 32; base < a.n;
		 base += (int64_t) gridDim.x * YF_WARPS * 32)
	{
		const int64_t i = base + lane;
		if (a.first)			/* no labels or bounds yet: every row listed */
		{
			append_open(a, i < a.n, i);
			continue;
		}
		const int	my_l = i < a.n ? a.labels[i] : 0;
		const double up = warp_label_bound(a, base, my_l);
		bool		open = false;
		if (i < a.n)
		{
			double		lmin = dinf();
			for (int g = 0; g < t; g++)
			{
				double	   *l = a.glower + (size_t) g * a.n + i;
				const double v = __dsub_rd(*l, gdrift[g]);
				*l = v;
				lmin = v < lmin || v != v ? v : lmin;
			}
			a.lower[i] = up;
			const double via = __dsub_rd(__dmul_rd(2.0, a.geom[k + my_l]), up);
			open = !(fmax(lmin, via) > up);
		}
		append_open(a, open, i);
	}
}

void
launch_yinyang_filter(Run &r, const HamArgs &h, cudaStream_t s)
{
	const int	grid = (int) std::max<int64_t>(1, std::min<int64_t>((r.n + YF_THREADS - 1) / YF_THREADS,
																	8LL * r.limits.sms));
	/* padded: the compiler reads the bound loop's tail 16 bytes at a time (memcheck saw 8 read past t = 1) */
	const size_t smem = (size_t) (h.t + 3) / 4 * 4 * sizeof(double);
	allow_smem((const void *) yinyang_filter_kernel, r, smem);
	yinyang_filter_kernel<<<grid, YF_THREADS, smem, s>>>(h);
	CKLAUNCH("yinyang_filter_kernel");
}

/* Key of list position i: its row's label's position; k past the list's end (sorted last, never read). */
__global__ void
list_keys_kernel(const int32_t *open, const unsigned int *count, const int32_t *labels, const int32_t *pos, int k,
				 int64_t n, int32_t *keys)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		keys[i] = i < (int64_t) *count ? pos[labels[open[i]]] : k;
}

/*
 * The list (h.open, length on the device) sorted by key over all n
 * positions (its length never comes to the host); h.open then points to
 * the sorted list. Not on the first pass: every group is computed then.
 */
void
sort_listed_rows(Run &r, HamArgs &h, cudaStream_t s)
{
	if (h.first)
		return;
	Buffers    &B = r.buf;
	list_keys_kernel<<<(unsigned) ((r.n + 255) / 256), 256, 0, s>>>(h.open, h.open_count, h.labels, h.pos, r.k, r.n,
																   B.d_sort_keys[0]);
	CKLAUNCH("list_keys_kernel");
	cub::DoubleBuffer<int32_t> keys(B.d_sort_keys[0], B.d_sort_keys[1]), rows(B.d_open, B.d_open_alt);
	size_t		temp = (size_t) yinyang_sort_bytes(r.n);
	CK(cub::DeviceRadixSort::SortPairs(B.d_sort_temp, temp, keys, rows, (int) r.n, 0, key_bits(r.k), s));
	h.open = rows.Current();
	r.launches += 2;
}

}							/* namespace pgkm_cuda */
