/*
 * exact_labels.cu: the fp64 decision of the rows the TILED kernel listed
 * (their float runner-up was not provably worse than their best). A warp per
 * row, the row read once into registers (d <= 1024: 32 features per lane),
 * in two levels:
 *   1. each candidate's direct-form float distance E_c = sum_j (x_j - f_cj)^2,
 *      f = float(c) (in shared memory when k x d floats fit), lanes over
 *      features: it brackets ||x - c|| within a few float roundings, so
 *      every candidate provably further than another in fp64 drops out;
 *   2. the rest, when more than one (near-ties at float resolution), by
 *      warp_exact_label (device/exact_label.cuh): fp64 distances, then
 *      sqdist_exact's sequential sum on fp64-level ties.
 * Candidates: the TILED kernel's mask (k <= 64), else every centroid. The
 * label is written and its move counted here. Order-free (labels per row,
 * integer counts), so deterministic runs stay bit-identical whatever the
 * list's order.
 *
 * Why level 1 is exact. u = 2^-24, w = 2^-53, L = ceil(d / 32) features per
 * lane. E_c: per lane t = fl(x_j - f_j) (one rounding, exact when subnormal),
 * fmaf(t, t, e) in a chain of L (the first add to 0 is exact; four
 * candidates' chains side by side, each in feature order), then 5
 * butterfly adds (every lane the same value: each add is commutative). All
 * terms are >= 0, each through at most L + 7 roundings, so with D'_c =
 * ||x - f_c||^2, |E_c - D'_c| <= g1 D'_c + 2 au, g1 = gamma_{L+8}, au =
 * (d + 32) 2^-149 for the underflows of the fmaf (2^-150 each). Hence
 * lo_c <= sqrt(D'_c) <= hi_c with
 *   lo_c = sqrt((E_c - 2 au)(1 - g1)),  hi_c = sqrt((E_c + 2 au)(1 + 2 g1)),
 * and | ||x - c|| - sqrt(D'_c) | <= ||c - f_c|| <= rho (test.rho_f, from the
 * host: float_centroid_radius), so ||x - c|| lies in [lo_c - rho, hi_c + rho].
 * label_bounds.cpp's (i): R_c > R_b when ||x - c|| > (1 + 2 g2) ||x - b||,
 * g2 = gamma^w_{d+2}. So with H = min_c (hi_c + rho) over the candidates,
 * a candidate with lo_c - rho > H (1 + 2 g2) has R_c > R_b for the b of H:
 * it is not the label. Each fp64 step here rounds by w; the factors
 * (1 -+ 2^-40) cover them. A non-finite E_c (overflow, NaN) or rho gives
 * [-inf, inf]: that candidate always goes on, and if H is infinite every one.
 */
#include "device/bracket.cuh"
#include "launch.cuh"

#include <algorithm>

