/*
 * cpu_device.cpp: the multi-threaded CPU device: the assignment pass around
 * an assignment method (cpu_assign.h), the exact distances, and the centroid
 * update. k-means++ is kmeanspp_cpu.cpp.
 *
 * Determinism across thread counts: rows are cut into chunks whose size
 * depends only on the shape (never on the thread count); floating-point
 * partial sums are kept per chunk and reduced in chunk order, and counts and
 * centroid sums are integers (fixed point, centroid_sums.h), so their order
 * is free: each worker adds the rows it labels into its own sums, or the
 * clusters are split among threads when those would not fit the budget. So
 * n_threads = 1 and 7 give bit-identical results.
 *
 * Distances: the method finds the exact label (exact_distance.h); the
 * distance to the chosen centroid is sqdist_exact's, bit for bit
 * (row_distance.h), which is what inertia and distances use.
 *
 * Late passes change few labels, so iterate redoes only what changed, with
 * the same bits: a row keeps last pass's fp64 distance when its label and
 * that centroid's bits are unchanged (from 8 features: below, computing a
 * row costs less than finding it), and the sums change only by the rows
 * that moved (exact integers: the same bits as summing afresh).
 */
#include "centroid_sums.h"
#include "cpu_assign.h"
#include "device.h"
#include "errors.h"
#include "exact_distance.h"
#include "init.h"
#include "internal_hooks.h"
#include "phase_clock.h"
#include "row_array.h"
#include "row_distance.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

namespace pgkm
{

/*
 * Rows per assignment chunk: the chunk's per-row scratch stays small and the
 * kernel's row blocks fill it; at least 64 rows. Shape only, never the
 * thread count.
 */
int64_t
assign_chunk_rows(int32_t d, int32_t k)
{
	(void) d;
	int64_t		rows = 16384 / std::max<int32_t>(k, 1);
	rows = std::max<int64_t>(64, std::min<int64_t>(2048, rows));
	return (rows + 63) / 64 * 64;
}

int
useful_threads(int32_t n_threads, int64_t n, int32_t d, int32_t k)
{
	const int64_t chunks = (n + assign_chunk_rows(d, k) - 1) / assign_chunk_rows(d, k);
	return (int) std::max<int64_t>(1, std::min<int64_t>(resolve_threads(n_threads), chunks));
}

/*
 * Per-worker centroid sums (k x d each) while all of them fit this many
 * bytes: the pass then adds the rows it labels (the first pass every row,
 * later ones only the rows that moved) and the update merges the workers'
 * sums of the clusters they touched. Beyond it the update splits the
 * clusters among the threads and re-reads their rows (update_centroids).
 */
static std::atomic<int64_t> worker_sums_budget {(int64_t) 32 << 20};

extern "C" int64_t
pgkm_internal_set_worker_sums_budget(int64_t bytes)
{
	return worker_sums_budget.exchange(bytes < 0 ? (int64_t) 32 << 20 : bytes);
}

/*
 * Whether iterate keeps each row's distance for the next pass: from 8
 * features; below, computing a row (rows in lanes, row_distance.h) costs
 * less than finding it, and writing n distances only to drop them cost
 * memory bandwidth (8 of a pass's 24 MB at 1M x 2).
 */
static constexpr int32_t KEEP_DISTS_MIN_D = 8;

bool
cpu_keeps_row_distances(int32_t d)
{
	return d >= KEEP_DISTS_MIN_D;
}

bool
worker_sums_fit(int threads, int32_t d, int32_t k)
{
	return (int64_t) threads * k * d * (int64_t) sizeof(uint64_t) <= worker_sums_budget.load();
}

/* What an assignment pass adds to the workers' centroid sums. */
enum class PassSums
{
	NONE,						/* nothing (the final assignment; or split sums) */
	MOVED,						/* the rows whose label changed, to the new cluster and from the old */
	ALL							/* every row, to its cluster */
};

/* Time per iteration phase (internal_hooks.h). */
static PhaseTotals<PGKM_ITER_PHASES> iter_phases;

extern "C" void
pgkm_internal_iter_phase_ns(int64_t *ns)
{
	iter_phases.take(ns);
}

enum IterPhase
{
	ITER_PASS, ITER_UPDATE, ITER_REST
};

/* Interleaved inertia accumulators (row i -> bank i mod BANKS): no dependency chain between rows. */
static constexpr int BANKS = 4;

class CpuDevice : public Device
{
public:
	CpuDevice(const float *x, int64_t n, int32_t d, int32_t k, const double *mean,
			  const float *maxabs, ThreadPool *pool, const pgkm_options *opt)
		: x_(x), n_(n), d_(d), kmax_(k), k_(k), pool_(pool),
		  method_(make_cpu_assign(opt, x, n, d, k, mean, pool)),
		  chunk_rows_(assign_chunk_rows(d, k)), nchunks_((n + chunk_rows_ - 1) / chunk_rows_),
		  worker_sums_(cpu_worker_sums(n, d, k, pool->size(), opt))
	{
		fill_rows(labels_, n, -1, pool);
		cent_.assign((size_t) k * d, 0.0);
		sums_.assign((size_t) k * d, 0);
		if (maxabs)
			for (int32_t j = 0; j < d; j++)
			{
				scale_.push_back(fixed_point_scale(n, maxabs[j]));
				inv_scale_.push_back(1.0 / scale_.back());
			}
		chunk_inertia_.assign(nchunks_, 0.0);
		sizes_stride_ = (k + 15) / 16 * 16 + 16;	/* 128-byte lines apart, whatever the alignment */
		worker_size_deltas_.assign((size_t) pool->size() * sizes_stride_, 0);
		label_sizes_.assign(k, 0);
		worker_moved_.assign((size_t) pool->size() * 16, 0);
		worker_nearest_.resize(pool->size());
		worker_dist_.resize(pool->size());
		worker_ids_.resize(pool->size());
		worker_gathered_labels_.resize(pool->size());
		worker_rows_.resize(pool->size());
		worker_moved_rows_.resize(pool->size());
		worker_moved_from_.resize(pool->size());
		worker_dirty_.assign((size_t) pool->size() * kmax_, 0);
		dirty_.assign(kmax_, 0);
		stale_.assign(kmax_, 1);
		if (cpu_keeps_row_distances(d))
			fill_rows(row_dist_, n, 0.0, pool);
	}

