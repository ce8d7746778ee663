/*
 * pgkm_cuda_kernels.cu: the assignment + accumulation kernels of a Lloyd pass.
 *
 * One pass over a chunk of rows labels every row with its nearest centroid,
 * recomputes the exact fp64 distance sum((x - c)^2) to that centroid, and adds
 * the row into its cluster's sum and count, so the n x k distance matrix and
 * the labels never make a second trip through memory.
 *
 * Sums: deterministic mode adds each value as a 64-bit fixed-point integer
 * (x * 2^e, e chosen from max|x| and n so no cluster sum can overflow);
 * integer addition is associative, so any atomic order gives bit-identical
 * sums, and the quantisation step 2^-e is ~2^-38 max|x| (finer than fp32's own
 * spacing). Fast mode adds fp64 with atomics (order-dependent last bits).
 * Both modes privatise: each block keeps its own k x (d+1) sums in shared
 * memory when they fit (2 blocks per SM), and flushes them with one global
 * atomic per non-zero element at the end; the fused kernel also pre-sums the
 * 32 rows of a warp by label (fixed shuffle tree), so a shared atomic is paid
 * per (warp, distinct label, column) instead of per (row, column).
 * Inertia: per-block fp64 partials reduced in a fixed order.
 */
#include "pgkm_cuda_internal.cuh"
#include "pgkm_cuda_device.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int BLOCK = 256;
static constexpr int CT_BYTES = 48 * 1024;	/* smem for one centroid tile */

/*
 * The lanes of a warp grouped by key (a row's label, -1 = no row), and the
 * fixed tree that sums a value over each group in log2(group size) shuffle
 * rounds (Westphal's reduce_peers). In round r a lane adds the value of the
 * next remaining peer above it; lanes at odd (shifted) positions drop out. The
 * schedule depends only on the keys, so it is computed once per row group and
 * replayed for every column; the sum ends in the group's lowest lane.
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
		unsigned long long q = group_sum<unsigned long long>(g, (unsigned long long) __double2ll_rn((double) v * qscale));
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

/* Exact fp64 squared distance, same operation order as the CPU engine. */
__device__ __forceinline__ double
exact_dist2(const float *xr, const double *c, int d)
{
	double		e = 0;
	for (int j = 0; j < d; j++)
	{
		double		t = (double) xr[j] - c[j];
		e = __dadd_rn(e, __dmul_rn(t, t));
	}
	return e;
}

/* Same, from a row held in registers (DIRECT path: x is not centred). */
template <int DP>
__device__ __forceinline__ double
exact_dist2_regs(const float (&xr)[DP], const double *c, int d)
{
	double		e = 0;
#pragma unroll
	for (int j = 0; j < DP; j++)
		if (j < d)
		{
			double		t = (double) xr[j] - c[j];
			e = __dadd_rn(e, __dmul_rn(t, t));
		}
	return e;
}

/*
 * Fused assignment for small d (shape: rows x d, d <= DP <= 64).
 * Grid-stride over groups of BLOCK*PPT rows; each thread keeps PPT rows in
 * registers (zero-padded to DP) and scans the centroids held in shared memory
 * (tiles of KT centroids, reloaded per row group only when k > KT), keeping
 * the best (value, index) per row in registers; ties keep the lowest index.
 * DIRECT: value = sum((x-c)^2) in fp32 without contraction, bit-identical to
 *         the CPU engine's loop (cf: raw fp32 centroids, k x DP).
 * !DIRECT: value = ||c'||^2 + x'.(-2c') with x' = x - mu (cf: -2c' k x DP,
 *         bias = ||c'||^2), the CPU engine's GEMM form.
 */
