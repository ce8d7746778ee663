/*
 * cpu_engine.cpp: the multi-threaded CPU backend (assignment, centroid
 * update, greedy k-means++).
 *
 * Determinism across thread counts: rows are cut into chunks whose size
 * depends only on the shape (never on the thread count); floating-point
 * partial sums are kept per chunk and reduced in chunk order, integer counts
 * are order-free, and centroid sums are accumulated per cluster in row order
 * by whichever thread owns that cluster. So n_threads = 1 and 7 give
 * bit-identical results.
 *
 * Distances: the argmin is found in float32, either directly (small d) or in
 * the GEMM form ||c||^2 - 2 x.c on data centred by the column means (large d,
 * through single-threaded OpenBLAS sgemm per chunk); the distance to the
 * chosen centroid is then recomputed exactly as sum((x - c)^2) in fp64, which
 * is what inertia, distances and k-means++ potentials use.
 */
#include "engine_internal.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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

/* Tuning and test hook (not in the public header): move the crossover; returns the old one. */
extern "C" int32_t
pgkm_internal_set_gemm_min_d(int32_t d)
{
	return gemm_min_d.exchange(d);
}

/*
 * Rows per assignment chunk: the chunk's rows x k float products stay within
 * ~64 KiB (L2-resident between sgemm and the argmin); at least 64 rows. The
 * size depends on the shape only, never on the thread count.
 */
int64_t
assign_chunk_rows(int32_t d, int32_t k)
{
	(void) d;
	int64_t		rows = 16384 / std::max<int32_t>(k, 1);
	rows = std::max<int64_t>(64, std::min<int64_t>(2048, rows));
	return (rows + 63) / 64 * 64;
}

/* Rows per chunk for k-means++ candidate evaluation and data statistics. */
static constexpr int64_t KPP_CHUNK = 1024;

/* OpenBLAS must not spawn its own threads under ours: set it to 1, once. */
static void
openblas_single_threaded()
{
	static std::once_flag once;
	std::call_once(once, [] {
		using set_fn = void (*)(int);
		auto		fn = (set_fn) dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
		if (fn)
			fn(1);
	});
}

static inline float
sqdist_f(const float *a, const float *b, int32_t d)
{
	float		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		float		t = a[j] - b[j];
		s += t * t;
	}
	return s;
}

static inline double
sqdist_exact(const float *x, const double *c, int32_t d)
{
	double		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		t = (double) x[j] - c[j];
		s += t * t;
	}
	return s;
}

/*
 * Rows per block of the direct kernel: one lane per row (4 AVX2 vectors), so
 * the argmin over centroids is a lane-wise compare + blend with no padding of
 * k and no horizontal reduction.
 */
static constexpr int32_t DIRECT_RB = 32;

/*
 * Direct argmin of a block of DIRECT_RB rows held transposed in xt (d x RB):
 * for every centroid c in order, sum (x - c)^2 over features in order (the
 * same float for each distance as the scalar loop, which the GPU plugin's
 * direct path reproduces), then keep it where strictly smaller, so ties go to
 * the lowest index. D > 0 fixes d at compile time (unrolled), D = 0 is any d.
 */
typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
static constexpr int DIRECT_NV = DIRECT_RB / 8;

/* All lanes = s, as one broadcast (a lane-by-lane initialiser compiles to inserts). */
#define splat(s) __builtin_shuffle(vf8 {(s)}, vi8 {})

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
__attribute__((target_clones("avx2", "default"))) static void
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

/*
 * k-means++ distances: squared distances of the listed rows of x (offsets
 * into x) to the candidates held transposed in ct (d x tp, tp a multiple of
 * 8), written to out[row * tp + t]. Each distance is summed over features in
 * order exactly as sqdist_f does (no FMA in either clone), so a lane gives the
 * same float as sqdist_f(x_row, candidate) whatever else is computed.
 */
