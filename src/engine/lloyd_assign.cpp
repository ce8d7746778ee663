/*
 * lloyd_assign.cpp: Lloyd's assignment on the CPU: every row against every
 * centroid, in one of two float32 forms chosen by shape:
 *   - direct (small d): sum((x - c)^2) over features in order, one SIMD lane
 *     per row;
 *   - GEMM (larger d): ||c||^2 - 2 x.c on rows and centroids centred by the
 *     column means (no cancellation from a large common offset), through
 *     single-threaded OpenBLAS sgemm per chunk.
 * Each keeps the float layout of the centroids it reads. The exact fp64
 * distance of the chosen centroid is the CPU device's business.
 */
#include "cpu_assign.h"
#include "internal_hooks.h"
#include "simd.h"
#include "util.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <vector>

namespace pgkm
{

/*
 * Crossover between the direct kernel and sgemm, measured on this box (Xeon
 * with AVX-512, 2 cores, OpenBLAS 0.3.21, n = 300k, one thread, seconds per
 * assignment pass, direct / GEMM):
 *   k = 64: d = 4 0.051/0.061, d = 8 0.064/0.063, d = 12 0.057/0.058,
 *           d = 16 0.072/0.054, d = 24 0.094/0.068, d = 32 0.114/0.077
 *   k = 8:  d = 8 0.016/0.014, d = 16 0.024/0.016, d = 32 0.044/0.031
 * so GEMM from d = 8 on (a tie at d = 8, k = 64), direct below.
 */
static std::atomic<int32_t> gemm_min_d {8};

bool
use_gemm(int32_t d, int32_t k)
{
	return d >= gemm_min_d.load(std::memory_order_relaxed) && k >= 4;
}

extern "C" int32_t
pgkm_internal_set_gemm_min_d(int32_t d)
{
	return gemm_min_d.exchange(d);
}

/*
 * Rows per block of the direct kernel: one lane per row (4 AVX2 vectors), so
 * the argmin over centroids is a lane-wise compare + blend with no padding of
 * k and no horizontal reduction.
 */
static constexpr int32_t DIRECT_RB = 32;
static constexpr int DIRECT_NV = DIRECT_RB / 8;

/*
 * Direct argmin of a block of DIRECT_RB rows held transposed in xt (d x RB):
 * for every centroid c in order, sum (x - c)^2 over features in order (the
 * same float for each distance as the scalar loop, which the GPU plugin's
 * direct path reproduces), then keep it where strictly smaller, so ties go to
 * the lowest index. D > 0 fixes d at compile time (unrolled), D = 0 is any d.
 */
template <int D>
__attribute__((always_inline)) static inline void
direct_block(const float *xt, int32_t dd, const float *cent, int32_t k, int32_t *bi)
{
	const int32_t d = D > 0 ? D : dd;
	vf8			best[DIRECT_NV];
	vi8			idx[DIRECT_NV];
	for (int v = 0; v < DIRECT_NV; v++)
	{
		best[v] = vf8 {} + std::numeric_limits<float>::infinity();
		idx[v] = vi8 {};
	}
	for (int32_t c = 0; c < k; c++)
	{
		const float *cr = cent + (size_t) c * d;
		vf8			acc[DIRECT_NV] = {};
		for (int32_t j = 0; j < d; j++)
		{
			const vf8	cj = splat(cr[j]);
			for (int v = 0; v < DIRECT_NV; v++)
			{
				vf8			xv;
				memcpy(&xv, xt + (size_t) j * DIRECT_RB + v * 8, sizeof(xv));
				vf8			t = xv - cj;
				acc[v] += t * t;
			}
		}
		const vi8	cv = vi8 {} + c;
		for (int v = 0; v < DIRECT_NV; v++)
		{
			const vi8	lt = acc[v] < best[v];
			best[v] = lt ? acc[v] : best[v];
			idx[v] = lt ? cv : idx[v];
		}
	}
	memcpy(bi, idx, sizeof(idx));
}

/*
 * Direct argmin for small d over k x d float centroids (row-major, not
 * padded); xt is scratch of d * DIRECT_RB floats. Rows past the end of a
 * partial block repeat the last row. Compiled for AVX2 and a baseline, picked
 * at load time; neither contracts to FMA, so both give the same floats.
 */
PGKM_TARGET_CLONES static void
direct_argmin(const float *x, int64_t rows, int32_t d, const float *cent, int32_t k,
			  float *xt, int32_t *out)
{
	int32_t		bi[DIRECT_RB];
	for (int64_t i = 0; i < rows; i += DIRECT_RB)
	{
		const int64_t nr = std::min<int64_t>(DIRECT_RB, rows - i);
		for (int r = 0; r < DIRECT_RB; r++)
		{
			const float *xr = x + (i + std::min<int64_t>(r, nr - 1)) * d;
			for (int32_t j = 0; j < d; j++)
				xt[(size_t) j * DIRECT_RB + r] = xr[j];
		}
		switch (d)
		{
			case 1: direct_block<1>(xt, d, cent, k, bi); break;
			case 2: direct_block<2>(xt, d, cent, k, bi); break;
			case 3: direct_block<3>(xt, d, cent, k, bi); break;
			case 4: direct_block<4>(xt, d, cent, k, bi); break;
			default: direct_block<0>(xt, d, cent, k, bi); break;
		}
		for (int64_t r = 0; r < nr; r++)
			out[i + r] = bi[r];
	}
}

class LloydAssign : public CpuAssign
{
public:
	LloydAssign(const float *x, int32_t d, int32_t kmax, const double *mean, int workers)
		: x_(x), d_(d), k_(kmax)
	{
		openblas_single_threaded();
		meanf_.resize(d);
		for (int32_t j = 0; j < d; j++)
			meanf_[j] = (float) mean[j];
		centf_.assign((size_t) kmax * d, 0.0f);
		centd_.assign((size_t) kmax * d, 0.0f);
		cnorm_.assign(kmax, 0.0f);
		scratch_.resize(workers);
	}

