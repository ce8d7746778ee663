/*
 * driver.cpp: the run's state machine, shared by the CPU and GPU devices, so
 * convergence, empty cluster repair and n_init selection are the same code on
 * either device. Semantics follow scikit-learn 1.2's _kmeans_single_lloyd:
 *   - tol is scaled by the mean per-feature variance of the data;
 *   - each iteration assigns with the current centers, then recomputes them;
 *   - stop when labels did not change (strict convergence) or when the sum
 *     over clusters of squared center shifts <= scaled tol, or at max_iter;
 *   - a final assignment against the final centers gives labels, distances
 *     and inertia (sklearn skips it only when strictly converged, where it
 *     gives the same labels); iterations counts the Lloyd updates done.
 * Policies (documented in the README by the glue):
 *   - empty cluster during the iterations: FAISS-style split of the largest
 *     cluster (counted in empty_cluster_repairs);
 *   - empty cluster after an assignment that ends a step (the
 *     initialisation found fewer than k centroids, or the final assignment
 *     left one empty): moved to a row far from its centroid, then every row
 *     is assigned again (fill_empty_clusters, also counted); after the
 *     final assignment the run is then not converged, and iterates on
 *     while max_iter allows;
 *   - fewer clusters than k only when the data has fewer distinct points:
 *     then every row coincides with a centroid (result.k < k_requested).
 *     No empty cluster is ever returned.
 *   - progress.inertia of the init step is the k-means++ potential on the
 *     CPU when it ran on every row, NaN where it is not computed (random,
 *     given, k-means||, k-means++ on a sample: CPU tables above the sample
 *     size, GPU).
 */
#include "driver.h"
#include "centroid_sums.h"
#include "cpu_assign.h"
#include "errors.h"
#include "gpu_plugin.h"
#include "init.h"
#include "relocate.h"
#include "rng.h"
#include "stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace pgkm;

/* Relative size of the symmetric perturbation used when splitting a cluster. */
static constexpr double SPLIT_EPS = 1.0 / 1024.0;

/* Centroid features a repair reads to cap its splits' pushes, at most (about 30 ms). */
static constexpr int64_t SPLIT_NEAREST_WORK = (int64_t) 1 << 25;

/*
 * Directions a split tries before it gives a cluster up. A split moves the
 * two halves by +-delta with a sign per feature; when that direction is
 * orthogonal to every difference between the cluster's rows (rows on the
 * line x = y against the alternating signs), every row ties between the
 * halves, goes to the lower index, and the split separates nothing though
 * the rows are distinct. So each further try takes other signs; only rows
 * that no direction separates, identical ones, exhaust them.
 */
static constexpr int SPLIT_TRIES = 4;

/* The sign of feature j in split try t: alternating, all +, in pairs, then from a hash. */
static double
split_sign(int32_t j, int t)
{
	switch (t)
	{
		case 0:
			return j % 2 == 0 ? 1.0 : -1.0;
		case 1:
			return 1.0;
		case 2:
			return (j / 2) % 2 == 0 ? 1.0 : -1.0;
		default:
			return (splitmix64_mix((uint64_t) j * SPLITMIX64_GAMMA + (uint64_t) t) & 1) ? 1.0 : -1.0;
	}
}

