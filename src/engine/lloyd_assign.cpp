/*
 * lloyd_assign.cpp: Lloyd's assignment on the CPU: every row against every
 * centroid, in one of two float32 forms chosen by shape:
 *   - direct (small d): sum((x - c)^2) over features in order, one SIMD lane
 *     per row;
 *   - GEMM (larger d): ||c||^2 - 2 x.c on rows and centroids centred by the
 *     column means (no cancellation from a large common offset), through
 *     the register-tiled kernel of the best instruction set
 *     (argmin_kernels.h: the argmin runs on the accumulators, no BLAS).
 * Each keeps the float layout of the centroids it reads. Both track the
 * runner-up too: a row whose runner-up is not provably worse than its best
 * (label_bounds.h) is decided in fp64 among the centroids that may still
 * win, so the label is the exact one of exact_distance.h.
 */
#include "argmin_kernels.h"
#include "cpu_assign.h"
#include "exact_recheck.h"
#include "internal_hooks.h"
#include "label_bounds.h"
#include "simd.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace pgkm
{

/*
 * Crossover between the direct kernel and the tiled GEMM-form kernel,
 * measured on this box (Xeon with AVX-512, 2 cores, n = 300k, one thread,
 * ms per Lloyd iteration, direct / tiled, a busy machine: +-20 %):
 *   k = 8:   d = 2 6.0/7.3, d = 3 7.5/11.4, d = 4 8.9/11.7, d = 6 17.2/15.6,
 *            d = 8 13.6/9.6, d = 12 18.2/17.3
 *   k = 64:  d = 2 14.2/11.7, d = 3 24.3/18.9, d = 4 29.5/19.3, d = 8 28.4/12.9
 *   k = 256: d = 2 60.8/33.0, d = 4 78.9/37.9, d = 8 89.5/39.4
 * so the tiled kernel from d = 6, or from k = 32 at any d; direct below.
 * The test hook replaces the rule by a crossover in d alone (-1: the rule).
 */
static std::atomic<int32_t> gemm_min_d {-1};

bool
use_gemm(int32_t d, int32_t k)
{
	const int32_t m = gemm_min_d.load(std::memory_order_relaxed);
	if (m >= 0)
		return d >= m && k >= 4;
	return d >= 6 || k >= 32;
}

extern "C" int32_t
pgkm_internal_set_gemm_min_d(int32_t d)
{
	return gemm_min_d.exchange(d);
}

/*
 * Rows per block of the direct kernel: one lane per row (2 vectors of 16), so
 * the argmin over centroids is a lane-wise compare + blend with no padding of
 * k and no horizontal reduction. The 16-lane vectors are one AVX-512
 * register each, two AVX2 ones or four SSE ones (the same floats).
 */
static constexpr int32_t DIRECT_RB = 32;
static constexpr int DIRECT_W = 16;
static constexpr int DIRECT_NV = DIRECT_RB / DIRECT_W;
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
#define splat16(s) __builtin_shuffle(vf16 {(s)}, vi16 {})

/*
 * DirectFormBound::limit in float for the kernel's lanes: a row is decided
 * when second > a1 * best + b0 and best <= best_max, with a1 and b0 rounded
 * up so that the float evaluation never falls below the fp64 limit.
 */
struct DirectTest
{
	float		a1 = 0, b0 = 0, best_max = 0;

	explicit DirectTest(const DirectFormBound &b)
	{
		/* (a1 vb + b0)(1 + 2^-20) >= the fp64 limit even after three float roundings */
		a1 = std::nextafter((float) (b.a1 * (1 + 0x1p-20)), std::numeric_limits<float>::infinity());
		b0 = std::nextafter((float) (b.b0 * (1 + 0x1p-20) + 0x1p-148),	/* + an underflow of the product */
							std::numeric_limits<float>::infinity());
		best_max = std::isfinite(b0) ? 0x1p100f : -1.0f;	/* -1: nothing is decided */
	}
	DirectTest() {}
};

/*
 * Direct argmin of a block of DIRECT_RB rows held transposed in xt (d x RB):
 * for every centroid c in order, sum (x - c)^2 over features in order (the
 * same float for each distance as the scalar loop, which the GPU plugin's
 * direct path reproduces; the first square is the sum's start, as 0 + t^2 is
 * t^2), then keep it where strictly smaller, so ties go to the lowest index.
 * The runner-up value is kept alongside, and a lane is flagged undecided
 * (nonzero) unless the runner-up is provably worse (test). D > 0 fixes d at
 * compile time (unrolled), D = 0 is any d. The file is compiled without FMA
 * contraction, so every clone gives the same floats.
 */
template <int D>
__attribute__((always_inline)) static inline void
direct_block(const float *xt, int32_t dd, const float *cent, int32_t k, const DirectTest &test,
			 int32_t *bi, int32_t *undecided)
{
	const int32_t d = D > 0 ? D : dd;
	vf16		best[DIRECT_NV], second[DIRECT_NV];
	vi16		idx[DIRECT_NV];
	for (int v = 0; v < DIRECT_NV; v++)
	{
		best[v] = vf16 {} + std::numeric_limits<float>::infinity();
		second[v] = best[v];
		idx[v] = vi16 {};
	}
	for (int32_t c = 0; c < k; c++)
	{
		const float *cr = cent + (size_t) c * d;
		vf16		acc[DIRECT_NV] = {};
		for (int32_t j = 0; j < d; j++)
		{
			const vf16	cj = splat16(cr[j]);
			for (int v = 0; v < DIRECT_NV; v++)
			{
				vf16		xv;
				memcpy(&xv, xt + (size_t) j * DIRECT_RB + v * DIRECT_W, sizeof(xv));
				const vf16	t = xv - cj;
				acc[v] = j == 0 ? t * t : acc[v] + t * t;
			}
		}
		const vi16	cv = vi16 {} + c;
		for (int v = 0; v < DIRECT_NV; v++)
		{
			const vi16	lt = acc[v] < best[v];
			const vf16	other = lt ? best[v] : acc[v];	/* the one not kept as best */
			second[v] = other < second[v] ? other : second[v];
			best[v] = lt ? acc[v] : best[v];
			idx[v] = lt ? cv : idx[v];
		}
	}
	memcpy(bi, idx, sizeof(idx));
	const vf16	inf = vf16 {} + std::numeric_limits<float>::infinity();
	for (int v = 0; v < DIRECT_NV; v++)
	{
		/* decided: second > a1 * best + b0 and best <= best_max (one compare: GCC scalarised the & of two) */
		const vf16	lim = best[v] <= splat16(test.best_max) ? splat16(test.a1) * best[v] + splat16(test.b0) : inf;
		const vi16	undec = ~(second[v] > lim);
		memcpy(undecided + v * DIRECT_W, &undec, sizeof(undec));
	}
}

/* All blocks of rows with d = D (0: any d), each transposed into xt, then its argmin. */
template <int D>
__attribute__((always_inline)) static inline int64_t
direct_rows(const float *x, int64_t rows, int32_t dd, const float *cent, int32_t k,
			const DirectTest &test, float *xt, int32_t *out, int64_t *undecided)
{
	const int32_t d = D > 0 ? D : dd;
	alignas(64) int32_t bi[DIRECT_RB], und[DIRECT_RB];
	int64_t		nund = 0;
	for (int64_t i = 0; i < rows; i += DIRECT_RB)
	{
		const int64_t nr = std::min<int64_t>(DIRECT_RB, rows - i);
		if (nr == DIRECT_RB)
			for (int r = 0; r < DIRECT_RB; r++)
				for (int32_t j = 0; j < d; j++)
					xt[(size_t) j * DIRECT_RB + r] = x[(i + r) * d + j];
		else
			for (int r = 0; r < DIRECT_RB; r++)
				for (int32_t j = 0; j < d; j++)
					xt[(size_t) j * DIRECT_RB + r] = x[(i + std::min<int64_t>(r, nr - 1)) * d + j];
		direct_block<D>(xt, d, cent, k, test, bi, und);
		memcpy(out + i, bi, sizeof(int32_t) * nr);
		int32_t		any = 0;
		for (int r = 0; r < DIRECT_RB; r++)
			any |= und[r];
		if (any)
			for (int64_t r = 0; r < nr; r++)
				if (und[r])
					undecided[nund++] = i + r;
	}
	return nund;
}

/*
 * Direct argmin for small d over k x d float centroids (row-major, not
 * padded); xt is scratch of d * DIRECT_RB floats. Writes each row's argmin
 * and the rows the float argmin cannot decide (their count is returned).
 * Rows past the end of a partial block repeat the last row. Compiled for
 * AVX-512, AVX2 and a baseline, picked at load time (no FMA contraction in
 * this file: the same floats in each).
 */
PGKM_TARGET_CLONES_V4 static int64_t
direct_argmin(const float *x, int64_t rows, int32_t d, const float *cent, int32_t k,
			  const DirectTest &test, float *xt, int32_t *out, int64_t *undecided)
{
	switch (d)
	{
		case 1: return direct_rows<1>(x, rows, d, cent, k, test, xt, out, undecided);
		case 2: return direct_rows<2>(x, rows, d, cent, k, test, xt, out, undecided);
		case 3: return direct_rows<3>(x, rows, d, cent, k, test, xt, out, undecided);
		case 4: return direct_rows<4>(x, rows, d, cent, k, test, xt, out, undecided);
		default: return direct_rows<0>(x, rows, d, cent, k, test, xt, out, undecided);
	}
}

/* Exact labels on (1, default) or the float argmin only (0): a test hook. */
static std::atomic<int32_t> exact_labels {1};
static std::atomic<int64_t> rows_seen {0}, rows_rechecked {0};

extern "C" int32_t
pgkm_internal_set_exact_labels(int32_t on)
{
	return exact_labels.exchange(on);
}

extern "C" void
pgkm_internal_label_rechecks(int64_t *rows, int64_t *rechecked)
{
	*rows = rows_seen.exchange(0);
	*rechecked = rows_rechecked.exchange(0);
}

class LloydAssign : public CpuAssign
{
public:
	LloydAssign(const float *x, int32_t d, int32_t kmax, const double *mean, int workers)
		: x_(x), d_(d), k_(kmax), kern_(current_argmin_kernel())
	{
		meanf_.resize(d);
		for (int32_t j = 0; j < d; j++)
			meanf_[j] = (float) mean[j];
		cent_.assign((size_t) kmax * d, 0.0);
		centf_.assign((size_t) kmax * d, 0.0f);
		centd_.assign((size_t) kmax * d, 0.0f);
		centt_.assign((size_t) d * ((kmax + 7) / 8 * 8), 0.0f);
		cnorm_.assign(kmax, 0.0f);
		panels_.assign(panel_floats(kmax, d, kern_.cb), 0.0f);
		cnorm_padded_.assign(padded_norms(kmax, kern_.cb), 0.0f);
		scratch_.resize(workers);
	}

	void		set_centroids(const double *centroids, int32_t k) override;
	void		nearest(int64_t r0, int64_t r1, int worker, int32_t *out) override;

private:
	struct Scratch
	{
		std::vector<float> a;	/* GEMM: the kernel's tile; direct: transposed row block */
		std::vector<float> partial;	/* GEMM: the kernel's partial tile (d > ARGMIN_KC) */
		std::vector<float> best, second, x2;	/* GEMM: per row of the chunk */
		std::vector<float> xc;	/* GEMM: centred rows decided in fp64, DECIDE_ROWS x d */
		std::vector<float> vals;	/* GEMM: their float values, DECIDE_ROWS x kpad */
		std::vector<int64_t> undecided;	/* rows for fp64 */
		std::vector<double> lims;	/* GEMM: their limits */
		std::vector<int32_t> cand;	/* centroids a row decides in fp64 */
		std::vector<int32_t> survivors;	/* those the float level keeps */
		std::vector<double> evals;	/* the float level's distances */
	};

	int64_t		direct_nearest(int64_t r0, int64_t r1, Scratch &s, int32_t *out);
	int64_t		gemm_nearest(int64_t r0, int64_t r1, Scratch &s, int32_t *out);
	void		gemm_decide(int64_t r0, const int64_t *rows, int32_t m, Scratch &s, int32_t *out) const;

	const float *x_;
	int32_t		d_;
	int32_t		k_;
	const ArgminKernel &kern_;
	std::vector<float> meanf_;
	std::vector<double> cent_;	/* fp64 centroids, k x d: the exact labels */
	std::vector<float> centf_;	/* GEMM: centred float centroids, k x d */
	std::vector<float> centd_;	/* float centroids, k x d: the direct kernels and recheck_'s float level */
	std::vector<float> centt_;	/* GEMM: centf_ transposed, d x kpad (the fp64 decisions' search) */
	int32_t		kpad_ = 0;		/* k rounded up to 8 */
	std::vector<float> cnorm_;	/* GEMM: ||centred c||^2 */
	std::vector<float> panels_;	/* GEMM: centf_ in the kernel's panel layout */
	std::vector<float> cnorm_padded_;	/* GEMM: cnorm_, +inf past k */
	DirectFormBound direct_bound_;
	DirectTest	direct_test_;
	GemmFormBound gemm_bound_;
	ExactRecheck recheck_;		/* the fp64 decisions' float level (centd_) */
	std::vector<Scratch> scratch_;
};

/* Prepares both float layouts and their bounds, so the form may be chosen per call. */
void
LloydAssign::set_centroids(const double *centroids, int32_t k)
{
	k_ = k;
	const int32_t d = d_;
	std::copy(centroids, centroids + (size_t) k * d, cent_.begin());
	for (int32_t c = 0; c < k; c++)
	{
		double		norm = 0;	/* rounded once: argmin_dot_depth's premise */
		for (int32_t j = 0; j < d; j++)
		{
			double		v = centroids[(size_t) c * d + j];
			float		vc = (float) (v - (double) meanf_[j]);	/* the same shift as the rows */
			centf_[(size_t) c * d + j] = vc;
			norm += (double) vc * vc;
			centd_[(size_t) c * d + j] = (float) v;
		}
		cnorm_[c] = (float) norm;
	}
	recheck_.set(centroids, centd_.data(), k, d);
	if (use_gemm(d, k))
	{
		kpad_ = (k + 7) / 8 * 8;
		std::fill(centt_.begin(), centt_.end(), 0.0f);
		for (int32_t c = 0; c < k; c++)
			for (int32_t j = 0; j < d; j++)
				centt_[(size_t) j * kpad_ + c] = centf_[(size_t) c * d + j];
		pack_panels(centf_.data(), cnorm_.data(), k, d, kern_.cb, panels_.data(),
					cnorm_padded_.data());
		gemm_bound_.set(centroids, meanf_.data(), centf_.data(), cnorm_.data(), k, d,
						argmin_dot_depth(d));
	}
	else
	{
		direct_bound_.set(centroids, centd_.data(), k, d);
		direct_test_ = DirectTest(direct_bound_);
	}
}

void
LloydAssign::nearest(int64_t r0, int64_t r1, int worker, int32_t *out)
{
	Scratch    &s = scratch_[worker];
	const int64_t rechecked = use_gemm(d_, k_) ? gemm_nearest(r0, r1, s, out)
		: direct_nearest(r0, r1, s, out);
	rows_seen.fetch_add(r1 - r0, std::memory_order_relaxed);
	rows_rechecked.fetch_add(rechecked, std::memory_order_relaxed);
}

/* The direct kernel, then fp64 for the rows it cannot decide; returns their count. */
int64_t
LloydAssign::direct_nearest(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const int32_t d = d_, k = k_;
	const int64_t rows = r1 - r0;
	s.a.resize((size_t) d * DIRECT_RB);
	s.undecided.resize(rows);
	const int64_t nund = direct_argmin(x_ + r0 * d, rows, d, centd_.data(), k, direct_test_,
									   s.a.data(), out, s.undecided.data());
	if (!exact_labels.load(std::memory_order_relaxed))
		return 0;
	for (int64_t u = 0; u < nund; u++)
	{
		const int64_t r = s.undecided[u];
		out[r] = recheck_.nearest(x_ + (r0 + r) * d, cent_.data(), centd_.data(), d, nullptr, k,
								  s.survivors, s.evals);
	}
	return nund;
}

/*
 * Float values v_c = n_c - 2 x'.c' of m <= DECIDE_ROWS centred rows (xc,
 * m x d) against every centroid, lanes across centroids (ct: d x kp, c'
 * transposed, kp a multiple of 8), 16 centroids x M rows held in
 * registers, M = m (a chunk has few open rows: most calls have one). Another
 * order than the kernel's, but summed in the same blocks of ARGMIN_KB
 * features, so the kernel's bound (argmin_dot_depth) holds for it too; each
 * row's values are the same whatever M.
 */
static constexpr int DECIDE_ROWS = 4;

template <int M, int NC>
__attribute__((always_inline)) static inline void
decide_chunk(const float *xc, int32_t d, const float *ct, int32_t kp, int32_t c0, float *vals)
{
	vf8			tot[M][NC] = {};
	for (int32_t j0 = 0; j0 < d; j0 += ARGMIN_KB)
	{
		const int32_t j1 = std::min(d, j0 + ARGMIN_KB);
		vf8			acc[M][NC] = {};
		for (int32_t j = j0; j < j1; j++)
		{
			vf8			cj[NC];
			for (int v = 0; v < NC; v++)	/* one load each (a single memcpy goes through the stack) */
				memcpy(&cj[v], ct + (size_t) j * kp + c0 + v * 8, sizeof(vf8));
			for (int r = 0; r < M; r++)
			{
				const vf8	xj = splat(xc[(size_t) r * d + j]);
				for (int v = 0; v < NC; v++)
					acc[r][v] += xj * cj[v];
			}
		}
		for (int r = 0; r < M; r++)
			for (int v = 0; v < NC; v++)
				tot[r][v] += acc[r][v];
	}
	for (int r = 0; r < M; r++)
		memcpy(vals + (size_t) r * kp + c0, tot[r], sizeof(tot[r]));
}

template <int M>
__attribute__((always_inline)) static inline void
decide_rows(const float *xc, int32_t d, const float *ct, int32_t kp, float *vals)
{
	int32_t		c0 = 0;
	for (; c0 + 16 <= kp; c0 += 16)
		decide_chunk<M, 2>(xc, d, ct, kp, c0, vals);
	if (c0 < kp)
		decide_chunk<M, 1>(xc, d, ct, kp, c0, vals);
}

PGKM_TARGET_CLONES static void
decide_values(const float *xc, int m, int32_t d, const float *ct, int32_t kp, const float *cn,
			  int32_t k, float *vals)
{
	switch (m)
	{
		case 1: decide_rows<1>(xc, d, ct, kp, vals); break;
		case 2: decide_rows<2>(xc, d, ct, kp, vals); break;
		case 3: decide_rows<3>(xc, d, ct, kp, vals); break;
		default: decide_rows<DECIDE_ROWS>(xc, d, ct, kp, vals); break;
	}
	for (int r = 0; r < m; r++)
		for (int32_t c = 0; c < k; c++)
			vals[(size_t) r * kp + c] = cn[c] - 2.0f * vals[(size_t) r * kp + c];
}

/*
 * The exact labels of rows r0 + rows[0..m) (m <= DECIDE_ROWS): for each,
 * among the kernel's argmin and every centroid whose float value is not
 * above the row's limit (NaN included), in fp64.
 */
void
LloydAssign::gemm_decide(int64_t r0, const int64_t *rows, int32_t m, Scratch &s, int32_t *out) const
{
	const int32_t d = d_, k = k_;
	s.xc.resize((size_t) DECIDE_ROWS * d);
	s.vals.resize((size_t) DECIDE_ROWS * kpad_);
	for (int32_t r = 0; r < m; r++)
	{
		const float *xr = x_ + (r0 + rows[r]) * d;
		for (int32_t j = 0; j < d; j++)
			s.xc[(size_t) r * d + j] = xr[j] - meanf_[j];
	}
	decide_values(s.xc.data(), m, d, centt_.data(), kpad_, cnorm_.data(), k, s.vals.data());
	for (int32_t r = 0; r < m; r++)
	{
		const int64_t row = rows[r];
		const float *v = s.vals.data() + (size_t) r * kpad_;
		s.cand.clear();
		for (int32_t c = 0; c < k; c++)
			if (c == out[row] || !((double) v[c] > s.lims[row]))
				s.cand.push_back(c);
		out[row] = recheck_.nearest(x_ + (r0 + row) * d, cent_.data(), centd_.data(), d,
									s.cand.data(), (int32_t) s.cand.size(), s.survivors, s.evals);
	}
}

/*
 * Each row's limit (GemmFormBound::limit, lanes across rows: this file is
 * compiled without FMA contraction, so every clone has the scalar form's
 * bits), then the rows whose runner-up
 * does not clear it; returns their count.
 */
PGKM_TARGET_CLONES_V4 static int64_t
open_rows(const GemmFormBound &b, const float *best, const float *second, const float *x2,
		  int64_t rows, double *lims, int64_t *open)
{
	for (int64_t r = 0; r < rows; r++)
		lims[r] = b.limit(best[r], x2[r]);
	int64_t		m = 0;
	for (int64_t r = 0; r < rows; r++)
	{
		open[m] = r;
		m += !((double) second[r] > lims[r]);
	}
	return m;
}

/*
 * argmin over c of ||c||^2 - 2 x.c, rows and centroids centred (ties to the
 * lowest index) with the runner-up, by the tiled kernel; then fp64 among the
 * centroids that may still win for the rows the bound cannot decide;
 * returns their count.
 */
int64_t
LloydAssign::gemm_nearest(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const int32_t d = d_;
	const int64_t rows = r1 - r0;
	s.a.resize((size_t) ARGMIN_KC * kern_.rows_per_block);
	if (d > ARGMIN_KC)
		s.partial.resize((size_t) ARGMIN_GROUP * kern_.rows_per_block);
	s.best.resize(rows);
	s.second.resize(rows);
	s.x2.resize(rows);
	ArgminArgs	a {x_ + r0 * d, rows, d, meanf_.data(), panels_.data(), cnorm_padded_.data(),
		k_, s.a.data(), s.partial.data(), out, s.best.data(), s.second.data(), s.x2.data()};
	kern_.run(a);
	if (!exact_labels.load(std::memory_order_relaxed))
		return 0;
	s.undecided.resize(rows);
	s.lims.resize(rows);
	const int64_t m = open_rows(gemm_bound_, s.best.data(), s.second.data(), s.x2.data(), rows,
								s.lims.data(), s.undecided.data());
	for (int64_t u = 0; u < m; u += DECIDE_ROWS)
		gemm_decide(r0, s.undecided.data() + u, (int32_t) std::min<int64_t>(DECIDE_ROWS, m - u), s, out);
	return m;
}

std::unique_ptr<CpuAssign>
make_lloyd_assign(const float *x, int32_t d, int32_t kmax, const double *mean, int workers)
{
	return std::unique_ptr<CpuAssign>(new LloydAssign(x, d, kmax, mean, workers));
}

}							/* namespace pgkm */