	int32_t		kmeanspp(uint64_t seed, int32_t k, double *centroids, double *potential) override
	{
		int32_t		found = kmeanspp_sampled_cpu(x_, n_, d_, k, seed, pool_, centroids, potential);
		set_centroids(centroids, found);
		return found;
	}
	void		set_centroids(const double *centroids, int32_t k) override;
	void		iterate(IterStats *st, double *centroids, int64_t *sizes) override;
	void		assign(int32_t *labels, double *dist2, int64_t *sizes, double *inertia) override;
	std::string detail() const override
	{
		return std::to_string(pool_->size()) + (pool_->size() == 1 ? " thread" : " threads");
	}
	const char *name() const override { return "cpu"; }
	int64_t		last_pass_distances(int32_t *method) const override
	{
		*method = counts_.method;
		return counts_.distances;
	}

private:
	void		assign_pass(int32_t *labels, double *dist2, int64_t *sizes, double *inertia,
							int64_t *moved, PassSums add = PassSums::NONE, bool reuse = false);
	void		assign_chunk(int64_t ch, int w, int32_t *labels, double *dist2, PassSums add,
							 bool reuse);
	void		listed_distances(int64_t r0, int w, const int32_t *ids, int64_t cnt,
								 const int32_t *best, double *dist);
	void		merge_worker_sums(bool all, const int64_t *sizes, double *centroids);
	void		centroid_from_sums(int32_t c, int32_t j0, int32_t j1, const int64_t *sizes,
								   double *centroids) const;
	void		update_centroids(const int64_t *sizes, double *centroids, bool only_dirty);