pgkm_run::pgkm_run(float *x, int64_t n, int32_t d, const pgkm_options &opt,
				   pgkm_interrupt_fn interrupt, void *interrupt_ctx)
	: x_(x), n_(n), d_(d), opt_(opt), interrupt_(interrupt), interrupt_ctx_(interrupt_ctx),
	  units_(opt.shift, opt.scale_log2, d)
{
	if (opt.method == PGKM_METHOD_KERNEL)
	{
		kernel_ = make_kernel_run(x, n, d, opt, interrupt, interrupt_ctx);
		return;
	}
	if (opt.init == PGKM_INIT_GIVEN)
	{
		size_t		kd = (size_t) opt.k * d;
		const double limit = max_safe_abs(d);
		given_.resize(kd);
		for (size_t i = 0; i < kd; i++)
		{
			const double v = opt.initial_centroids[i];
			if (!std::isfinite(v))
				throw EngineError(PGKM_ERR_INVALID,
								  fmt("initial centroid %d feature %d is not finite",
									  (int) (i / d), (int) (i % d)));
			given_[i] = units_.to_engine(v, (int32_t) (i % d));
			if (!(std::fabs(given_[i]) <= limit))
				throw EngineError(PGKM_ERR_INVALID,
								  fmt("initial centroid %d feature %d (%g) is too far from the data for single-precision distances",
									  (int) (i / d), (int) (i % d), v));
		}
		n_runs_ = 1;			/* like sklearn: several runs from one start are pointless */
	}
	else
		n_runs_ = opt.n_init;
	opt_.initial_centroids = nullptr;
	opt_.shift = nullptr;		/* kept in units_ */
	opt_.gpu_plugin_path = nullptr;	/* not kept: the caller's string may go away */
	pool_.reset(new ThreadPool(useful_threads(opt.n_threads, n, d, opt.k), interrupt, interrupt_ctx));
	DataStats	stats = data_statistics(x, n, d, pool_.get());
	put_on_sum_grid(x, n, d, stats.maxabs.data(), pool_.get(), &sum_scales_);
	mean_ = stats.mean;
	tol_scaled_ = opt.tol == 0 ? 0 : stats.mean_var * opt.tol;
	data_scale_ = stats.mean_var > 0 ? std::sqrt(stats.mean_var) : 1.0;
	choose_device(opt.gpu_plugin_path);
	if (!device_)
		device_ = make_cpu_device(x, n, d, opt.k, stats.mean.data(), stats.maxabs.data(), pool_.get(), &opt_);
	device_name_ = device_->name();
	device_detail_ = device_->detail();
	size_t		kd = (size_t) opt.k * d;
	cur_.centers.resize(kd);
	old_centers_.resize(kd);
	cur_.sizes.resize(opt.k);
	fill_rows(cur_.labels, n, 0, pool_.get());
	fill_rows(cur_.dist, n, 0.0, pool_.get());
}

/* The GPU device when asked for and usable; AUTO records why not (then the CPU runs). */
void
pgkm_run::choose_device(const char *plugin_path)
{
	const pgkm_options &o = opt_;
	if (o.device != PGKM_DEVICE_GPU && o.device != PGKM_DEVICE_AUTO)
		return;
	std::string why;
	if (!method_on_gpu(o.method, &why))
	{
		if (o.device == PGKM_DEVICE_GPU)
			throw EngineError(PGKM_ERR_GPU_UNAVAILABLE, why);
		fallback_reason_ = why;
		return;
	}
	const CudaPlugin *p = load_cuda_plugin(plugin_path, &why);
	if (p)
	{
		try
		{
			device_ = make_gpu_device(p, x_, n_, d_, o.k, &opt_, interrupt_, interrupt_ctx_);
		}
		catch (const EngineError &e)
		{
			if (o.device == PGKM_DEVICE_GPU)
				throw;
			why = e.what();
		}
	}
	if (!device_ && o.device == PGKM_DEVICE_GPU)
		throw EngineError(PGKM_ERR_GPU_UNAVAILABLE, why);
	if (!device_)
		fallback_reason_ = why;
}

/*
 * FAISS-style repair: each empty cluster takes the centroid of the currently
 * largest cluster; the two are pushed apart by a small relative epsilon in
 * opposite directions (signs per feature: split_sign), of |b_j| plus the
 * column's robust spread (not its variance, which a few far rows inflate:
 * halves pushed that far leave their cluster, and Lloyd's inertia rose
 * for hundreds of iterations), at most a quarter of the way to the nearest
 * other centroid, and the largest cluster's count is assumed split in two. Deterministic; returns the
 * repairs done. A cluster that is empty again right after taking part in a
 * split tries the next direction; after SPLIT_TRIES it was split from
 * identical points (fewer distinct points than k) and is given up (left
 * empty, then dropped from the result) instead of split forever.
 */