template <int DP, int PPT, bool DIRECT>
__global__ void __launch_bounds__(BLOCK, 2)
fused_kernel(PassArgs a, int64_t slot_base, int kt_max)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int	d = a.d, k = a.k;
	const int64_t nacc = (int64_t) k * d + k;
	unsigned long long *pacc = reinterpret_cast<unsigned long long *>(smem);
	size_t		acc_bytes = a.priv ? (size_t) ((nacc * 8 + 15) / 16 * 16) : 0;
	float	   *ct = reinterpret_cast<float *>(smem + acc_bytes);
	float	   *cb = ct + (size_t) kt_max * DP;
	__shared__ double red[BLOCK / 32];
	__shared__ unsigned int moved_sh;

	start_pass_block(a, &moved_sh, pacc, nacc);

	const bool	single = k <= kt_max;
	auto		load_tile = [&](int c0, int kt) {
		for (int i = threadIdx.x; i < kt * DP; i += BLOCK)
		{
			int			c = i / DP, j = i % DP;
			ct[i] = j < d ? a.cf[(size_t) (c0 + c) * d + j] : 0.0f;
		}
		if (!DIRECT)
			for (int i = threadIdx.x; i < kt; i += BLOCK)
				cb[i] = a.bias[c0 + i];
	};
	if (single)
		load_tile(0, k);
	__syncthreads();

	double		my_inertia = 0;
	unsigned int my_moved = 0;
	const int64_t group = (int64_t) BLOCK * PPT;
	for (int64_t base = (int64_t) blockIdx.x * group; base < a.rows; base += (int64_t) gridDim.x * group)
	{
		/*
		 * DIRECT rows of d <= 8 stay in registers to the epilogue; their kernels
		 * also load the old labels here, so that load's latency hides behind the
		 * distances (profiled at 10M x 2 x 8: warps waiting on it in the
		 * epilogue were a third of the stall samples; 0.85 -> 0.25 ms).
		 */
		constexpr bool ROW_REGS = DIRECT && DP <= 8;
		float		xr[PPT][DP];
		float		best[PPT];
		int			bi[PPT];
		int			old_lbl[ROW_REGS ? PPT : 1];
#pragma unroll
		for (int p = 0; p < PPT; p++)
		{
			int64_t		row = base + (int64_t) p * BLOCK + threadIdx.x;
			const float *src = a.x + row * d;
			bool		ok = row < a.rows;
#pragma unroll
			for (int j = 0; j < DP; j++)
				xr[p][j] = (ok && j < d) ? src[j] - (DIRECT ? 0.0f : __ldg(a.mu + j)) : 0.0f;	/* mu: L1, not 32 live registers */
			if (ROW_REGS)
				old_lbl[ROW_REGS ? p : 0] = ok ? a.labels[a.row0 + row] : -1;
			best[p] = __int_as_float(0x7f800000);	/* +inf */
			bi[p] = 0;
		}
		for (int c0 = 0; c0 < k; c0 += kt_max)
		{
			int			kt = min(kt_max, k - c0);
			if (!single)
			{
				__syncthreads();
				load_tile(c0, kt);
				__syncthreads();
			}
			for (int c = 0; c < kt; c++)
			{
				float		cv[DP];
				if (DP % 4 == 0)
				{
#pragma unroll
					for (int j = 0; j < DP; j += 4)
					{
						float4		t = *reinterpret_cast<const float4 *>(ct + (size_t) c * DP + j);
						cv[j] = t.x;
						cv[j + 1] = t.y;
						cv[j + 2] = t.z;
						cv[j + 3] = t.w;
					}
				}
				else
				{
#pragma unroll
					for (int j = 0; j < DP; j++)
						cv[j] = ct[(size_t) c * DP + j];
				}
				float		bias = DIRECT ? 0.0f : cb[c];
#pragma unroll
				for (int p = 0; p < PPT; p++)
				{
					float		s;
					if (DIRECT)
					{
						s = 0.0f;
#pragma unroll
						for (int j = 0; j < DP; j++)
						{
							float		t = __fsub_rn(xr[p][j], cv[j]);
							s = __fadd_rn(s, __fmul_rn(t, t));
						}
					}
					else
					{
						/* two chains for ILP */
						float		s0 = 0.0f, s1 = 0.0f;
#pragma unroll
						for (int j = 0; j < DP; j += 2)
						{
							s0 = fmaf(xr[p][j], cv[j], s0);
							if (j + 1 < DP)
								s1 = fmaf(xr[p][j + 1], cv[j + 1], s1);
						}
						s = bias + (s0 + s1);
					}
					if (s < best[p])
					{
						best[p] = s;
						bi[p] = c0 + c;
					}
				}
			}
		}
		/*
		 * epilogue: label, moved, exact distance, sums. DIRECT rows of d <= 8
		 * are still in registers (mu = 0, so xr == x exactly); wider DIRECT
		 * rows (register pressure) and DOT rows (centred) are re-read: the
		 * same thread just read them, so from L1/L2, not DRAM.
		 * Every lane of the warp runs the sums (warp-collective), rows past
		 * the end with label -1.
		 */
#pragma unroll
		for (int p = 0; p < PPT; p++)
		{
			int64_t		row = base + (int64_t) p * BLOCK + threadIdx.x;
			const bool	ok = row < a.rows;
			const int	lbl = ok ? bi[p] : -1;
			const float *src = a.x + (ok ? row : 0) * d;
			unsigned long long *dst = a.priv ? pacc : a.acc;
			if (ok)
			{
				int64_t		g = a.row0 + row;
				if ((ROW_REGS ? old_lbl[ROW_REGS ? p : 0] : a.labels[g]) != lbl)
					my_moved++;
				a.labels[g] = lbl;
				double		e = ROW_REGS ? exact_dist2_regs<DP>(xr[p], a.c64 + (size_t) lbl * d, d)
					: exact_dist2(src, a.c64 + (size_t) lbl * d, d);
				my_inertia += e;
				if (a.dist2)
					a.dist2[row] = e;
			}
			if (!a.agg)
			{
				/* v1: one atomic per element and row */
				if (ok)
				{
					for (int j = 0; j < d; j++)
						acc_add(dst, (int64_t) lbl * d + j, src[j], a.det, a.qscale);
					acc_count(dst, (int64_t) k * d + lbl, a.det);
				}
				continue;
			}
			const WarpGroups wg = warp_groups(lbl);
			const bool	add = wg.leader && ok;
			const int64_t cbase = (int64_t) (ok ? lbl : 0) * d;
			if (ROW_REGS)
			{
#pragma unroll
				for (int j = 0; j < DP; j++)
					if (j < d)
						group_add(dst, cbase + j, xr[p][j], wg, add, a.det, a.qscale);
			}
			else
			{
#pragma unroll 1
				for (int j = 0; j < d; j++)
					group_add(dst, cbase + j, ok ? src[j] : 0.0f, wg, add, a.det, a.qscale);
			}
			if (add)
			{
				unsigned	cnt = __popc(wg.peers);
				if (a.det)
					atomicAdd(dst + (int64_t) k * d + lbl, (unsigned long long) cnt);
				else
					atomicAdd(reinterpret_cast<double *>(dst) + (int64_t) k * d + lbl, (double) cnt);
			}
		}
	}
	finish_pass_block(a, slot_base, my_inertia, my_moved, red, &moved_sh, pacc, nacc);
}