	void		set_centroids(const double *centroids, int32_t k) override;
	void		nearest(int64_t r0, int64_t r1, int worker, int32_t *out) override
	{
		if (use_gemm(d_, k_))
			gemm_nearest(r0, r1, worker, out);
		else
		{
			std::vector<float> &xt = scratch_[worker].a;
			xt.resize((size_t) d_ * DIRECT_RB);
			direct_argmin(x_ + r0 * d_, r1 - r0, d_, centd_.data(), k_, xt.data(), out);
		}
	}

private:
	void		gemm_nearest(int64_t r0, int64_t r1, int worker, int32_t *out);

	const float *x_;
	int32_t		d_;
	int32_t		k_;
	std::vector<float> meanf_;
	std::vector<float> centf_;	/* GEMM: centred float centroids, k x d */
	std::vector<float> centd_;	/* direct: float centroids, k x d */
	std::vector<float> cnorm_;	/* GEMM: ||centred c||^2 */
	struct Scratch
	{
		std::vector<float> a;	/* chunk rows, centred (GEMM); transposed row block (direct) */
		std::vector<float> dots;	/* chunk x k products (GEMM) */
	};
	std::vector<Scratch> scratch_;
};

/* Prepares both float layouts, so the form may be chosen per call. */
void
LloydAssign::set_centroids(const double *centroids, int32_t k)
{
	k_ = k;
	const int32_t d = d_;
	for (int32_t c = 0; c < k; c++)
	{
		float		norm = 0;
		for (int32_t j = 0; j < d; j++)
		{
			double		v = centroids[(size_t) c * d + j];
			float		vc = (float) (v - (double) meanf_[j]);	/* the same shift as the rows */
			centf_[(size_t) c * d + j] = vc;
			norm += vc * vc;
			centd_[(size_t) c * d + j] = (float) v;
		}
		cnorm_[c] = norm;
	}
}

/* argmin over c of ||c||^2 - 2 x.c, rows and centroids centred; ties to the lowest index. */
void
LloydAssign::gemm_nearest(int64_t r0, int64_t r1, int worker, int32_t *out)
{
	const int32_t d = d_, k = k_;
	const int64_t rows = r1 - r0;
	Scratch    &s = scratch_[worker];
	s.a.resize((size_t) rows * d);
	s.dots.resize((size_t) rows * k);
	float	   *a = s.a.data();
	const float *mf = meanf_.data();
	for (int64_t r = 0; r < rows; r++)
	{
		const float *xi = x_ + (r0 + r) * d;
		float	   *ar = a + r * d;
		for (int32_t j = 0; j < d; j++)
			ar[j] = xi[j] - mf[j];
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, k, d, 1.0f, a, d,
				centf_.data(), d, 0.0f, s.dots.data(), k);
	const float *cn = cnorm_.data();
	for (int64_t r = 0; r < rows; r++)
	{
		const float *dr = s.dots.data() + r * k;
		float		best = std::numeric_limits<float>::infinity();
		int32_t		bi = 0;
		for (int32_t c = 0; c < k; c++)
		{
			float		v = cn[c] - 2.0f * dr[c];
			if (v < best)
			{
				best = v;
				bi = c;
			}
		}
		out[r] = bi;
	}
}

std::unique_ptr<CpuAssign>
make_lloyd_assign(const float *x, int32_t d, int32_t kmax, const double *mean, int workers)
{
	return std::unique_ptr<CpuAssign>(new LloydAssign(x, d, kmax, mean, workers));
}

}							/* namespace pgkm */