int32_t
pgkm_run::repair_empty_clusters()
{
	const int32_t d = d_, k = cur_.k;
	double	   *centers = cur_.centers.data();
	int32_t		repairs = 0;
	std::vector<int64_t> sz(cur_.sizes.begin(), cur_.sizes.begin() + k);
	std::vector<char> split_now(k, 0);
	int64_t		nearest_work = 0;
	for (int32_t ci = 0; ci < k; ci++)
	{
		if (sz[ci] != 0)
			continue;
		if (split_last_[ci] && split_tries_[ci] < SPLIT_TRIES)
			split_tries_[ci]++;
		if (split_tries_[ci] >= SPLIT_TRIES)
			continue;
		int32_t		cj = 0;
		for (int32_t c = 1; c < k; c++)
			if (sz[c] > sz[cj])
				cj = c;
		if (sz[cj] < 2)
			break;				/* nothing left to split */
		double	   *a = centers + (size_t) ci * d;
		double	   *b = centers + (size_t) cj * d;
		if (split_scale_.empty())
			split_scale_ = robust_column_spreads();
		/*
		 * No farther than a quarter of the way to the nearest other
		 * non-empty centroid, so that both halves stay in cj's cell and take
		 * only rows they are nearer (a coordinate's own 2^-10 is 1.7e6 for
		 * epoch seconds; a spread may be the whole data's). Within a work
		 * budget per repair (k d per split); beyond it, uncapped.
		 */
		double		cap = INFINITY;
		if (nearest_work + (int64_t) k * d <= SPLIT_NEAREST_WORK)
		{
			nearest_work += (int64_t) k * d;
			double		best = INFINITY;
			for (int32_t c = 0; c < k; c++)
				if (c != cj && c != ci && sz[c] > 0)
				{
					double		s = 0;
					for (int32_t j = 0; j < d; j++)
					{
						const double t = centers[(size_t) c * d + j] - b[j];
						s += t * t;
					}
					best = std::min(best, s);
				}
			if (best > 0)
				cap = std::sqrt(best / d) / 4;	/* per coordinate: |a - b| <= sqrt(d) cap = D / 4 */
		}
		for (int32_t j = 0; j < d; j++)
		{
			double		delta = std::min(SPLIT_EPS * (std::fabs(b[j]) + split_scale_[j]), cap);
			double		sgn = split_sign(j, split_tries_[ci]);
			a[j] = b[j] + sgn * delta;
			b[j] = b[j] - sgn * delta;
		}
		sz[ci] = sz[cj] / 2;
		sz[cj] -= sz[ci];
		split_now[ci] = split_now[cj] = 1;
		repairs++;
	}
	split_last_.swap(split_now);
	return repairs;
}

/* Rows of the sample robust_column_spreads reads, at most. */
static constexpr int64_t SPREAD_SAMPLE = 4096;

/*
 * Each column's median absolute deviation on evenly spaced rows (the data's
 * scale where a split is pushed); where that is 0 (a column mostly of one
 * value, perhaps with far rows), the median of the other columns' nonzero
 * ones, else the data's overall scale. Computed at the run's first split.
 */
std::vector<double>
pgkm_run::robust_column_spreads() const
{
	const int64_t m = std::min<int64_t>(n_, SPREAD_SAMPLE);
	std::vector<double> spread(d_), v(m), nonzero;
	for (int32_t j = 0; j < d_; j++)
	{
		for (int64_t r = 0; r < m; r++)
			v[r] = x_[(r * n_ / m) * d_ + j];
		std::nth_element(v.begin(), v.begin() + m / 2, v.end());
		const double med = v[m / 2];
		for (double &t : v)
			t = std::fabs(t - med);
		std::nth_element(v.begin(), v.begin() + m / 2, v.end());
		spread[j] = v[m / 2];
		if (spread[j] > 0)
			nonzero.push_back(spread[j]);
	}
	double		fallback = data_scale_;
	if (!nonzero.empty())
	{
		std::nth_element(nonzero.begin(), nonzero.begin() + nonzero.size() / 2, nonzero.end());
		fallback = nonzero[nonzero.size() / 2];
	}
	for (double &s : spread)
		if (s == 0)
			s = fallback;
	return spread;
}