__attribute__((target_clones("avx2", "default"))) static void
kpp_dists(const float *x, int32_t d, const int32_t *rows, int64_t cnt, const float *ct,
		  int32_t tp, float *out)
{
	constexpr int R = 8;		/* rows in flight: independent accumulators */
	for (int64_t g = 0; g < cnt; g += R)
	{
		const int64_t nr = std::min<int64_t>(R, cnt - g);
		const float *xr[R];
		for (int r = 0; r < R; r++)
			xr[r] = x + (int64_t) rows[g + std::min<int64_t>(r, nr - 1)] * d;
		for (int32_t b = 0; b < tp; b += 8)
		{
			vf8			acc[R] = {};
			for (int32_t j = 0; j < d; j++)
			{
				vf8			cv;
				memcpy(&cv, ct + (size_t) j * tp + b, sizeof(cv));
				for (int r = 0; r < R; r++)
				{
					vf8			t = splat(xr[r][j]) - cv;
					acc[r] += t * t;
				}
			}
			for (int64_t r = 0; r < nr; r++)
				memcpy(out + (size_t) rows[g + r] * tp + b, &acc[r], sizeof(vf8));
		}
	}
}

/* Test hook: k-means++ skips rows proven unaffected (1, default) or computes all (0). */
static std::atomic<int32_t> kpp_pruning {1};

extern "C" int32_t
pgkm_internal_set_kpp_pruning(int32_t on)
{
	return kpp_pruning.exchange(on);
}

class CpuBackend : public Backend
{
public:
	CpuBackend(const float *x, int64_t n, int32_t d, int32_t k, const double *mean,
			   ThreadPool *pool)
		: x_(x), n_(n), d_(d), kmax_(k), k_(k), pool_(pool)
	{
		openblas_single_threaded();
		mean_.assign(mean, mean + d);
		meanf_.resize(d);
		for (int32_t j = 0; j < d; j++)
			meanf_[j] = (float) mean[j];
		labels_.assign(n, -1);
		cent_.assign((size_t) k * d, 0.0);
		sums_.assign((size_t) k * d, 0.0);
		centf_.assign((size_t) k * d, 0.0f);
		centd_.assign((size_t) k * d, 0.0f);
		cnorm_.assign(k, 0.0f);
		worker_sizes_.assign((size_t) pool->size() * k, 0);
		worker_moved_.assign(pool->size(), 0);
		scratch_.resize(pool->size());
	}

	int32_t		kmeanspp(uint64_t seed, int32_t k, double *centroids, double *potential) override;
	void		set_centroids(const double *centroids, int32_t k) override;
	void		iterate(IterStats *st, double *centroids, int64_t *sizes) override;
	void		assign(int32_t *labels, double *dist2, int64_t *sizes, double *inertia) override;
	std::string detail() const override
	{
		return std::to_string(pool_->size()) + (pool_->size() == 1 ? " thread" : " threads");
	}
	const char *device() const override { return "cpu"; }

private:
	void		assign_pass(int32_t *labels, double *dist2, int64_t *sizes, double *inertia,
							int64_t *moved);
	void		assign_chunk(int64_t r0, int64_t r1, int worker, int32_t *labels, double *dist2,
							 int64_t *sizes, double *inertia, int64_t *moved);
	void		update_centroids(const int64_t *sizes, double *centroids);

	const float *x_;
	int64_t		n_;
	int32_t		d_;
	int32_t		kmax_;
	int32_t		k_;
	ThreadPool *pool_;
	std::vector<double> mean_;
	std::vector<float> meanf_;
	std::vector<int32_t> labels_;	/* labels of the last iterate */
	std::vector<double> cent_;		/* current centroids, fp64 */
	std::vector<double> sums_;		/* centroid sums, fp64 */
	std::vector<float> centf_;		/* GEMM: centred float centroids, k x d */
	std::vector<float> centd_;		/* direct: float centroids, k x d */
	std::vector<float> cnorm_;		/* GEMM: ||centred c||^2 */
	std::vector<int64_t> worker_sizes_;
	std::vector<int64_t> worker_moved_;
	struct Scratch
	{
		std::vector<float> a;	/* chunk rows, centred (GEMM); transposed row block (direct) */
		std::vector<float> dots;	/* chunk x k products (GEMM) */
		std::vector<int32_t> idx;	/* chunk argmins (direct) */
	};
	std::vector<Scratch> scratch_;
};