namespace pgkm_cuda
{

static constexpr int DL_THREADS = 512;
static constexpr int DL_WARPS = DL_THREADS / 32;
static constexpr int DL_PER_LANE = TILED_MAX_D / 32;	/* row features a lane holds */
static constexpr int DL_GROUP = 4;	/* candidates summed side by side (open rows have ~4 at d = 768) */

/*
 * Grid-stride over the list, a warp per row. Dynamic shared memory: k floats
 * per warp (E_c), after float(c) for every centroid (k x d) when cs_in_smem.
 */
__global__ void __launch_bounds__(DL_THREADS, 1)
decide_listed_kernel(PassArgs a, Bracket br, int cs_in_smem)
{
	extern __shared__ float smem[];
	const int	lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int	d = a.d, k = a.k;
	const size_t kd = (size_t) k * d;
	float	   *cs = smem;
	float	   *ev = smem + (cs_in_smem ? kd : 0) + (size_t) warp * k;
	const unsigned int count = *a.list_count;
	if (blockIdx.x * DL_WARPS >= count)
		return;					/* the whole block idle (the list is often short or empty) */
	if (cs_in_smem)
	{
		for (size_t i = threadIdx.x; i < kd; i += blockDim.x)
			cs[i] = __double2float_rn(a.c64[i]);
		__syncthreads();
	}
	unsigned int moved = 0;
	for (unsigned int i = blockIdx.x * DL_WARPS + warp; i < count; i += gridDim.x * DL_WARPS)
	{
		const int64_t row = a.list[i];
		const float *x = a.x + row * d;
		float		xr[DL_PER_LANE];
#pragma unroll
		for (int q = 0; q < DL_PER_LANE; q++)
			xr[q] = lane + 32 * q < d ? x[lane + 32 * q] : 0.0f;
		const unsigned long long mask = a.list_mask ? a.list_mask[i] : 0;
		const int64_t g = a.row0 + row;
		const int32_t old = lane == 0 ? a.labels[g] : 0;	/* loaded early: used at the end */
		auto		is_cand = [&](int c) { return c < k && (!a.list_mask || ((mask >> c) & 1)); };
		/* the candidate after c (-1: none), in index order */
		auto		next = [&](int c) {
			if (a.list_mask)
				return c >= 63 ? -1 : __ffsll((long long) (mask & (~0ull << (c + 1)))) - 1;
			return c + 1 < k ? c + 1 : -1;
		};
		/* level 1: E_c of the candidates, four at a time (independent sums and butterflies), lanes over features */
		for (int c0 = next(-1); c0 >= 0;)
		{
			int			cc[DL_GROUP];
			cc[0] = c0;
#pragma unroll
			for (int u = 1; u < DL_GROUP; u++)
				cc[u] = cc[u - 1] >= 0 ? next(cc[u - 1]) : -1;
			c0 = cc[DL_GROUP - 1] >= 0 ? next(cc[DL_GROUP - 1]) : -1;
			float		e[DL_GROUP];
#pragma unroll
			for (int u = 0; u < DL_GROUP; u++)
				e[u] = 0.0f;
#pragma unroll
			for (int q = 0; q < DL_PER_LANE; q++)
			{
				const int	j = lane + 32 * q;
				if (j < d)
#pragma unroll
					for (int u = 0; u < DL_GROUP; u++)
						if (cc[u] >= 0)
						{
							const size_t o = (size_t) cc[u] * d + j;
							const float f = cs_in_smem ? cs[o] : __double2float_rn(a.c64[o]);
							const float t = __fsub_rn(xr[q], f);
							e[u] = fmaf(t, t, e[u]);
						}
			}
			for (int o = 16; o > 0; o >>= 1)
#pragma unroll
				for (int u = 0; u < DL_GROUP; u++)
					e[u] = __fadd_rn(e[u], __shfl_xor_sync(FULL, e[u], o));
			if (lane == 0)
#pragma unroll
				for (int u = 0; u < DL_GROUP; u++)
					if (cc[u] >= 0)
						ev[cc[u]] = e[u];
		}
		__syncwarp();
		/* H and its centroid (lowest index on ties), lanes over centroids */
		double		h = dinf();
		int			hb = 0x7fffffff;
		for (int c = lane; c < k; c += 32)
			if (is_cand(c))
			{
				const double hc = bracket_hi(br, ev[c]);
				if (hc < h || hb == 0x7fffffff)
				{
					h = hc;
					hb = c;
				}
			}
		for (int o = 16; o > 0; o >>= 1)
		{
			const double oh = __shfl_xor_sync(FULL, h, o);
			const int	oc = __shfl_xor_sync(FULL, hb, o);
			if (oh < h || (oh == h && oc < hb) || hb == 0x7fffffff)
			{
				h = oh;
				hb = oc;
			}
		}
		const double thr = h * br.band;
		auto		survives = [&](int batch) {
			const int	c = 32 * batch + lane;
			return is_cand(c) && !(bracket_lo(br, ev[c]) > thr);
		};
		int			left = 0;
		for (int c0 = 0; c0 < k; c0 += 32)
			left += __popc(__ballot_sync(FULL, survives(c0 >> 5)));
		int			lbl = hb;
		if (left > 1)			/* level 2 */
			lbl = warp_exact_label(survives, k, hb, x, nullptr, nullptr, a.c64, d);
		if (lbl >= k)
			lbl = 0;			/* no candidate: cannot happen (the float argmin is one) */
		if (lane == 0)
		{
			moved += old != lbl;
			a.labels[g] = lbl;
		}
		__syncwarp();			/* ev is rewritten by the next row */
	}
	if (lane == 0)
	{
		if (moved)
			atomicAdd(a.moved, (unsigned long long) moved);
		if (blockIdx.x == 0 && warp == 0)	/* block 0 runs whenever count > 0 */
			atomicAdd(a.decided, (unsigned long long) count);
	}
}

/*
 * After the TILED kernel of a chunk: decides the listed rows (the count is
 * read on the device, so no host round trip). float(c) is read from shared
 * memory when it fits beside the warps' E_c (1M x 768 x 64: 197 KB), else
 * converted from c64 as read; as many blocks as fit per SM; idle when the
 * list is empty.
 */
void
launch_decide_listed(Run &r, const PassArgs &a, cudaStream_t s)
{
	const size_t kd = (size_t) r.k * r.d;
	const size_t ev = (size_t) DL_WARPS * r.k * sizeof(float);
	cudaFuncAttributes fa;
	CK(cudaFuncGetAttributes(&fa, (const void *) decide_listed_kernel));
	const bool	cs = ev + kd * sizeof(float) + fa.sharedSizeBytes <= (size_t) r.limits.smem_optin;
	const size_t smem = ev + (cs ? kd * sizeof(float) : 0);
	const Bracket br = make_bracket((r.d + 31) / 32 + 8, r.d, r.test.rho_f);
	allow_smem((const void *) decide_listed_kernel, r, smem);
	int			per_sm = 0;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, decide_listed_kernel, DL_THREADS, smem));
	decide_listed_kernel<<<std::max(1, per_sm) * r.limits.sms, DL_THREADS, smem, s>>>(a, br, cs ? 1 : 0);
	CKLAUNCH("decide_listed_kernel");
	r.launches++;
}

}							/* namespace pgkm_cuda */
