/*
 * kernel_cpu.cpp: the CPU KernelDevice (kernel_device.h): K from Gram tiles
 * plus the elementwise kernel map, and the pass over K that accumulates
 * S = K onehot(labels) with one add per entry of K (n^2 adds, not n^2 k).
 *
 * Tiles. K is cut into 256 x 256 tiles. A tile (I, J) is always computed
 * as the Gram product of the lower-numbered row panel by the other (I <= J,
 * the engine's own tile kernel, gram_kernels.h: the SYRK half of the work)
 * and read
 * transposed for I > J, so K is exactly symmetric and a recomputed tile is
 * bit-identical to the stored one: stored and recomputed runs give the same
 * result. The Gram products are taken on rows centred on the column means
 * (float), which keeps the RBF's ||x||^2 + ||y||^2 - 2<x, y> free of the
 * cancellation a large common offset would cause; the dot-product kernels
 * add the offset back exactly in fp64:
 *   <x_i, x_l> = <~x_i, ~x_l> + <~x_i, m> + <~x_l, m> + <m, m>.
 * The map runs in fp64 and rounds once to float. The diagonal is set from
 * fp64 norms of the rows themselves (RBF: exactly 1).
 *
 * Determinism: tiles and row chunks depend on the shape only; each S entry
 * is summed in fp64 over l in increasing order by one thread; the k-long
 * reductions are serial in row order. Any thread count gives the same bits.
 */