/* Makes k x d centroids current and prepares both float layouts. */
void
CpuBackend::set_centroids(const double *centroids, int32_t k)
{
	if (k < 1 || k > kmax_)
		throw EngineError(PGKM_ERR_INTERNAL, "set_centroids: bad k");
	k_ = k;
	const int32_t d = d_;
	std::copy(centroids, centroids + (size_t) k * d, cent_.begin());
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

/*
 * Labels rows r0..r1-1 with their nearest centroid (float argmin, lowest index
 * on ties) and adds exact fp64 squared distances to *inertia.
 */
void
CpuBackend::assign_chunk(int64_t r0, int64_t r1, int worker, int32_t *labels, double *dist2,
						 int64_t *sizes, double *inertia, int64_t *moved)
{
	const int32_t d = d_, k = k_;
	const int64_t rows = r1 - r0;
	Scratch    &s = scratch_[worker];
	double		part = 0;
	int64_t		mv = 0;
	/* Both distance forms end the same way: exact fp64 distance, label, counts. */
	auto		record = [&](int64_t i, int32_t bi) {
		double		e = sqdist_exact(x_ + i * d, cent_.data() + (size_t) bi * d, d);
		part += e;
		if (dist2)
			dist2[i] = e;
		if (labels[i] != bi)
			mv++;
		labels[i] = bi;
		sizes[bi]++;
	};

	if (use_gemm(d, k))
	{
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
			record(r0 + r, bi);
		}
	}
	else
	{
		s.idx.resize(rows);
		s.a.resize((size_t) d * DIRECT_RB);
		direct_argmin(x_ + r0 * d, rows, d, centd_.data(), k, s.a.data(), s.idx.data());
		for (int64_t r = 0; r < rows; r++)
			record(r0 + r, s.idx[r]);
	}
	*inertia = part;
	*moved += mv;
}

/* Full assignment pass: per-chunk inertia in chunk order, per-worker integer counts. */
void
CpuBackend::assign_pass(int32_t *labels, double *dist2, int64_t *sizes, double *inertia,
						int64_t *moved)
{
	const int32_t k = k_;
	const int64_t rows = assign_chunk_rows(d_, k);
	const int64_t nchunks = (n_ + rows - 1) / rows;
	std::vector<double> chunk_inertia(nchunks, 0.0);
	std::fill(worker_sizes_.begin(), worker_sizes_.end(), 0);
	std::fill(worker_moved_.begin(), worker_moved_.end(), 0);
	pool_->parallel_for(nchunks, [&](int64_t ch, int w) {
		int64_t		r0 = ch * rows, r1 = std::min(n_, r0 + rows);
		assign_chunk(r0, r1, w, labels, dist2, worker_sizes_.data() + (size_t) w * kmax_,
					 &chunk_inertia[ch], &worker_moved_[w]);
	});
	double		tot = 0;
	for (double v : chunk_inertia)
		tot += v;
	*inertia = tot;
	int64_t		mv = 0;
	for (int w = 0; w < pool_->size(); w++)
		mv += worker_moved_[w];
	*moved = mv;
	for (int32_t c = 0; c < k; c++)
	{
		int64_t		s = 0;
		for (int w = 0; w < pool_->size(); w++)
			s += worker_sizes_[(size_t) w * kmax_ + c];
		sizes[c] = s;
	}
}

/*
 * New centroid = mean of its rows, summed in fp64 in row order. Clusters are
 * split into contiguous ranges, one per task, balanced by size; each task
 * scans the labels and sums only its own clusters' rows, so no partial sums
 * need merging and the order never depends on threads. Empty clusters keep
 * their previous centroid (the driver repairs them).
 */