/*
 * GEMM path, after cuBLAS wrote tile[r*k + c] = -2 x_r.c'_c for the tile's
 * rows: one warp per row scans its k values (coalesced), argmin with lowest
 * index on ties. UPDATE: the warp then recomputes the exact distance and adds
 * the row (lanes over columns) to the sums (d > 1024); otherwise only labels
 * and moves are written and the chunk's sorted update follows
 * (launch_sorted_update). Grid-stride over the tile's rows.
 */
template <bool UPDATE>
__global__ void __launch_bounds__(BLOCK)
tile_argmin_kernel(PassArgs a, int64_t slot_base)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int	d = a.d, k = a.k;
	const int64_t nacc = (int64_t) k * d + k;
	unsigned long long *pacc = reinterpret_cast<unsigned long long *>(smem);
	__shared__ double red[BLOCK / 32];
	__shared__ unsigned int moved_sh;
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	start_pass_block(a, &moved_sh, pacc, nacc);
	__syncthreads();

	double		my_inertia = 0;
	unsigned int my_moved = 0;
	const int64_t wpg = (int64_t) gridDim.x * (BLOCK / 32);
	for (int64_t row = (int64_t) blockIdx.x * (BLOCK / 32) + warp; row < a.rows; row += wpg)
	{
		const float *t = a.tile + row * k;
		float		best = __int_as_float(0x7f800000);
		int			bi = 0x7fffffff;
		for (int c = lane; c < k; c += 32)
		{
			float		v = a.bias[c] + t[c];
			if (v < best)
			{
				best = v;
				bi = c;
			}
		}
		for (int o = 16; o > 0; o >>= 1)
		{
			float		ov = __shfl_xor_sync(0xffffffffu, best, o);
			int			oi = __shfl_xor_sync(0xffffffffu, bi, o);
			if (ov < best || (ov == best && oi < bi))
			{
				best = ov;
				bi = oi;
			}
		}
		if (bi >= k)
			bi = 0;				/* all values NaN: cannot happen on finite data */
		if (!UPDATE)
		{
			if (lane == 0)
			{
				int64_t		g = a.row0 + row;
				if (a.labels[g] != bi)
					my_moved++;
				a.labels[g] = bi;
			}
			continue;
		}
		const float *src = a.x + row * d;
		const float *lo = a.xlo ? a.xlo + row * d : nullptr;
		const double *c = a.c64 + (size_t) bi * d;
		double		e = 0;
		for (int j = lane; j < d; j += 32)
		{
			double		u = (double) (lo ? src[j] + lo[j] : src[j]) - c[j];
			e += u * u;
		}
		for (int o = 16; o > 0; o >>= 1)
			e += __shfl_xor_sync(0xffffffffu, e, o);
		unsigned long long *dst = a.priv ? pacc : a.acc;
		for (int j = lane; j < d; j += 32)
			acc_add(dst, (int64_t) bi * d + j, lo ? src[j] + lo[j] : src[j], a.det, a.qscale);
		if (lane == 0)
		{
			int64_t		g = a.row0 + row;
			if (a.labels[g] != bi)
				my_moved++;
			a.labels[g] = bi;
			my_inertia += e;
			if (a.dist2)
				a.dist2[row] = e;
			acc_count(dst, (int64_t) k * d + bi, a.det);
		}
	}
	if (!UPDATE)
	{
		if (my_moved)
			atomicAdd(&moved_sh, my_moved);
		__syncthreads();
		if (threadIdx.x == 0 && moved_sh)
			atomicAdd(a.moved, (unsigned long long) moved_sh);
		return;
	}
	finish_pass_block(a, slot_base, my_inertia, my_moved, red, &moved_sh, pacc, nacc);
}