/*
 * After an assignment (labels, distances and sizes in cur_): while a cluster
 * is empty, move it to a row far from that row's own centroid (one distinct
 * row each, relocate.h) and assign every row again. Returns the inertia of
 * the last assignment. It ends because a moved centroid keeps its row for
 * good: the row lies at distance 0 from it, and no other centroid can be
 * there (the row was apart from every centroid, and rows at distance 0 are
 * never chosen again); so each round fills at least one cluster for good,
 * and at most k rounds run (with the CPU's exact labels; the GPU's float32
 * labels may not give a moved centroid its row, hence the bound). Clusters
 * still empty then are dropped: when no row is apart from its centroid,
 * every row coincides with one, so the data has exactly as many distinct
 * points as there are non-empty clusters.
 */
double
pgkm_run::fill_empty_clusters()
{
	const int32_t d = d_, k = cur_.k;
	double		inertia = 0;
	device_->assign(cur_.labels.data(), cur_.dist.data(), cur_.sizes.data(), &inertia);
	for (int32_t round = 0; round <= k; round++)
	{
		std::vector<int32_t> empty;
		for (int32_t c = 0; c < k; c++)
			if (cur_.sizes[c] == 0)
				empty.push_back(c);
		if (empty.empty())
			return inertia;
		std::vector<int64_t> rows = farthest_distinct_rows(x_, n_, d, cur_.dist.data(),
														   (int32_t) empty.size());
		if (rows.empty())
			break;				/* every row coincides with a centroid */
		for (size_t i = 0; i < rows.size(); i++)
			for (int32_t j = 0; j < d; j++)
				cur_.centers[(size_t) empty[i] * d + j] = x_[rows[i] * d + j];
		cur_.repairs += (int32_t) rows.size();
		device_->set_centroids(cur_.centers.data(), k);
		device_->assign(cur_.labels.data(), cur_.dist.data(), cur_.sizes.data(), &inertia);
	}
	for (int64_t i = 0; i < n_; i++)
		if (cur_.dist[i] > 0)
		{
			/* rows remain apart after k + 1 rounds: recorded, never returned empty (defensive: exact labels keep a relocated row) */
			for (int32_t c = 0; c < k; c++)
				cur_.unfilled += cur_.sizes[c] == 0;
			break;
		}
	return inertia;
}

/*
 * No empty cluster is returned: clusters still empty after
 * fill_empty_clusters (fewer distinct points than k) are dropped and labels
 * renumbered, so result.k < k_requested says so; their initial centroids
 * go with them, so the rows kept stay paired.
 */
void
pgkm_run::drop_empty_clusters()
{
	const int32_t d = d_, k = cur_.k;
	std::vector<int32_t> map(k, -1);
	int32_t		kept = 0;
	for (int32_t c = 0; c < k; c++)
		if (cur_.sizes[c] > 0)
		{
			if (kept != c)
			{
				std::copy(cur_.centers.begin() + (size_t) c * d,
						  cur_.centers.begin() + (size_t) (c + 1) * d,
						  cur_.centers.begin() + (size_t) kept * d);
				std::copy(cur_.init_centers.begin() + (size_t) c * d,
						  cur_.init_centers.begin() + (size_t) (c + 1) * d,
						  cur_.init_centers.begin() + (size_t) kept * d);
				cur_.sizes[kept] = cur_.sizes[c];
			}
			map[c] = kept++;
		}
	if (kept == k)
		return;
	for (int32_t &l : cur_.labels)
		l = map[l];
	cur_.init_centers.resize((size_t) kept * d);
	cur_.k = kept;
}

void
pgkm_run::fill_progress(pgkm_progress *p, int32_t iteration, double inertia, int64_t moved) const
{
	report_step(p, run_, iteration, units_.squared(inertia), moved, clock_.seconds());
}

/* The distance computations of the pass just done, for the progress report and the result. */
void
pgkm_run::count_pass(pgkm_progress *p, int32_t iteration)
{
	int32_t		method;
	int64_t		dist = device_->last_pass_distances(&method);
	dist = methods_.pass(iteration, method, dist, n_, cur_.k);
	if (p)
	{
		p->distance_computations = dist;
		p->method = method;
	}
}

