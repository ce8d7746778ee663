/*
 * kmeanspp.cu: greedy k-means++ on the device (sklearn's variant: 2 +
 * floor(ln k) candidates per step, keep the one that lowers the potential
 * most), seeded and deterministic.
 *
 * Sampled for large n so that init never dominates: it runs on
 * ns = min(n, max(131072, 128 k), 4M) rows, one drawn uniformly from each of
 * ns equal strata of the data (all rows when n is small). Every reduction is
 * in a fixed order (block sums, then one thread walks them), so a seed gives
 * the same centroids on every run. Stops early with k_found < k when every
 * remaining sample row coincides with a chosen centroid.
 *
 * Memory: a resident run's plan reserves the sample beside the data. A
 * streamed run lends init the buffers each pass fills afresh (chunk copies,
 * GEMM tile, distances; the next pass allocates them again), so the sample,
 * and with it the centroids, are the resident run's whenever the budget
 * holds the sample (a quarter of the data does at the shapes of
 * tests/gpu/test_plan.cpp); a smaller budget gets a smaller sample (still
 * seeded), and one below k rows is an error.
 */
#include "device/reduce.cuh"
#include "launch.cuh"
#include "rng.h"			/* the engine's SplitMix64: a seed means one stream everywhere */

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

namespace pgkm_cuda
{

static constexpr int KB = KPP_THREADS;

__device__ __forceinline__ float
sqdist_row(const float *a, const float *b, int d)
{
	float		s = 0.0f;
	for (int j = 0; j < d; j++)
	{
		float		t = a[j] - b[j];
		s = fmaf(t, t, s);
	}
	return s;
}

/* mind[i] = min(mind[i], |x_i - x_c|^2); first = 1 initialises. */
__global__ void
kpp_update_kernel(const float *xs, int64_t ns, int d, int64_t c, double *mind, int first)
{
	const float *cr = xs + c * d;
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < ns; i += (int64_t) gridDim.x * blockDim.x)
	{
		double		v = sqdist_row(xs + i * d, cr, d);
		mind[i] = first ? v : fmin(mind[i], v);
	}
}

/* Sum of mind over segment b (fixed order within the block). */
__global__ void
kpp_blocksum_kernel(const double *mind, int64_t ns, int64_t seg, double *bsum)
{
	__shared__ double sh[KB];
	int64_t		lo = blockIdx.x * seg, hi = min(ns, lo + seg);
	double		s = 0;
	for (int64_t i = lo + threadIdx.x; i < hi; i += KB)
		s += mind[i];
	s = block_tree_sum(s, sh);
	if (threadIdx.x == 0)
		bsum[blockIdx.x] = s;
}

/*
 * Thread l draws candidate l: the first row whose running sum of mind exceeds
 * u_l * total (rows of zero weight are never drawn). Sequential walks, fixed order.
 */
__global__ void
kpp_search_kernel(const double *mind, int64_t ns, int64_t seg, const double *bsum, int nb,
				  const double *u, int L, int64_t *cand, double *total_out)
{
	int			l = threadIdx.x;
	double		total = 0;
	for (int b = 0; b < nb; b++)
		total += bsum[b];
	if (l == 0)
		*total_out = total;
	if (l >= L)
		return;
	double		target = u[l] * total;
	double		run = 0;
	int			b = 0;
	for (; b < nb - 1; b++)
	{
		if (run + bsum[b] > target)
			break;
		run += bsum[b];
	}
	int64_t		lo = (int64_t) b * seg, hi = min(ns, lo + seg);
	int64_t		pick = -1, last_pos = -1;
	for (int64_t i = lo; i < hi; i++)
	{
		if (mind[i] > 0)
			last_pos = i;
		run += mind[i];
		if (run > target && mind[i] > 0)
		{
			pick = i;
			break;
		}
	}
	if (pick < 0)
		pick = last_pos >= 0 ? last_pos : lo;	/* rounding at the very end */
	cand[l] = pick;
}