/* x -> (tf32_hi(x), x - tf32_hi(x)) in place and into lo: the 3xTF32 operands. */
__global__ void
split_tf32_kernel(float *x, float *lo, int64_t count)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (int64_t) gridDim.x * blockDim.x)
	{
		float		v = x[i], h = tf32_hi(v);
		x[i] = h;
		lo[i] = v - h;
	}
}

/* Fixed-order sum of the pass's inertia partials (one block). */
__global__ void
reduce_partials_kernel(const double *p, int64_t n, double *out)
{
	__shared__ double sh[1024];
	double		s = 0;
	for (int64_t i = threadIdx.x; i < n; i += 1024)
		s += p[i];
	s = block_tree_sum(s, sh);
	if (threadIdx.x == 0)
		*out = s;
}

/* max |x| over count floats: non-negative floats order like their bit patterns. */
__global__ void
maxabs_kernel(const float *x, int64_t count, float *out)
{
	float		m = 0.0f;
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
		m = fmaxf(m, fabsf(x[i]));
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	if ((threadIdx.x & 31) == 0)
		atomicMax(reinterpret_cast<unsigned int *>(out), __float_as_uint(m));
}

__global__ void
fill_int_kernel(int32_t *p, int64_t n, int32_t v)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		p[i] = v;
}

/* x[i][j] -= mu[j] in place (GEMM path: the device copy is centred once). */
__global__ void
center_kernel(float *x, int64_t count, int d, const float *mu)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
		x[i] = x[i] - mu[i % d];
}

/* ---- launchers ---- */

struct FusedCfg
{
	int			dp;
	int			ppt;
	bool		direct;
};

static FusedCfg
fused_cfg(const Run &r)
{
	int			d = r.d;
	if (r.path == PATH_DIRECT)
	{
		if (d <= 2) return {2, 8, true};
		if (d <= 4) return {4, 8, true};
		if (d <= 8) return {8, 4, true};
		return {16, 4, true};
	}
	if (d <= 16) return {16, 4, false};
	if (d <= 32) return {32, 2, false};
	return {64, 1, false};
}

static int
fused_kt(const Run &r, const FusedCfg &f)
{
	int			kt = CT_BYTES / ((f.dp + 1) * 4);
	return std::min(kt, r.k);
}

size_t
priv_bytes(const Run &r)
{
	return (size_t) (((int64_t) r.k * r.d + r.k) * 8 + 15) / 16 * 16;
}

/*
 * Private shared-memory sums fit when, next to other_smem (the fused kernel's
 * centroid tile), they leave two blocks per SM: half the SM's shared memory
 * less the 1 KB the runtime reserves per block and the static shared arrays
 * (H100: 228 KB per SM -> ~110 KB per block). Larger k x (d+1) stays on
 * global atomics: with that many addresses there is little contention.
 */