void
CpuBackend::update_centroids(const int64_t *sizes, double *centroids)
{
	const int32_t d = d_, k = k_;
	int32_t		parts = std::min<int32_t>(k, pool_->size());
	std::vector<int32_t> bounds(1, 0);
	{
		int64_t		acc = 0;
		for (int32_t c = 0; c < k; c++)
		{
			acc += sizes[c];
			if ((int32_t) bounds.size() < parts &&
				acc >= (n_ * (int64_t) bounds.size()) / parts && c + 1 < k)
				bounds.push_back(c + 1);
		}
		bounds.push_back(k);
	}
	const int32_t *lab = labels_.data();
	pool_->parallel_for((int64_t) bounds.size() - 1, [&](int64_t p, int w) {
		const int32_t c0 = bounds[p], c1 = bounds[p + 1];
		std::fill(sums_.begin() + (size_t) c0 * d, sums_.begin() + (size_t) c1 * d, 0.0);
		double	   *sums = sums_.data();
		for (int64_t i = 0; i < n_; i++)
		{
			if ((i & 0xFFFF) == 0)
				pool_->checkpoint(w);
			int32_t		l = lab[i];
			if (l < c0 || l >= c1)
				continue;
			const float *xi = x_ + i * d;
			double	   *sr = sums + (size_t) l * d;
			for (int32_t j = 0; j < d; j++)
				sr[j] += (double) xi[j];
		}
		for (int32_t c = c0; c < c1; c++)
		{
			if (sizes[c] == 0)
				continue;
			const double inv = (double) sizes[c];
			for (int32_t j = 0; j < d; j++)
				centroids[(size_t) c * d + j] = sums[(size_t) c * d + j] / inv;
		}
	});
}

void
CpuBackend::iterate(IterStats *st, double *centroids, int64_t *sizes)
{
	double		inertia;
	int64_t		moved;
	assign_pass(labels_.data(), nullptr, sizes, &inertia, &moved);
	st->inertia = inertia;
	st->moved = moved;
	std::copy(cent_.begin(), cent_.begin() + (size_t) k_ * d_, centroids);
	update_centroids(sizes, centroids);
	set_centroids(centroids, k_);
}

void
CpuBackend::assign(int32_t *labels, double *dist2, int64_t *sizes, double *inertia)
{
	int64_t		moved;
	std::copy(labels_.begin(), labels_.end(), labels);
	assign_pass(labels, dist2, sizes, inertia, &moved);
}

/*
 * Greedy k-means++ as scikit-learn does it: first center uniform, then per
 * center 2 + floor(ln k) candidates drawn with probability proportional to
 * D^2, keeping the one that minimises the new potential. Stops early (fewer
 * centers) when every remaining D^2 is 0, i.e. the data has fewer distinct
 * points than k. Candidates always have D^2 > 0, so centers are distinct.
 *
 * D^2 are floats summed in feature order (sqdist_f). Each row remembers its
 * closest center; by the triangle inequality a candidate at distance A from
 * that center cannot be closer than it when A >= 2 D, so with a margin for
 * the float rounding of both sums (A^2 >= 4 (1 + m) D^2) the row's
 * min(D^2, dist) is D^2 without computing dist. Skipping is therefore exact:
 * the result is bit-identical with pruning off (test hook) and, with per-chunk
 * sums reduced in chunk order, for any thread count.
 */