/* Per-block partial potentials sum_i min(mind_i, |x_i - x_cand_l|^2). */
__global__ void
kpp_potential_kernel(const float *xs, int64_t ns, int d, const double *mind, const int64_t *cand, int L,
					 double *part)
{
	__shared__ double sh[KB];
	double		acc[16];
	for (int l = 0; l < L; l++)
		acc[l] = 0;
	for (int64_t i = (int64_t) blockIdx.x * KB + threadIdx.x; i < ns; i += (int64_t) gridDim.x * KB)
	{
		const float *xr = xs + i * d;
		double		m = mind[i];
		for (int l = 0; l < L; l++)
			acc[l] += fmin(m, (double) sqdist_row(xr, xs + cand[l] * d, d));
	}
	for (int l = 0; l < L; l++)
	{
		double		t = block_tree_sum(acc[l], sh);
		if (threadIdx.x == 0)
			part[(size_t) l * gridDim.x + blockIdx.x] = t;
		__syncthreads();		/* every thread has read sh[0] before the next sum writes sh */
	}
}

__global__ void
kpp_reduce_kernel(const double *part, int g, int L, double *pot)
{
	int			l = threadIdx.x;
	if (l >= L)
		return;
	double		s = 0;
	for (int b = 0; b < g; b++)
		s += part[(size_t) l * g + b];
	pot[l] = s;
}

/* Temporary buffers of one init, freed on every exit path. */
struct KppBuffers
{
	Run		   &r;
	std::vector<std::pair<void *, size_t>> dev;
	void	   *pinned = nullptr;
	explicit	KppBuffers(Run &run) : r(run) {}
	void	   *alloc(size_t bytes)
	{
		void	   *p = r.buf.alloc(bytes);
		dev.push_back({p, bytes});
		return p;
	}
	~KppBuffers()
	{
		cudaStreamSynchronize(r.buf.s_comp);
		for (auto &pb : dev)
			r.buf.release(pb.first, pb.second);
		if (pinned)
			cudaFreeHost(pinned);
	}
};

