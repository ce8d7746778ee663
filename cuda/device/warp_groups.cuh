/*
 * device/warp_groups.cuh: a warp's lanes grouped by key (a row's label), and
 * the fixed shuffle tree that sums a value over each group (Westphal's
 * reduce_peers), so a warp issues one atomic per (distinct label, column)
 * instead of one per (row, column).
 */
#ifndef PGKM_CUDA_DEVICE_WARP_GROUPS_CUH
#define PGKM_CUDA_DEVICE_WARP_GROUPS_CUH

#include "device/sums.cuh"

#include <cstdint>

namespace pgkm_cuda
{

/*
 * In round r a lane adds the value of the next remaining peer above it;
 * lanes at odd (shifted) positions drop out, so a group of size s needs
 * log2(s) rounds. The schedule depends only on the keys, so it is computed
 * once per row group and replayed for every column; the sum ends in the
 * group's lowest lane.
 */
struct WarpGroups
{
	unsigned	peers;			/* lanes with my key */
	unsigned	next;			/* round r: bits 6r..6r+5 = source lane + 1, 0 = none */
	int			rounds;			/* warp-uniform */
	bool		leader;			/* lowest lane of my group */
};

__device__ __forceinline__ WarpGroups
warp_groups(int key)
{
	const int	lane = threadIdx.x & 31;
	WarpGroups	g;
	g.peers = __match_any_sync(FULL, key);
	g.leader = __ffs(g.peers) - 1 == lane;
	unsigned	rest = g.peers & (0xfffffffeu << lane);	/* peers above me */
	int			rel = __popc(g.peers & ((1u << lane) - 1u));	/* my rank in the group */
	g.next = 0;
	g.rounds = 0;
#pragma unroll
	for (int r = 0; r < 5; r++)
	{
		if (!__any_sync(FULL, rest))
			break;
		g.next |= (unsigned) __ffs(rest) << (6 * r);
		rest &= ~__ballot_sync(FULL, rel & 1);
		rel >>= 1;
		g.rounds++;
	}
	return g;
}

/* Warp-collective: v summed over my group (valid in the group's leader). */
template <typename T>
__device__ __forceinline__ T
group_sum(const WarpGroups &g, T v)
{
	const int	lane = threadIdx.x & 31;
#pragma unroll
	for (int r = 0; r < 5; r++)
	{
		if (r >= g.rounds)
			break;
		int			src = (int) (g.next >> (6 * r)) & 63;
		T			t = __shfl_sync(FULL, v, src ? src - 1 : lane);
		if (src)
			v += t;
	}
	return v;
}

/*
 * Warp-collective: adds v (column j of each lane's row) to its cluster's sum
 * at dst[idx]; only the group leader of a real row (add) issues the atomic.
 * Fixed point: exact whatever the grouping. Fast mode: fp64 in tree order.
 */
__device__ __forceinline__ void
group_add(unsigned long long *dst, int64_t idx, float v, const WarpGroups &g, bool add, int det, double qscale)
{
	if (det)
	{
		/* unsigned: lanes that already handed their partial on keep adding
		 * (unused) values, which may wrap; the leader's sum is exact */
		unsigned long long q = group_sum<unsigned long long>(g, (unsigned long long) fixed_point(v, qscale));
		if (add)
			atomicAdd(dst + idx, q);
	}
	else
	{
		double		t = group_sum<double>(g, (double) v);
		if (add)
			atomicAdd(reinterpret_cast<double *>(dst) + idx, t);
	}
}

}							/* namespace pgkm_cuda */

#endif