int32_t
CpuBackend::kmeanspp(uint64_t seed, int32_t k, double *centroids, double *potential)
{
	const int32_t d = d_;
	const int64_t n = n_;
	const int64_t nchunks = (n + KPP_CHUNK - 1) / KPP_CHUNK;
	const int	trials = 2 + (int) std::log((double) k);
	const int32_t tp = (trials + 7) / 8 * 8;	/* candidate lanes */
	const int	nw = pool_->size();
	Rng			rng(seed);
	std::vector<float> closest(n);
	std::vector<int32_t> owner(n);	/* index of the closest center */
	std::vector<double> csum(nchunks);
	std::vector<double> tpart((size_t) nchunks * trials);
	std::vector<float> cand((size_t) trials * d), ct((size_t) d * tp, 0.0f);
	std::vector<float> cf((size_t) k * d);	/* centers so far, float rows */
	std::vector<double> cc((size_t) trials * k);	/* ||candidate t - center j||^2 */
	std::vector<double> mincc(k);	/* min over candidates */

	/*
	 * Skip test: a bound of the candidate-center distance^2 far enough above
	 * D^2. Both float sums carry a relative error below delta = (d + 3) u
	 * (u = 2^-24); m = 8 delta + 1e-6 covers both with room to spare.
	 */
	const bool	prune = kpp_pruning.load(std::memory_order_relaxed) != 0;
	const double thr = 4.0 * (1.0 + 8.0 * (d + 3) * 0x1p-24 + 1e-6);
	auto		unaffected = [&](double a2, int64_t i) {
		return prune && a2 >= thr * (double) closest[i] + 1e-30;
	};

	/*
	 * The trial pass keeps the distances it computed (row-indexed, n x tp)
	 * when that costs at most the data's own size, so the winner's need no
	 * recomputation; otherwise (small d) they are recomputed. Shape only.
	 */
	const bool	keep_trials = tp <= d;
	std::vector<float> tdist(keep_trials ? (size_t) n * tp : 0);
	std::vector<std::vector<int32_t>> wlist(nw);
	std::vector<std::vector<float>> wdist(nw);

	auto		load_candidate = [&](int t, int64_t row) {
		for (int32_t j = 0; j < d; j++)
		{
			cand[(size_t) t * d + j] = x_[row * d + j];
			ct[(size_t) j * tp + t] = x_[row * d + j];
		}
	};
	auto		set_center = [&](int32_t c, int64_t row) {
		for (int32_t j = 0; j < d; j++)
		{
			centroids[(size_t) c * d + j] = (double) x_[row * d + j];
			cf[(size_t) c * d + j] = x_[row * d + j];
		}
	};
	/* distances of the chunk's listed rows: into tdist, or the worker's buffer */
	auto		chunk_dists = [&](int64_t r0, int64_t r1, int w) -> float * {
		const std::vector<int32_t> &list = wlist[w];
		float	   *dist;
		if (keep_trials)
			dist = tdist.data() + (size_t) r0 * tp;
		else
		{
			wdist[w].resize((size_t) (r1 - r0) * tp);
			dist = wdist[w].data();
		}
		kpp_dists(x_ + r0 * d, d, list.data(), (int64_t) list.size(), ct.data(), tp, dist);
		return dist;
	};
	/* first index whose running D^2 sum reaches r, restricted to D^2 > 0 */
	auto		sample = [&](double r) -> int64_t {
		double		cum = 0;
		for (int64_t ch = 0; ch < nchunks; ch++)
		{
			if (csum[ch] > 0 && cum + csum[ch] >= r)
			{
				int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
				int64_t		last = -1;
				for (int64_t i = r0; i < r1; i++)
				{
					if (closest[i] <= 0)
						continue;
					cum += closest[i];
					last = i;
					if (cum >= r)
						return i;
				}
				return last;
			}
			cum += csum[ch];
		}
		for (int64_t i = n - 1; i >= 0; i--)
			if (closest[i] > 0)
				return i;
		return 0;
	};
	auto		total = [&]() {
		double		pot = 0;
		for (double v : csum)
			pot += v;
		return pot;
	};

	/* first center: every row's D^2 */
	int64_t		first = rng.below(n);
	set_center(0, first);
	load_candidate(0, first);
	pool_->parallel_for(nchunks, [&](int64_t ch, int w) {
		int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
		std::vector<int32_t> &list = wlist[w];
		list.resize(r1 - r0);
		for (int64_t i = 0; i < r1 - r0; i++)
			list[i] = (int32_t) i;
		const float *dist = chunk_dists(r0, r1, w);
		double		s = 0;
		for (int64_t i = r0; i < r1; i++)
		{
			closest[i] = dist[(size_t) (i - r0) * tp];
			owner[i] = 0;
			s += closest[i];
		}
		csum[ch] = s;
	});
	double		pot = total();
	int32_t		found = 1;
	std::vector<int64_t> ids(trials);
	while (found < k && pot > 0)
	{
		for (int t = 0; t < trials; t++)
		{
			ids[t] = sample(rng.uniform() * pot);
			load_candidate(t, ids[t]);
		}
		/* candidate-center distances (fp64) and their minimum per center */
		const int64_t cblk = 64;
		pool_->parallel_for((found + cblk - 1) / cblk, [&](int64_t b, int) {
			for (int64_t c = b * cblk; c < std::min<int64_t>(found, (b + 1) * cblk); c++)
			{
				double		mn = std::numeric_limits<double>::infinity();
				for (int t = 0; t < trials; t++)
				{
					double		s = 0;
					for (int32_t j = 0; j < d; j++)
					{
						double		v = (double) cand[(size_t) t * d + j] - (double) cf[(size_t) c * d + j];
						s += v * v;
					}
					cc[(size_t) t * k + c] = s;
					mn = std::min(mn, s);
				}
				mincc[c] = mn;
			}
		});
		/* potential with each candidate added, per chunk in row order */
		pool_->parallel_for(nchunks, [&](int64_t ch, int w) {
			int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
			std::vector<int32_t> &list = wlist[w];
			list.clear();
			for (int64_t i = r0; i < r1; i++)
				if (!unaffected(mincc[owner[i]], i))
					list.push_back((int32_t) (i - r0));
			const float *dist = chunk_dists(r0, r1, w);
			double		acc[64];
			double	   *sum = trials <= 64 ? acc : &tpart[(size_t) ch * trials];
			std::fill(sum, sum + trials, 0.0);
			size_t		li = 0;
			for (int64_t i = r0; i < r1; i++)
			{
				const float ci = closest[i];
				if (li < list.size() && list[li] == i - r0)
				{
					const float *dr = dist + (size_t) (i - r0) * tp;
					for (int t = 0; t < trials; t++)
						sum[t] += std::min(ci, dr[t]);
					li++;
				}
				else
					for (int t = 0; t < trials; t++)
						sum[t] += ci;
			}
			if (sum == acc)
				std::copy(acc, acc + trials, &tpart[(size_t) ch * trials]);
		});
		int			best = 0;
		double		best_pot = 0;
		for (int t = 0; t < trials; t++)
		{
			double		s = 0;
			for (int64_t ch = 0; ch < nchunks; ch++)
				s += tpart[(size_t) ch * trials + t];
			if (t == 0 || s < best_pot)
			{
				best = t;
				best_pot = s;
			}
		}
		set_center(found, ids[best]);
		/* closest = min(closest, D^2 to the winner); rows it cannot reach keep theirs */
		const double *ccb = cc.data() + (size_t) best * k;
		const float *cb = cand.data() + (size_t) best * d;
		pool_->parallel_for(nchunks, [&](int64_t ch, int) {
			int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
			double		s = 0;
			for (int64_t i = r0; i < r1; i++)
			{
				float		v = closest[i];
				if (!unaffected(ccb[owner[i]], i))
				{
					float		db = keep_trials ? tdist[(size_t) i * tp + best]
						: sqdist_f(x_ + i * d, cb, d);
					if (db < v)
					{
						v = db;
						owner[i] = found;
					}
				}
				closest[i] = v;
				s += v;
			}
			csum[ch] = s;
		});
		pot = total();
		found++;
	}
	set_centroids(centroids, found);
	if (potential)
		*potential = pot;
	return found;
}

std::unique_ptr<Backend>
make_cpu_backend(const float *x, int64_t n, int32_t d, int32_t k, const double *mean,
				 double data_scale, ThreadPool *pool)
{
	(void) data_scale;
	return std::unique_ptr<Backend>(new CpuBackend(x, n, d, k, mean, pool));
}

}							/* namespace pgkm */