void
pgkm_run::step_init(pgkm_progress *progress)
{
	uint64_t	seed = derive_seed(opt_.seed, run_);
	double		potential = std::numeric_limits<double>::quiet_NaN();
	double	   *centers = cur_.centers.data();
	int32_t		k;
	switch (opt_.init)
	{
		case PGKM_INIT_KMEANSPP:
			k = device_->kmeanspp(seed, opt_.k, centers, &potential);
			break;
		case PGKM_INIT_RANDOM:
			k = random_init(x_, n_, d_, opt_.k, seed, pool_.get(), centers);
			device_->set_centroids(centers, k);
			break;
		case PGKM_INIT_KMEANS_PARALLEL:
			k = kmeans_parallel_init(x_, n_, d_, opt_.k, seed, mean_.data(), pool_.get(), centers);
			device_->set_centroids(centers, k);
			break;
		default:
			k = opt_.k;
			std::copy(given_.begin(), given_.end(), cur_.centers.begin());
			device_->set_centroids(centers, k);
			break;
	}
	cur_.iterations = 0;
	cur_.repairs = 0;
	cur_.unfilled = 0;
	cur_.converged = false;
	cur_.k = k;
	if (k < opt_.k)
	{
		/*
		 * Fewer centroids than k (the init ran out of distinct points among
		 * the rows it looked at): the missing ones start as copies of the
		 * first, which get no row (ties go to the lowest index), and are
		 * filled like any empty cluster.
		 */
		for (int32_t c = k; c < opt_.k; c++)
			std::copy(centers, centers + d_, centers + (size_t) c * d_);
		cur_.k = opt_.k;
		device_->set_centroids(centers, opt_.k);
		cur_.init_centers.assign(centers, centers + (size_t) opt_.k * d_);
		fill_empty_clusters();
		drop_empty_clusters();
		k = cur_.k;
		device_->set_centroids(centers, k);
		cur_.init_centers.assign(centers, centers + (size_t) k * d_);
	}
	else
		cur_.init_centers.assign(centers, centers + (size_t) k * d_);
	split_last_.assign(k, 0);
	split_tries_.assign(k, 0);
	methods_.start();
	phase_ = Phase::Iterate;
	fill_progress(progress, 0, potential, 0);
}

void
pgkm_run::step_iterate(pgkm_progress *progress)
{
	const int32_t k = cur_.k;
	const size_t kd = (size_t) k * d_;
	std::copy(cur_.centers.begin(), cur_.centers.begin() + kd, old_centers_.begin());
	IterStats	st;
	device_->iterate(&st, cur_.centers.data(), cur_.sizes.data());
	/*
	 * A run's first iteration compares with "no labels" (sklearn starts from
	 * -1), whatever a device remembers from an earlier run of this n_init.
	 */
	if (cur_.iterations == 0)
		st.moved = n_;
	int32_t		repaired = repair_empty_clusters();
	if (repaired > 0)
		device_->set_centroids(cur_.centers.data(), k);
	cur_.repairs += repaired;
	cur_.iterations++;
	fill_progress(progress, cur_.iterations, st.inertia, st.moved);
	count_pass(progress, cur_.iterations);
	if (repaired > 0)
	{
		/* split clusters need at least one Lloyd update before any stop test */
		if (cur_.iterations >= opt_.max_iter)
			phase_ = Phase::Final;
		return;
	}
	if (st.moved == 0)
	{
		cur_.converged = true;	/* strict convergence: labels unchanged */
		phase_ = Phase::Final;
		return;
	}
	double		shift = 0;
	for (size_t i = 0; i < kd; i++)
	{
		double		t = cur_.centers[i] - old_centers_[i];
		shift += t * t;
	}
	if (shift <= tol_scaled_)
	{
		cur_.converged = true;
		phase_ = Phase::Final;
	}
	else if (cur_.iterations >= opt_.max_iter)
		phase_ = Phase::Final;
}

