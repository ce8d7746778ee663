/*
 * centroid_geometry.cu: what the bounded passes (Hamerly, Elkan, sort) know
 * of the centroids, by directed rounding so that each bound holds for the
 * real distances between the fp64 centroids:
 *   - float(c_j) where h.cf is given (Hamerly's float level);
 *   - with drifts: delta_j >= ||c_j - c'_j|| (c' the centroids the bounds
 *     refer to, h.cprev) and s_j <= min_{j' != j} ||c_j - c_j'|| / 2 (h.geom);
 *   - where h.pairs is given: pairs(j, o) <= ||c_j - c_o|| as a float
 *     rounded down (and pair_idx(j, o) = o where given, the sort's values).
 * Each block takes GEO_J centroids (GEO_J x d fp64 of dynamic shared
 * memory), each thread its other centroids: squared distances summed
 * serially rounded down at every operation (below the real value in any
 * order); warp w < GEO_J the drift of centroid j0 + w, rounded up.
 */
#include "device/exact_label.cuh"
#include "hamerly_args.h"
#include "launch.cuh"

namespace pgkm_cuda
{

static constexpr int GEO_THREADS = 256;
static constexpr int GEO_J = 4;			/* centroids per block */

/* Warp-collective: ||u - v||^2 rounded up at every operation, so above the real value; every lane gets it. */
__device__ __forceinline__ double
warp_dist2_up(const double *u, const double *v, int d)
{
	double		s = 0;
	for (int f = threadIdx.x & 31; f < d; f += 32)
	{
		const double p = u[f], q = v[f];
		const double t = p >= q ? __dsub_ru(p, q) : __dsub_ru(q, p);
		s = __dadd_ru(s, __dmul_ru(t, t));
	}
	for (int off = 16; off > 0; off >>= 1)
		s = __dadd_ru(s, __shfl_xor_sync(FULL, s, off));
	return s;
}

__global__ void __launch_bounds__(GEO_THREADS)
geometry_kernel(HamArgs a, int drifts)
{
	extern __shared__ double cj[];
	__shared__ double wmin[GEO_THREADS / 32][GEO_J];
	const int	j0 = blockIdx.x * GEO_J, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int	d = a.d, k = a.k, jn = min(GEO_J, k - j0);
	for (int q = threadIdx.x; q < GEO_J * d; q += GEO_THREADS)
	{
		const double v = q < jn * d ? a.c64[(size_t) j0 * d + q] : 0.0;
		cj[q] = v;
		if (a.cf && q < jn * d)
			a.cf[(size_t) j0 * d + q] = __double2float_rn(v);
	}
	__syncthreads();
	if (!drifts && !a.pairs)
		return;
	double		m[GEO_J];
#pragma unroll
	for (int jj = 0; jj < GEO_J; jj++)
		m[jj] = dinf();
	for (int o = threadIdx.x; o < k; o += GEO_THREADS)
	{
		const double *co = a.c64 + (size_t) o * d;
		double		s[GEO_J] = {};
		for (int f = 0; f < d; f++)
		{
			const double q = co[f];
#pragma unroll
			for (int jj = 0; jj < GEO_J; jj++)
			{
				const double p = cj[jj * d + f];
				const double t = p >= q ? __dsub_rd(p, q) : __dsub_rd(q, p);
				s[jj] = __dadd_rd(s[jj], __dmul_rd(t, t));
			}
		}
#pragma unroll
		for (int jj = 0; jj < GEO_J; jj++)
		{
			if (o != j0 + jj)
				m[jj] = fmin(m[jj], s[jj]);
			if (a.pairs && jj < jn)
			{
				const size_t at = (size_t) (j0 + jj) * k + o;
				a.pairs[at] = __double2float_rd(__dsqrt_rd(s[jj]));
				if (a.pair_idx)
					a.pair_idx[at] = o;
			}
		}
	}
	if (!drifts)
		return;
#pragma unroll
	for (int jj = 0; jj < GEO_J; jj++)
	{
		for (int off = 16; off > 0; off >>= 1)
			m[jj] = fmin(m[jj], __shfl_xor_sync(FULL, m[jj], off));
		if (lane == 0)
			wmin[warp][jj] = m[jj];
	}
	const double dr = warp < jn ? warp_dist2_up(cj + (size_t) warp * d, a.cprev + (size_t) (j0 + warp) * d, d) : 0;
	__syncthreads();
	if (warp < jn && lane == 0)
	{
		double		mm = wmin[0][warp];
		for (int w = 1; w < GEO_THREADS / 32; w++)
			mm = fmin(mm, wmin[w][warp]);
		a.geom[j0 + warp] = __dsqrt_ru(dr);
		a.geom[k + j0 + warp] = __dmul_rd(0.5, __dsqrt_rd(mm));	/* k = 1: infinite */
	}
}

void
launch_centroid_geometry(Run &r, const HamArgs &h, bool drifts, cudaStream_t s)
{
	geometry_kernel<<<(h.k + GEO_J - 1) / GEO_J, GEO_THREADS, (size_t) GEO_J * h.d * sizeof(double), s>>>(h, drifts);
	CKLAUNCH("geometry_kernel");
	r.launches++;
}

}							/* namespace pgkm_cuda */