#include "errors.h"
#include "gram_kernels.h"
#include "kernel_device.h"
#include "thread_pool.h"
#include "util.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace pgkm
{

/*
 * Tile side. 256 x 256 float tiles (256 kB) keep a tile's map and transpose
 * in L2; a worker's two packed panels (256 x d each) cost 2 kB per feature,
 * which is why panels are reused across tiles (the build walks a row panel's
 * tiles; Scratch remembers what it holds).
 */
static constexpr int64_t TILE = 256;

/* Rows per chunk of a pass over stored K. */
static constexpr int64_t PASS_ROWS = 64;

double
cpu_kernel_device_bytes(int64_t n, int32_t d, int32_t k, int threads, bool stored)
{
	const double dn = (double) n, t = (double) TILE;
	double		b = 0;
	if (stored)
		b += dn * dn * 4;		/* K */
	b += dn * 8 * 3;			/* diag, centred norms, centred offsets */
	b += dn * k * 8;			/* S */
	b += threads * ((t + 12) * t * 4 + (2 * t + 12) * (double) d * 4);	/* per worker: a tile, two packed panels */
	return b;
}

class CpuKernelDevice : public KernelDevice
{
public:
	CpuKernelDevice(const float *x, int64_t n, int32_t d, const double *mean,
					const KernelParams &p, bool stored, int32_t kmax, ThreadPool *pool);

	void		build() override;
	const double *diag() const override { return diag_.data(); }
	void		rows(const int64_t *idx, int32_t count, float *out) override;
	void		pass(const int32_t *labels, const int64_t *sizes, int32_t k,
					 KernelPass *out) override;
	const char *matrix() const override { return stored_ ? "stored" : "recomputed"; }
	double		build_seconds() const override { return build_s_; }
	std::string detail() const override;
	const char *name() const override { return "cpu"; }

private:
	struct Scratch
	{
		std::vector<float> pa, pb, tile;	/* packed panels (gram_pack), the tile (ld_ per row) */
		int64_t		a_panel = -1, b_panel = -1;	/* panels pa and pb hold */
		std::vector<double> u, v;	/* map_row's row of values */
		std::vector<char> near;
	};

	/* the centred value the tile kernel multiplies (gram_pack's x - mean, in float) */
	float		centred(int64_t i, int32_t j) const { return x_[i * d_ + j] - meanf_[j]; }
	bool		map_row(float *g, int64_t i, int64_t l0, int64_t count, Scratch &s) const;
	double		exact(int64_t i, int64_t l) const;
	void		compute_tile(int64_t I, int64_t J, int worker, bool *finite);
	void		accumulate(const float *block, int64_t ld, int64_t rows, int64_t c0, int64_t c1,
						   const int32_t *labels, int32_t k, double *s) const;
	void		accumulate_panel_recomputed(int64_t I, const int32_t *labels, int32_t k, int worker);

	const float *x_;
	int64_t		n_;
	int32_t		d_;
	std::vector<double> mean_;
	std::vector<float> meanf_;
	const GramKernel &gram_;
	int64_t		ld_;			/* tile row stride (the kernel's blocks of B rows) */
	KernelParams p_;
	bool		stored_;
	int32_t		kmax_;
	ThreadPool *pool_;
	int64_t		t_;				/* tile side */
	int64_t		ntiles_;
	double		mm_ = 0;		/* <m, m> */
	double		near_;			/* relative squared distance below which map() is exact */
	std::vector<double> diag_;	/* K_ii as stored (float-rounded) */
	std::vector<double> cnorm_; /* ||~x_i||^2 */
	std::vector<double> coff_;	/* <~x_i, m> */
	std::unique_ptr<float[]> k_;	/* n x n when stored */
	std::vector<double> s_;		/* n x kmax */
	std::vector<Scratch> scratch_;
	double		build_s_ = 0;
};

CpuKernelDevice::CpuKernelDevice(const float *x, int64_t n, int32_t d, const double *mean,
								 const KernelParams &p, bool stored, int32_t kmax,
								 ThreadPool *pool)
	: x_(x), n_(n), d_(d), mean_(mean, mean + d), meanf_(mean, mean + d), gram_(gram_kernel()),
	  p_(p), stored_(stored), kmax_(kmax), pool_(pool), t_(TILE)
{
	ld_ = (TILE + gram_.rows_per_block - 1) / gram_.rows_per_block * gram_.rows_per_block;
	near_ = 2.0 * (d + 2) * 0x1p-24;
	ntiles_ = (n + t_ - 1) / t_;
	for (int32_t j = 0; j < d; j++)
		mm_ += mean_[j] * mean_[j];
	diag_.resize(n);
	cnorm_.resize(n);
	coff_.resize(n);
	scratch_.resize(pool->size());
	const int64_t chunks = (n + 4095) / 4096;
	pool_->parallel_for(chunks, [&](int64_t ch, int) {
		for (int64_t i = ch * 4096; i < std::min(n_, (ch + 1) * 4096); i++)
		{
			double		cn = 0, co = 0, raw = 0;
			for (int32_t j = 0; j < d_; j++)
			{
				double		c = centred(i, j), v = x_[i * d_ + j];
				cn += c * c;
				co += c * mean_[j];
				raw += v * v;
			}
			cnorm_[i] = cn;
			coff_[i] = co;
			diag_[i] = (float) (p_.by_distance() ? p_.of_sqdist(0) : p_.of_dot(raw));
		}
	});
}

std::string
CpuKernelDevice::detail() const
{
	std::string s = std::to_string(pool_->size()) + (pool_->size() == 1 ? " thread" : " threads");
	if (stored_)
		return s + fmt(", K stored (float32, %.0f MB, built in %.2f s)",
					   (double) n_ * n_ * 4 / 1e6, build_s_);
	return s + ", K recomputed in tiles every pass";
}

/*
 * Kernel values of Gram entries g[0..count) = <~x_i, ~x_l> for columns
 * l = l0.. (centred rows, the float tile kernel), computed in fp64 and written back
 * as float; false when one is not finite. The kernel is chosen once per
 * row, so the loops over the row vectorise. Where the squared distance of
 * two rows is within the float product's worst-case rounding ((d - 1) u relative,
 * for a sum of d positive terms), the GEMM form cannot tell the rows apart:
 * that value is recomputed exactly.
 */
bool
CpuKernelDevice::map_row(float *g, int64_t i, int64_t l0, int64_t count, Scratch &s) const
{
	s.u.resize(count);
	s.near.resize(count);
	double	   *u = s.u.data();
	char	   *near = s.near.data();
	const double *cn = cnorm_.data() + l0, *co = coff_.data() + l0;
	const double cni = cnorm_[i], coi = coff_[i];
	bool		any_near = false;
	for (int64_t c = 0; c < count; c++)
	{
		const double gv = g[c], d2 = cni + cn[c] - 2 * gv;
		near[c] = d2 <= near_ * (cni + cn[c]);
		any_near |= near[c] != 0;
		u[c] = p_.by_distance() ? (d2 > 0 ? d2 : 0) : gv + coi + co[c] + mm_;
	}
	const double gamma = p_.gamma, coef0 = p_.coef0;
	switch (p_.kind)
	{
		case PGKM_KERNEL_POLYNOMIAL:
			{
				std::vector<double> &r = s.v;
				r.assign(count, 1.0);
				for (int64_t c = 0; c < count; c++)
					u[c] = gamma * u[c] + coef0;
				for (int32_t e = p_.degree; e > 0; e >>= 1)
				{
					if (e & 1)
						for (int64_t c = 0; c < count; c++)
							r[c] *= u[c];
					if (e > 1)
						for (int64_t c = 0; c < count; c++)
							u[c] *= u[c];
				}
				std::copy(r.begin(), r.end(), u);
			}
			break;
		case PGKM_KERNEL_RBF:
			for (int64_t c = 0; c < count; c++)
				u[c] = std::exp(-gamma * u[c]);
			break;
		case PGKM_KERNEL_SIGMOID:
			for (int64_t c = 0; c < count; c++)
				u[c] = std::tanh(gamma * u[c] + coef0);
			break;
		default:
			break;
	}
	if (any_near)
		for (int64_t c = 0; c < count; c++)
			if (near[c])
				u[c] = exact(i, l0 + c);
	bool		ok = true;
	for (int64_t c = 0; c < count; c++)
	{
		const float v = (float) u[c];
		ok &= std::isfinite(v);
		g[c] = v;
	}
	return ok;
}

/* K_il in fp64 from the rows themselves; identical rows give exactly K_ii. */
double
CpuKernelDevice::exact(int64_t i, int64_t l) const
{
	bool		same;
	double		v = p_.of_rows(x_ + i * d_, x_ + l * d_, d_, &same);
	return same ? diag_[i] : v;
}

/*
 * Tile (I, J), I <= J, of K into the worker's tile buffer (rows of panel I,
 * ld_ apart): the Gram tile kernel on the packed centred panels, then the
 * map; a diagonal tile is made exactly symmetric from its upper half, with
 * the diagonal from diag_.
 */
void
CpuKernelDevice::compute_tile(int64_t I, int64_t J, int worker, bool *finite)
{
	Scratch    &s = scratch_[worker];
	const int64_t t = t_;
	const int32_t cb = gram_.cb, rb = gram_.rows_per_block;
	const int32_t blocks_a = (int32_t) ((t + cb - 1) / cb), blocks_b = (int32_t) (ld_ / rb);
	s.pa.resize((size_t) blocks_a * cb * d_);
	s.pb.resize((size_t) ld_ * d_);
	s.tile.resize((size_t) blocks_a * cb * ld_);
	const int64_t i0 = I * t, l0 = J * t;
	const int64_t ri = std::min(t, n_ - i0), rl = std::min(t, n_ - l0);
	if (s.a_panel != I)
		gram_pack(x_, i0, ri, t, d_, meanf_.data(), cb, s.pa.data());
	s.a_panel = I;
	if (s.b_panel != J)
		gram_pack(x_, l0, rl, t, d_, meanf_.data(), rb, s.pb.data());
	s.b_panel = J;
	gram_.run(GramArgs {s.pa.data(), s.pb.data(), d_, blocks_a, blocks_b, s.tile.data(), ld_});
	float	   *tile = s.tile.data();
	bool		ok = true;
	for (int64_t r = 0; r < ri; r++)
	{
		float	   *tr = tile + r * ld_;
		const int64_t c_begin = I == J ? r + 1 : 0;
		if (c_begin < rl)
			ok &= map_row(tr + c_begin, i0 + r, l0 + c_begin, rl - c_begin, s);
		if (I == J)
		{
			tr[r] = (float) diag_[i0 + r];
			for (int64_t c = 0; c < r; c++)
				tr[c] = tile[c * ld_ + r];
		}
	}
	if (!ok)
		*finite = false;
}

static EngineError
overflow_error(const KernelParams &p)
{
	return EngineError(PGKM_ERR_INVALID,
					   fmt("the %s kernel overflows float32 on this data (gamma %g, coef0 %g, degree %d): "
						   "lower gamma or degree, or scale the data",
						   p.kind == PGKM_KERNEL_POLYNOMIAL ? "polynomial" :
						   p.kind == PGKM_KERNEL_LINEAR ? "linear" : "chosen",
						   p.table_gamma, p.coef0, p.degree));
}

void
CpuKernelDevice::build()
{
	Stopwatch	clock;
	for (double v : diag_)
		if (!std::isfinite(v))
			throw overflow_error(p_);
	s_.assign((size_t) n_ * kmax_, 0.0);
	if (!stored_)
		return;
	k_.reset(new float[(size_t) n_ * n_]);
	std::atomic<bool> all_finite {true};
	/* one chunk per row panel I: its tiles (I, J >= I), panel I loaded once; the largest first */
	pool_->parallel_for(ntiles_, [&](int64_t I, int w) {
		for (int64_t J = I; J < ntiles_; J++)
		{
			bool		finite = true;
			compute_tile(I, J, w, &finite);
			if (!finite)
				all_finite.store(false);
			const int64_t t = t_, i0 = I * t, l0 = J * t;
			const int64_t ri = std::min(t, n_ - i0), rl = std::min(t, n_ - l0);
			const float *tile = scratch_[w].tile.data();
			float	   *K = k_.get();
			for (int64_t r = 0; r < ri; r++)
				memcpy(K + (i0 + r) * n_ + l0, tile + r * ld_, sizeof(float) * rl);
			if (I != J)
				for (int64_t c = 0; c < rl; c++)
					for (int64_t r = 0; r < ri; r++)
						K[(l0 + c) * n_ + i0 + r] = tile[r * ld_ + c];
			pool_->checkpoint(w);
		}
	});
	if (!all_finite.load())
		throw overflow_error(p_);
	build_s_ = clock.seconds();
}

void
CpuKernelDevice::rows(const int64_t *idx, int32_t count, float *out)
{
	if (stored_)
	{
		for (int32_t r = 0; r < count; r++)
			memcpy(out + (size_t) r * n_, k_.get() + idx[r] * n_, sizeof(float) * n_);
		return;
	}
	/* recomputed: fp64 straight from the rows (may differ from a tile's value in the last bit) */
	const int64_t chunks = (n_ + 4095) / 4096;
	for (int32_t r = 0; r < count; r++)
	{
		const int64_t i = idx[r];
		float	   *o = out + (size_t) r * n_;
		pool_->parallel_for(chunks, [&](int64_t ch, int) {
			for (int64_t l = ch * 4096; l < std::min(n_, (ch + 1) * 4096); l++)
				o[l] = (float) exact(i, l);
		});
	}
}

/*
 * s[r * k + labels[l]] += block[r * ld + (l - c0)] for rows r < rows and
 * columns c0 <= l < c1. Four rows share each label load; each row's k
 * accumulators are its own, so equal consecutive labels form four
 * independent chains instead of one.
 */
void
CpuKernelDevice::accumulate(const float *block, int64_t ld, int64_t rows, int64_t c0, int64_t c1,
							const int32_t *labels, int32_t k, double *s) const
{
	int64_t		r = 0;
	for (; r + 4 <= rows; r += 4)
	{
		const float *b0 = block + r * ld, *b1 = b0 + ld, *b2 = b1 + ld, *b3 = b2 + ld;
		double	   *s0 = s + r * k, *s1 = s0 + k, *s2 = s1 + k, *s3 = s2 + k;
		for (int64_t l = c0; l < c1; l++)
		{
			const int32_t c = labels[l];
			const int64_t o = l - c0;
			s0[c] += b0[o];
			s1[c] += b1[o];
			s2[c] += b2[o];
			s3[c] += b3[o];
		}
	}
	for (; r < rows; r++)
	{
		const float *b = block + r * ld;
		double	   *sr = s + r * k;
		for (int64_t l = c0; l < c1; l++)
			sr[labels[l]] += b[l - c0];
	}
}

/* S rows of panel I, recomputing its tiles in column order (the stored pass's order). */
void
CpuKernelDevice::accumulate_panel_recomputed(int64_t I, const int32_t *labels, int32_t k, int worker)
{
	const int64_t t = t_, i0 = I * t, ri = std::min(t, n_ - i0);
	double	   *s = s_.data() + (size_t) i0 * k;
	std::vector<float> transposed;
	for (int64_t J = 0; J < ntiles_; J++)
	{
		bool		finite = true;
		const int64_t l0 = J * t, rl = std::min(t, n_ - l0);
		compute_tile(std::min(I, J), std::max(I, J), worker, &finite);
		if (!finite)
			throw overflow_error(p_);
		const float *tile = scratch_[worker].tile.data();
		if (J < I)
		{
			/* the tile was computed as (J, I): read it transposed */
			transposed.resize((size_t) t * ld_);
			for (int64_t r = 0; r < ri; r++)
				for (int64_t c = 0; c < rl; c++)
					transposed[r * ld_ + c] = tile[c * ld_ + r];
			tile = transposed.data();
		}
		accumulate(tile, ld_, ri, l0, l0 + rl, labels, k, s);
		pool_->checkpoint(worker);
	}
}

void
CpuKernelDevice::pass(const int32_t *labels, const int64_t *sizes, int32_t k, KernelPass *out)
{
	if (k < 1 || k > kmax_)
		throw EngineError(PGKM_ERR_INTERNAL, "kernel pass: bad k");
	double	   *S = s_.data();
	std::fill(S, S + (size_t) n_ * k, 0.0);
	if (stored_)
	{
		const int64_t chunks = (n_ + PASS_ROWS - 1) / PASS_ROWS;
		pool_->parallel_for(chunks, [&](int64_t ch, int w) {
			const int64_t r0 = ch * PASS_ROWS, r1 = std::min(n_, r0 + PASS_ROWS);
			accumulate(k_.get() + r0 * n_, n_, r1 - r0, 0, n_, labels, k, S + r0 * k);
			pool_->checkpoint(w);
		});
	}
	else
		pool_->parallel_for(ntiles_, [&](int64_t I, int w) {
			accumulate_panel_recomputed(I, labels, k, w);
		});

	/* centroid norms: C_c = sum_{i in c} S_ic / |c|^2, in row order */
	double	   *C = out->norms;
	std::fill(C, C + k, 0.0);
	for (int64_t i = 0; i < n_; i++)
		C[labels[i]] += S[(size_t) i * k + labels[i]];
	for (int32_t c = 0; c < k; c++)
		C[c] = sizes[c] > 0 ? C[c] / ((double) sizes[c] * (double) sizes[c]) : 0;

	/* argmin over the non-empty clusters, lowest index on ties */
	std::vector<double> two_over(k);
	for (int32_t c = 0; c < k; c++)
		two_over[c] = sizes[c] > 0 ? 2.0 / (double) sizes[c] : 0;
	const int64_t chunks = (n_ + 4095) / 4096;
	pool_->parallel_for(chunks, [&](int64_t ch, int) {
		for (int64_t i = ch * 4096; i < std::min(n_, (ch + 1) * 4096); i++)
		{
			const double *si = S + (size_t) i * k;
			double		best = 0;
			int32_t		bi = -1;
			for (int32_t c = 0; c < k; c++)
			{
				if (sizes[c] == 0)
					continue;
				double		v = C[c] - two_over[c] * si[c];
				if (bi < 0 || v < best)
				{
					best = v;
					bi = c;
				}
			}
			out->labels[i] = bi;
			/* with a division: a row equal to every member of its cluster gets exactly 0 */
			out->dist2[i] = diag_[i] + (C[bi] - 2.0 * si[bi] / (double) sizes[bi]);
		}
	});

	double	   *X = out->cross;
	std::fill(X, X + k, 0.0);
	double		total = 0;
	for (int64_t i = 0; i < n_; i++)
	{
		const double *si = S + (size_t) i * k;
		X[out->labels[i]] += si[out->labels[i]];
		for (int32_t c = 0; c < k; c++)
			total += si[c];
	}
	out->kernel_sum = total;
}

std::unique_ptr<KernelDevice>
make_cpu_kernel_device(const float *x, int64_t n, int32_t d, const double *mean,
					   const KernelParams &p, bool stored, int32_t kmax, ThreadPool *pool)
{
	return std::unique_ptr<KernelDevice>(
		new CpuKernelDevice(x, n, d, mean, p, stored, kmax, pool));
}

}							/* namespace pgkm */