void
pgkm_run::step_final(pgkm_progress *progress)
{
	const int32_t d = d_;
	const int32_t repairs_before = cur_.repairs;
	const double inertia = fill_empty_clusters();
	count_pass(progress, cur_.iterations);
	if (cur_.repairs > repairs_before)
	{
		/*
		 * A centroid moved onto a row: the labels are no longer Lloyd's
		 * fixed point (the moved centroid took rows from another, whose
		 * centroid is not their mean now). Not converged; Lloyd's updates
		 * go on while max_iter allows.
		 */
		cur_.converged = false;
		if (cur_.iterations < opt_.max_iter)
		{
			fill_progress(progress, cur_.iterations, inertia, 0);
			phase_ = Phase::Iterate;
			return;
		}
	}
	drop_empty_clusters();
	const int32_t k = cur_.k;
	cur_.inertia = inertia;
	cur_.run = run_;
	fill_progress(progress, cur_.iterations, inertia, 0);
	if (!have_best_ || inertia < best_.inertia)
	{
		have_best_ = true;
		best_.inertia = inertia;
		best_.k = k;
		best_.iterations = cur_.iterations;
		best_.converged = cur_.converged;
		best_.run = cur_.run;
		best_.repairs = cur_.repairs;
		best_.unfilled = cur_.unfilled;
		best_methods_ = methods_.trail();
		best_.centers.assign(cur_.centers.begin(), cur_.centers.begin() + (size_t) k * d);
		best_.init_centers = cur_.init_centers;
		best_.sizes.assign(cur_.sizes.begin(), cur_.sizes.begin() + k);
		std::swap(best_.labels, cur_.labels);
		std::swap(best_.dist, cur_.dist);
		if (cur_.labels.size() != (size_t) n_)
			fill_rows(cur_.labels, n_, 0, pool_.get());
		if (cur_.dist.size() != (size_t) n_)
			fill_rows(cur_.dist, n_, 0.0, pool_.get());
	}
	if (!next_run(run_, n_runs_, phase_))
		finish();
}

/* Per-cluster inertia (in row order) and Euclidean distances; frees what the result does not need. */
void
pgkm_run::finish()
{
	best_cluster_inertia_.assign(best_.k, 0.0);
	for (int64_t i = 0; i < n_; i++)
		best_cluster_inertia_[best_.labels[i]] += best_.dist[i];
	/* in the caller's units: coordinates unshifted and unscaled, distances unscaled (powers of two) */
	results_to_callers_units(units_, d_, true, best_.dist.data(), n_, best_cluster_inertia_, best_.inertia,
							 {&best_.centers, &best_.init_centers}, pool_.get());
	RowArray<int32_t>().swap(cur_.labels);
	RowArray<double>().swap(cur_.dist);
	device_.reset();
	pool_.reset();
	elapsed_ = clock_.seconds();
	phase_ = Phase::Done;
}

int
pgkm_run::step(pgkm_progress *progress)
{
	if (kernel_)
		return kernel_->step(progress);
	return step_phase(*this, phase_, progress);
}

bool
pgkm_run::result(pgkm_result *out) const
{
	if (kernel_)
		return kernel_->result(out);
	if (phase_ != Phase::Done)
		return false;
	memset(out, 0, sizeof(*out));
	out->n = n_;
	out->d = d_;
	out->k = best_.k;
	out->k_requested = opt_.k;
	out->centroids = best_.centers.data();
	out->initial_centroids = best_.init_centers.data();
	out->labels = best_.labels.data();
	out->distances = best_.dist.data();
	out->sizes = best_.sizes.data();
	out->cluster_inertia = best_cluster_inertia_.data();
	out->inertia = best_.inertia;
	out->iterations = best_.iterations;
	out->converged = best_.converged ? 1 : 0;
	out->best_run = best_.run;
	out->empty_cluster_repairs = best_.repairs;
	out->unfilled_clusters = best_.unfilled;
	out->elapsed_s = elapsed_;
	out->device = device_name_.c_str();
	out->device_detail = device_detail_.c_str();
	out->fallback_reason = fallback_reason_.c_str();
	out->method_used = best_methods_.c_str();
	out->distance_computations = methods_.distances();
	out->distance_computations_lloyd = methods_.distances_lloyd();
	out->sum_scales = sum_scales_.data();
	return true;
}