bool
priv_fits(const Run &r, size_t other_smem)
{
	if (r.sums == SUMS_GLOBAL)
		return false;
	int64_t		per_block = std::min<int64_t>(r.smem_per_sm / 2 - 1024 - 256, r.smem_optin);
	return (int64_t) (priv_bytes(r) + other_smem) <= per_block;
}

/*
 * Dynamic plus static shared memory above the 48 KB default needs an opt-in
 * per kernel, and the opt-in may not exceed the device limit less the
 * kernel's static arrays (asking for the full limit is an invalid argument).
 */
void
allow_smem(const void *kernel, const Run &r, size_t smem)
{
	cudaFuncAttributes fa;

	CK(cudaFuncGetAttributes(&fa, kernel));
	if (smem + fa.sharedSizeBytes > (size_t) r.smem_optin)
		CK(cudaErrorInvalidConfiguration);	/* a sizing bug: say so, never launch */
	if (smem + fa.sharedSizeBytes > 48 * 1024)
		CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
}

template <int DP, int PPT, bool DIRECT>
static void
launch_fused_t(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s, int grid, int kt, size_t smem)
{
	allow_smem((const void *) fused_kernel<DP, PPT, DIRECT>, r, smem);
	fused_kernel<DP, PPT, DIRECT><<<grid, BLOCK, smem, s>>>(a, slot_base, kt);
	CKLAUNCH("fused_kernel");
}

/*
 * Blocks per launch: enough rows per block, at most 2 blocks per SM (fused:
 * __launch_bounds__(BLOCK, 2)); the GEMM argmin kernel gets gemm_bps per SM
 * (default 2: 16 warps/SM, each on one row at a time, which may leave it
 * latency-bound at small k; PGKM_CUDA_GEMM_BPS measures more).
 */
int
fused_grid(Run &r)
{
	if (r.path == PATH_TILED)
		return 2 * r.sms;		/* update kernel's blocks (inertia slots); see launch_tiled_pass */
	if (r.path == PATH_GEMM)
	{
		int64_t		g = (r.tile_rows + (BLOCK / 32) - 1) / (BLOCK / 32);
		return (int) std::max<int64_t>(1, std::min<int64_t>(g, (int64_t) r.gemm_bps * r.sms));
	}
	FusedCfg	f = fused_cfg(r);
	int64_t		g = (r.chunk_rows + (int64_t) BLOCK * f.ppt - 1) / ((int64_t) BLOCK * f.ppt);
	return (int) std::max<int64_t>(1, std::min<int64_t>(g, 2LL * r.sms));
}