	const float *x_;
	int64_t		n_;
	int32_t		d_;
	int32_t		kmax_;
	int32_t		k_;
	ThreadPool *pool_;
	std::unique_ptr<CpuAssign> method_;
	int64_t		chunk_rows_;	/* shape only */
	int64_t		nchunks_;
	RowArray<int32_t> labels_;	/* labels of the last iterate */
	std::vector<double> cent_;		/* current centroids, fp64 */
	std::vector<uint64_t> sums_;	/* centroid sums, fixed point (centroid_sums.h) */
	std::vector<double> scale_, inv_scale_;	/* per feature: the sums' scale, its inverse */
	const bool	worker_sums_;	/* the pass adds rows into the workers' sums (worker_sums_fit) */
	RowArray<uint64_t> worker_sums_delta_;	/* worker w's k x d from w * kmax_ * d_; zero between passes */
	std::vector<double> chunk_inertia_;
	/*
	 * The sizes come from the moved rows: label_sizes_[c] counts the rows
	 * of labels_ labelled c, and a pass adds each worker's changes, worker
	 * w's from w * sizes_stride_, to it; rows that keep their label cost
	 * no count. (A pass that stops midway leaves them apart, but it ends
	 * the run: pgkm_run takes no step after a failed one.)
	 */
	std::vector<int64_t> label_sizes_;
	std::vector<int64_t> worker_size_deltas_;
	int64_t		sizes_stride_;	/* kmax_ padded: workers' counts never share a cache line */
	std::vector<int64_t> worker_moved_;
	std::vector<std::vector<int32_t>> worker_nearest_;	/* a chunk's labels */
	std::vector<std::vector<double>> worker_dist_;	/* a chunk's distances when dist2 is null */
	/* listed_distances: a chunk's rows to compute, gathered with their labels */
	std::vector<std::vector<int32_t>> worker_ids_, worker_gathered_labels_;
	std::vector<std::vector<float>> worker_rows_;
	/* a chunk's moved rows and the clusters they left (PassSums::MOVED) */
	std::vector<std::vector<int32_t>> worker_moved_rows_, worker_moved_from_;
	AssignCounts counts_;		/* of the last pass */
	std::vector<int32_t> update_rows_;	/* update: per worker, a block's rows of its part */
	/*
	 * What iterate may keep from its last pass: row_dist_ (each row's fp64
	 * distance to its label in labels_; cpu_keeps_row_distances) where dists_valid_ and the label's
	 * centroid is not stale_ (its bits changed since); sums_ of every
	 * cluster where sums_valid_ (the sums of labels_' rows), but the
	 * clusters a row joined or left in this pass (worker_dirty_, then
	 * dirty_). Cleared before the work they describe, set after it, so an
	 * interrupted pass leaves nothing to trust (and the next sums every row
	 * afresh).
	 */
	RowArray<double> row_dist_;
	std::vector<uint8_t> stale_;
	std::vector<uint8_t> worker_dirty_;	/* worker w's at w * kmax_ */
	std::vector<uint8_t> dirty_;
	bool		dists_valid_ = false, sums_valid_ = false;
	bool		keep_dists_ = false;	/* the running pass may keep row_dist_ */
	bool		all_stale_ = false;	/* every centroid moved: no row keeps its distance */
	/*
	 * Split sums (no worker_sums_): whether the next update keeps the clean
	 * clusters' sums, only when the last pass left at most a quarter of the
	 * rows in dirty clusters (else summing all at once costs less).
	 */
	bool		sums_worth_keeping_ = true;
};

void
CpuDevice::set_centroids(const double *centroids, int32_t k)
{
	if (k < 1 || k > kmax_)
		throw EngineError(PGKM_ERR_INTERNAL, "set_centroids: bad k");
	method_->set_centroids(centroids, k);
	if (k != k_)
		dists_valid_ = sums_valid_ = false;
	for (int32_t c = 0; c < k; c++)
		if (std::memcmp(&cent_[(size_t) c * d_], centroids + (size_t) c * d_, sizeof(double) * d_) != 0)
			stale_[c] = 1;
	k_ = k;
	std::copy(centroids, centroids + (size_t) k * d_, cent_.begin());
}

/*
 * dist[ids[t]] for the chunk's rows r0 + ids[t], t < cnt (best: their
 * labels, indexed like dist): gathered (worker w's scratch, at most
 * GATHER_FLOATS floats at a time) and computed together, since the kernel
 * works on blocks of consecutive rows.
 */
void
CpuDevice::listed_distances(int64_t r0, int w, const int32_t *ids, int64_t cnt, const int32_t *best,
							double *dist)
{
	const RowDistanceRun run = current_row_distance_kernel();
	const int32_t d = d_;
	const int64_t batch = std::max<int64_t>(1, GATHER_FLOATS / d);
	std::vector<float> &xs = worker_rows_[w];
	std::vector<int32_t> &lab = worker_gathered_labels_[w];
	std::vector<double> &out = worker_dist_[w];
	xs.resize((size_t) batch * d);
	lab.resize(batch);
	out.resize(batch);
	for (int64_t t0 = 0; t0 < cnt; t0 += batch)
	{
		const int64_t g = std::min<int64_t>(batch, cnt - t0);
		for (int64_t t = 0; t < g; t++)
		{
			const int64_t i = ids[t0 + t];
			std::copy(x_ + (r0 + i) * d, x_ + (r0 + i + 1) * d, xs.data() + t * d);
			lab[t] = best[i];
		}
		run(xs.data(), g, d, cent_.data(), lab.data(), out.data());
		for (int64_t t = 0; t < g; t++)
			dist[ids[t0 + t]] = out[t];
	}
}

/* Row i of dist[0..m) into bank i mod BANKS, in row order, the banks then combined in a fixed order. */
static double
banked_sum(const double *dist, int64_t m)
{
	static_assert(BANKS == 4, "four accumulators");
	double		a0 = 0, a1 = 0, a2 = 0, a3 = 0;	/* named: an array of them stayed in memory */
	int64_t		i = 0;
	for (; i + BANKS <= m; i += BANKS)
	{
		a0 += dist[i];
		a1 += dist[i + 1];
		a2 += dist[i + 2];
		a3 += dist[i + 3];
	}
	if (i < m)
		a0 += dist[i];
	if (i + 1 < m)
		a1 += dist[i + 1];
	if (i + 2 < m)
		a2 += dist[i + 2];
	return (a0 + a1) + (a2 + a3);
}

/*
 * One chunk: the method's labels; the moved rows, the clusters they joined
 * or left and the changes of the sizes (blocks of rows that kept their
 * labels are passed over at one compare each) and, when the pass may keep
 * last pass's distances, the rows whose label or centroid changed; then
 * each row's exact fp64 distance
 * (row_distance.h), kept or computed, and the chunk's inertia (banked_sum);
 * then the rows that add tells of go into the worker's centroid sums, while
 * they are still in cache.
 */
void
CpuDevice::assign_chunk(int64_t ch, int w, int32_t *labels, double *dist2, PassSums add,
						bool reuse)
{
	const int32_t d = d_;
	int64_t    *size_delta = worker_size_deltas_.data() + (size_t) w * sizes_stride_;
	const int64_t r0 = ch * chunk_rows_, r1 = std::min(n_, r0 + chunk_rows_);
	const int64_t m = r1 - r0;
	std::vector<int32_t> &nearest = worker_nearest_[w];
	nearest.resize(m);
	method_->nearest(r0, r1, w, nearest.data());
	const int32_t *best = nearest.data();
	const bool	kept = reuse && cpu_keeps_row_distances(d);
	double	   *dist = kept ? row_dist_.data() + r0 : dist2 ? dist2 + r0 : nullptr;
	if (!dist)
	{
		worker_dist_[w].resize(m);
		dist = worker_dist_[w].data();
	}
	/* which rows keep their distance */
	const bool	keep = kept && keep_dists_ && !all_stale_;
	std::vector<int32_t> &ids = worker_ids_[w];
	if (keep)
		ids.resize(m);
	int64_t		mv = 0, cnt = 0;
	uint8_t    *dirty = worker_dirty_.data() + (size_t) w * kmax_;
	const uint8_t *stale = stale_.data();
	int32_t    *lab = labels + r0;
	int32_t    *moved_rows = nullptr, *moved_from = nullptr;
	if (add == PassSums::MOVED)
	{
		worker_moved_rows_[w].resize(m);
		worker_moved_from_[w].resize(m);
		moved_rows = worker_moved_rows_[w].data();
		moved_from = worker_moved_from_[w].data();
	}
	/* a change of label is rare after the first passes */
	const auto	row = [&](int64_t i) {
		const int32_t bi = best[i];
		if (keep)
		{
			ids[cnt] = (int32_t) i;
			cnt += (lab[i] != bi) | stale[bi];
		}
		if (lab[i] != bi)
		{
			if (moved_rows)
			{
				moved_rows[mv] = (int32_t) i;
				moved_from[mv] = lab[i];
			}
			mv++;
			const bool	had = (uint32_t) lab[i] < (uint32_t) kmax_;	/* -1: no label yet */
			if (had)
				size_delta[lab[i]]--;
			size_delta[bi]++;
			if (reuse)
			{
				if (had)
					dirty[lab[i]] = 1;
				dirty[bi] = 1;
			}
			lab[i] = bi;
		}
	};
	constexpr int64_t SCAN = 16;
	int64_t		i = 0;
	if (!keep)
		for (; i + SCAN <= m; i += SCAN)
		{
			typedef int32_t v4i __attribute__((vector_size(16)));
			v4i			changed = {};
			for (int64_t r = 0; r < SCAN; r += 4)
			{
				v4i			was, now;
				memcpy(&was, lab + i + r, sizeof(was));
				memcpy(&now, best + i + r, sizeof(now));
				changed |= was ^ now;
			}
			if (changed[0] | changed[1] | changed[2] | changed[3])
				for (int64_t r = 0; r < SCAN; r++)
					row(i + r);
		}
	for (; i < m; i++)
		row(i);
	/* gathering most of a chunk costs more than computing it whole (same bits either way) */
	if (keep && cnt * 2 <= m)
		listed_distances(r0, w, ids.data(), cnt, best, dist);
	else
		current_row_distance_kernel() (x_ + r0 * d, m, d, cent_.data(), best, dist);
	chunk_inertia_[ch] = banked_sum(dist, m);
	worker_moved_[(size_t) w * 16] += mv;
	uint64_t   *wsums = worker_sums_delta_.data() + (size_t) w * kmax_ * d;
	if (add == PassSums::ALL)
		add_rows_fixed(x_ + r0 * d, m, d, best, scale_.data(), wsums);
	else if (add == PassSums::MOVED)
		move_rows_fixed(x_ + r0 * d, d, moved_rows, moved_from, (int32_t) mv, best, scale_.data(),
						wsums);
}

/* Full assignment pass: per-chunk inertia summed in chunk order, per-worker integer counts. */
void
CpuDevice::assign_pass(int32_t *labels, double *dist2, int64_t *sizes, double *inertia,
					   int64_t *moved, PassSums add, bool reuse)
{
	const int32_t k = k_;
	const bool	own = labels == labels_.data();	/* else a copy of labels_ (assign) */
	std::fill(worker_size_deltas_.begin(), worker_size_deltas_.end(), 0);
	std::fill(worker_moved_.begin(), worker_moved_.end(), 0);
	pool_->parallel_for(nchunks_, [&](int64_t ch, int w) {
		assign_chunk(ch, w, labels, dist2, add, reuse);
	});
	double		tot = 0;
	for (double v : chunk_inertia_)
		tot += v;
	*inertia = tot;
	int64_t		mv = 0;
	for (int w = 0; w < pool_->size(); w++)
		mv += worker_moved_[(size_t) w * 16];
	*moved = mv;
	counts_ = method_->take_counts(mv);
	for (int32_t c = 0; c < kmax_; c++)
	{
		int64_t		s = label_sizes_[c];
		for (int w = 0; w < pool_->size(); w++)
			s += worker_size_deltas_[(size_t) w * sizes_stride_ + c];
		if (own)
			label_sizes_[c] = s;
		if (c < k)
			sizes[c] = s;
	}
}

/* Features j0..j1 of cluster c's centroid = its sums / its size; an empty cluster keeps its centroid. */
void
CpuDevice::centroid_from_sums(int32_t c, int32_t j0, int32_t j1, const int64_t *sizes, double *centroids) const
{
	if (sizes[c] == 0)
		return;
	const double size = (double) sizes[c];
	const uint64_t *s = sums_.data() + (size_t) c * d_;
	for (int32_t j = j0; j < j1; j++)
		centroids[(size_t) c * d_ + j] = fixed_point_value(s[j], inv_scale_[j]) / size;
}

/*
 * The workers' sums of this pass merged into sums_ (every cluster when all,
 * else the clusters each worker touched: worker_dirty_), the workers' own
 * left at zero; then each non-empty cluster's centroid = its sums / size.
 */
void
CpuDevice::merge_worker_sums(bool all, const int64_t *sizes, double *centroids)
{
	const int32_t d = d_;
	const int	workers = pool_->size();
	const auto	cluster = [&](int64_t c) {
		uint64_t   *s = sums_.data() + (size_t) c * d;
		for (int w = 0; w < workers && (all || dirty_[c]); w++)
		{
			if (!all && !worker_dirty_[(size_t) w * kmax_ + c])
				continue;
			uint64_t   *ws = worker_sums_delta_.data() + ((size_t) w * kmax_ + c) * d;
			for (int32_t j = 0; j < d; j++)
				s[j] += ws[j];
			std::fill(ws, ws + d, 0);
		}
		centroid_from_sums((int32_t) c, 0, d, sizes, centroids);
	};
	/* under 4,096 values to merge, on the calling thread: a pool call would cost more */
	if ((int64_t) k_ * d * (all ? workers : 1) < 4096)
		for (int32_t c = 0; c < k_; c++)
			cluster(c);
	else
		pool_->parallel_for(k_, [&](int64_t c, int) { cluster(c); });
}

/*
 * Split sums (no worker_sums_): new centroid = sum of its rows / size.
 * Clusters are split into contiguous ranges (parts) balanced by size; each
 * task scans the labels and sums only its own clusters' rows, so no partial
 * sums need merging. The scan lists a block's
 * own rows without a branch per row (a mispredicted branch per row cost
 * more than the sums at small d); a part with few clusters and many
 * features is split by features too. Empty clusters keep their previous
 * centroid (the driver repairs them). only_dirty: sums_ holds every
 * cluster's sums of the last labels, and only the dirty_ clusters are
 * summed again (a part with none skips the scan).
 */
static constexpr int64_t UPDATE_BLOCK = 4096;

void
CpuDevice::update_centroids(const int64_t *sizes, double *centroids, bool only_dirty)
{
	const int32_t d = d_, k = k_;
	const int	threads = pool_->size();
	const int32_t parts = std::min<int32_t>(k, threads);
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
	const int32_t np = (int32_t) bounds.size() - 1;
	/* feature slices of at least 16 features, while parts alone leave threads idle */
	const int32_t slices = std::max<int32_t>(1, std::min<int32_t>(d / 16, threads / np));
	update_rows_.resize((size_t) threads * UPDATE_BLOCK);
	const int32_t *lab = labels_.data();
	const uint8_t *dirty = dirty_.data();
	pool_->parallel_for((int64_t) np * slices, [&](int64_t task, int w) {
		const int32_t p = (int32_t) (task / slices), sl = (int32_t) (task % slices);
		const int32_t c0 = bounds[p], c1 = bounds[p + 1];
		const uint32_t span = (uint32_t) (c1 - c0);
		const int32_t j0 = (int32_t) ((int64_t) d * sl / slices),
			j1 = (int32_t) ((int64_t) d * (sl + 1) / slices);
		uint64_t   *sums = sums_.data();
		int32_t    *rows = update_rows_.data() + (size_t) w * UPDATE_BLOCK;
		bool		scan = true;
		if (only_dirty)
			scan = std::find(dirty + c0, dirty + c1, 1) != dirty + c1;
		for (int32_t c = c0; c < c1 && scan; c++)
			if (!only_dirty || dirty[c])
				std::fill(sums + (size_t) c * d + j0, sums + (size_t) c * d + j1, 0);
		for (int64_t i0 = 0; i0 < n_ && scan; i0 += UPDATE_BLOCK)
		{
			pool_->checkpoint(w);
			const int32_t nb = (int32_t) std::min<int64_t>(UPDATE_BLOCK, n_ - i0);
			const int32_t *lb = lab + i0;
			int32_t		m = 0;
			if (only_dirty)
				for (int32_t r = 0; r < nb; r++)
				{
					rows[m] = r;
					m += ((uint32_t) (lb[r] - c0) < span) & dirty[lb[r]];
				}
			else if (np == 1)
				for (; m < nb; m++)
					rows[m] = m;
			else
				for (int32_t r = 0; r < nb; r++)
				{
					rows[m] = r;
					m += (uint32_t) (lb[r] - c0) < span;
				}
			add_listed_rows(x_ + i0 * d, d, j0, j1, rows, m, lb, scale_.data(), sums);
		}
		for (int32_t c = c0; c < c1; c++)
			centroid_from_sums(c, j0, j1, sizes, centroids);
	});
}

void
CpuDevice::iterate(IterStats *st, double *centroids, int64_t *sizes)
{
	double		inertia;
	int64_t		moved;
	PhaseClock<PGKM_ITER_PHASES> clock(iter_phases);
	if (scale_.empty())
		throw EngineError(PGKM_ERR_INTERNAL, "iterate: a device made without the columns' ranges");
	const bool	all = !sums_valid_;
	const bool	sums_kept = sums_valid_ && sums_worth_keeping_;
	sums_valid_ = false;
	if (worker_sums_ && all)
	{
		std::fill(sums_.begin(), sums_.end(), 0);
		fill_rows(worker_sums_delta_, (int64_t) pool_->size() * kmax_ * d_, (uint64_t) 0, pool_);
	}
	keep_dists_ = dists_valid_;
	all_stale_ = std::find(stale_.begin(), stale_.begin() + k_, 0) == stale_.begin() + k_;
	dists_valid_ = false;
	method_->begin_pass(false);
	assign_pass(labels_.data(), nullptr, sizes, &inertia, &moved,
				!worker_sums_ ? PassSums::NONE : all ? PassSums::ALL : PassSums::MOVED, true);
	clock.mark(ITER_PASS);
	dists_valid_ = true;
	std::fill(stale_.begin(), stale_.end(), 0);
	st->inertia = inertia;
	st->moved = moved;
	std::fill(dirty_.begin(), dirty_.end(), 0);
	for (int w = 0; w < pool_->size(); w++)
		for (int32_t c = 0; c < kmax_; c++)
			dirty_[c] |= worker_dirty_[(size_t) w * kmax_ + c];
	std::copy(cent_.begin(), cent_.begin() + (size_t) k_ * d_, centroids);
	if (worker_sums_)
		merge_worker_sums(all, sizes, centroids);
	else
		update_centroids(sizes, centroids, sums_kept);
	std::fill(worker_dirty_.begin(), worker_dirty_.end(), 0);
	clock.mark(ITER_UPDATE);
	sums_valid_ = true;
	int64_t		dirty_rows = 0;
	for (int32_t c = 0; c < k_; c++)
		dirty_rows += dirty_[c] ? sizes[c] : 0;
	sums_worth_keeping_ = dirty_rows * 4 <= n_;
	set_centroids(centroids, k_);
	clock.mark(ITER_REST);
}

void
CpuDevice::assign(int32_t *labels, double *dist2, int64_t *sizes, double *inertia)
{
	int64_t		moved;
	std::copy(labels_.begin(), labels_.end(), labels);
	method_->begin_pass(true);
	assign_pass(labels, dist2, sizes, inertia, &moved);
}

std::unique_ptr<Device>
make_cpu_device(const float *x, int64_t n, int32_t d, int32_t k, const double *mean,
				const float *maxabs, ThreadPool *pool, const pgkm_options *opt)
{
	return std::unique_ptr<Device>(new CpuDevice(x, n, d, k, mean, maxabs, pool, opt));
}

}							/* namespace pgkm */