int32_t
kmeanspp(Run &r, uint64_t seed, double *centroids)
{
	const int64_t n = r.n;
	const int	d = r.d, k = r.k;
	const int	L = kpp_candidates(k);
	const cudaStream_t s = r.buf.s_comp;
	pgkm::SplitMix64 rng(seed ^ pgkm::KPP_SAMPLE_STREAM);

	const int64_t want = r.plan.kpp_rows;
	/* resident x is exact unless 3xTF32 split it (its TF32 part alone would be seeded on) */
	const bool	use_resident = want == n && r.plan.resident && r.plan.product != PRODUCT_3XTF32;
	lend_pass_buffers(r);		/* streamed runs: the chunk copies, tile and distances */
	const int64_t avail = r.buf.budget - (int64_t) r.buf.allocated;
	const int64_t ns = kpp_rows_within(want, avail, d, k, r.limits.sms, !use_resident);
	if (ns < k)
		fail(PGKM_ERR_NOMEM, "GPU memory budget of %lld bytes leaves room for a k-means++ sample of %lld rows, "
			 "fewer than k = %d: raise the GPU memory limit or use random init",
			 (long long) r.buf.budget, (long long) ns, k);
	if (use_resident && ns != n)
		fail(PGKM_ERR_INTERNAL, "k-means++ sample of a resident run does not fit its plan");
	r.kpp_rows_used = ns;
	std::vector<int64_t> rows;
	const bool	all = (ns == n);
	if (!all)
	{
		rows.resize(ns);
		pgkm::kpp_strata_rows(n, ns, rng, rows.data());
	}
	KppBuffers	B(r);
	const float *xs;
	if (use_resident)
		xs = r.buf.d_x;
	else
	{
		CK(cudaMallocHost(&B.pinned, (size_t) ns * d * 4));
		float	   *hp = (float *) B.pinned;
		for (int64_t i = 0; i < ns; i++)
			memcpy(hp + i * d, r.x + (all ? i : rows[i]) * d, (size_t) d * 4);
		float	   *dx = (float *) B.alloc((size_t) ns * d * 4);
		CK(cudaMemcpyAsync(dx, hp, (size_t) ns * d * 4, cudaMemcpyHostToDevice, s));
		/* every row streamed: seed on the rows as a resident run keeps them (GEMM: shifted, exactly) */
		if (all && !r.plan.resident && r.plan.path == PATH_GEMM && r.plan.product != PRODUCT_3XTF32)
			launch_shift(dx, ns, d, r.buf.d_mu, s);
		xs = dx;
	}
	const int	nb = (int) std::min<int64_t>(1024, (ns + KB - 1) / KB);
	const int64_t seg = (ns + nb - 1) / nb;
	const int	g = (int) std::min<int64_t>(2LL * r.limits.sms, (ns + KB - 1) / KB);
	double	   *mind = (double *) B.alloc(ns * 8);
	double	   *bsum = (double *) B.alloc(nb * 8);
	double	   *part = (double *) B.alloc((size_t) L * g * 8);
	/* small exchange block: u[L] | pot[L] | total | cand[L] */
	size_t		xbytes = (size_t) (2 * L + 1) * 8 + (size_t) L * 8;
	unsigned char *dxch = (unsigned char *) B.alloc(xbytes);
	double	   *du = (double *) dxch, *dpot = du + L, *dtotal = dpot + L;
	int64_t    *dcand = (int64_t *) (dtotal + 1);
	std::vector<unsigned char> hx(xbytes);
	double	   *hu = (double *) hx.data(), *hpot = hu + L, *htotal = hpot + L;
	int64_t    *hcand = (int64_t *) (htotal + 1);

	std::vector<int64_t> chosen;
	chosen.push_back((int64_t) (rng.next() % (uint64_t) ns));
	int			ug = (int) std::min<int64_t>(4LL * r.limits.sms, (ns + KB - 1) / KB);
	kpp_update_kernel<<<ug, KB, 0, s>>>(xs, ns, d, chosen[0], mind, 1);
	CKLAUNCH("kpp_update_kernel");
	for (int step = 1; step < k; step++)
	{
		check_interrupt(r);
		for (int l = 0; l < L; l++)
			hu[l] = rng.uniform();
		CK(cudaMemcpyAsync(du, hu, L * 8, cudaMemcpyHostToDevice, s));
		kpp_blocksum_kernel<<<nb, KB, 0, s>>>(mind, ns, seg, bsum);
		CKLAUNCH("kpp_blocksum_kernel");
		kpp_search_kernel<<<1, 32, 0, s>>>(mind, ns, seg, bsum, nb, du, L, dcand, dtotal);
		CKLAUNCH("kpp_search_kernel");
		kpp_potential_kernel<<<g, KB, 0, s>>>(xs, ns, d, mind, dcand, L, part);
		CKLAUNCH("kpp_potential_kernel");
		kpp_reduce_kernel<<<1, 32, 0, s>>>(part, g, L, dpot);
		CKLAUNCH("kpp_reduce_kernel");
		CK(cudaMemcpyAsync(hpot, dpot, xbytes - (size_t) L * 8, cudaMemcpyDeviceToHost, s));
		CK(cudaStreamSynchronize(s));
		if (!(*htotal > 0))
			break;				/* every sample row coincides with a chosen centroid */
		int			best = 0;
		for (int l = 1; l < L; l++)
			if (hpot[l] < hpot[best])
				best = l;
		chosen.push_back(hcand[best]);
		kpp_update_kernel<<<ug, KB, 0, s>>>(xs, ns, d, hcand[best], mind, 0);
		CKLAUNCH("kpp_update_kernel");
	}
	CK(cudaStreamSynchronize(s));
	int32_t		found = (int32_t) chosen.size();
	for (int c = 0; c < k; c++)
	{
		int64_t		i = chosen[c < found ? c : 0];
		const float *src = r.x + (all ? i : rows[i]) * d;
		for (int j = 0; j < d; j++)
			centroids[(size_t) c * d + j] = src[j];
	}
	make_current(r, centroids);
	return found;
}

}							/* namespace pgkm_cuda */