void
launch_pass_chunk(Run &r, const PassArgs &a0, int64_t slot_base, cudaStream_t s)
{
	PassArgs	a = a0;
	a.agg = r.sums == SUMS_GLOBAL ? 0 : 1;
	if (r.path == PATH_TILED)
	{
		launch_tiled_pass(r, a, slot_base, s);
		return;
	}
	if (r.path != PATH_GEMM)
	{
		FusedCfg	f = fused_cfg(r);
		int			kt = fused_kt(r, f);
		size_t		tile_smem = (size_t) kt * (f.dp + 1) * 4;
		a.priv = priv_fits(r, tile_smem) ? 1 : 0;
		size_t		smem = (a.priv ? priv_bytes(r) : 0) + tile_smem;
		int			grid = (int) std::min<int64_t>(r.grid, (a.rows + (int64_t) BLOCK * f.ppt - 1) / ((int64_t) BLOCK * f.ppt));
		grid = std::max(grid, 1);
#define FUSED(DP, PPT, DIR) if (f.dp == DP && f.ppt == PPT && f.direct == DIR) { launch_fused_t<DP, PPT, DIR>(r, a, slot_base, s, grid, kt, smem); r.launches++; return; }
		FUSED(2, 8, true) FUSED(4, 8, true) FUSED(8, 4, true) FUSED(16, 4, true)
		FUSED(16, 4, false) FUSED(32, 2, false) FUSED(64, 1, false)
#undef FUSED
		throw Failure {PGKM_ERR_INTERNAL, "no fused kernel for this shape"};
	}
	/*
	 * GEMM path: tiles of tile_rows rows, labels only, then one label-sorted
	 * update of the chunk (d <= 1024: flushes per run of equal labels). Wider
	 * rows add themselves in the argmin kernel; private sums are then flushed
	 * once per tile launch (grid x k x (d+1) global atomics instead of
	 * tile_rows x (d+1)): worth it only when a block sees many rows per cluster.
	 */
	const bool	sorted = r.d <= TILED_MAX_D;
	a.priv = !sorted && priv_fits(r, 0) && 2 * (int64_t) r.grid * r.k <= r.tile_rows ? 1 : 0;
	const void *argmin = sorted ? (const void *) tile_argmin_kernel<false> : (const void *) tile_argmin_kernel<true>;
	allow_smem(argmin, r, a.priv ? priv_bytes(r) : 0);
	CK(cudaGetLastError());
	const float alpha = -2.0f, zero = 0.0f, one = 1.0f;
	int64_t		ntile = (a.rows + r.tile_rows - 1) / r.tile_rows;
	for (int64_t t = 0; t < ntile; t++)
	{
		int64_t		t0 = t * r.tile_rows;
		int64_t		tr = std::min(r.tile_rows, a.rows - t0);
		/* tile = -2 x'.c' (3xTF32: the two small cross terms first, then hi.hi) */
		auto		gemm = [&](const float *c, const float *x, const float *beta) {
			cublasStatus_t bs = cublasSgemm(r.blas, CUBLAS_OP_T, CUBLAS_OP_N, r.k, (int) tr, r.d,
											&alpha, c, r.d, x + t0 * r.d, r.d, beta, r.d_tile, r.k);
			if (bs != CUBLAS_STATUS_SUCCESS)
				fail_blas(bs, "cublasSgemm");
			r.launches++;
		};
		if (r.tf32_terms == 3)
		{
			gemm(r.d_cf_lo, a.x, &zero);
			gemm(r.d_cf, a.xlo, &one);
			gemm(r.d_cf, a.x, &one);
		}
		else
			gemm(r.d_cf, a.x, &zero);
		PassArgs	b = a;
		b.x = a.x + t0 * r.d;
		b.xlo = a.xlo ? a.xlo + t0 * r.d : nullptr;
		b.rows = tr;
		b.row0 = a.row0 + t0;
		b.dist2 = a.dist2 ? a.dist2 + t0 : nullptr;
		b.tile = r.d_tile;
		int			grid = (int) std::max<int64_t>(1, std::min<int64_t>(r.grid, (tr + 7) / 8));
		size_t		smem = b.priv ? priv_bytes(r) : 0;
		if (sorted)
			tile_argmin_kernel<false><<<grid, BLOCK, smem, s>>>(b, slot_base + t * r.grid);
		else
			tile_argmin_kernel<true><<<grid, BLOCK, smem, s>>>(b, slot_base + t * r.grid);
		CKLAUNCH("tile_argmin_kernel");
		r.launches++;
	}
	if (sorted)
		launch_sorted_update(r, a, slot_base, s);
}

void
launch_reduce_partials(const double *partials, int64_t nslots, double *out, cudaStream_t s)
{
	reduce_partials_kernel<<<1, 1024, 0, s>>>(partials, nslots, out);
	CKLAUNCH("reduce_partials_kernel");
}

void
launch_maxabs(const float *x, int64_t count, float *out, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(1024, (count + 255) / 256);
	maxabs_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, count, out);
	CKLAUNCH("maxabs_kernel");
}

void
launch_center(float *x, int64_t rows, int d, const float *mu, cudaStream_t s)
{
	int64_t		count = rows * d;
	int64_t		g = std::min<int64_t>(8LL * 1024, (count + 255) / 256);
	center_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, count, d, mu);
	CKLAUNCH("center_kernel");
}

void
launch_split_tf32(float *x, float *lo, int64_t count, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(8LL * 1024, (count + 255) / 256);
	split_tf32_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(x, lo, count);
	CKLAUNCH("split_tf32_kernel");
}

void
launch_fill_int(int32_t *p, int64_t n, int32_t v, cudaStream_t s)
{
	int64_t		g = std::min<int64_t>(4096, (n + 255) / 256);
	fill_int_kernel<<<(int) std::max<int64_t>(g, 1), 256, 0, s>>>(p, n, v);
	CKLAUNCH("fill_int_kernel");
}

}							/* namespace pgkm_cuda */
