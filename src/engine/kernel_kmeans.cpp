/*
 * kernel_kmeans.cpp: the step loop of kernel k-means (kernel_kmeans.h).
 *
 * A run works on partitions: L_0 from the init, then L_{s+1} = the argmin
 * of the pass over K from L_s (kernel_device.h). The feature-space centroid
 * c^s is the mean of phi over L_s and never exists as a vector.
 * Semantics mirror the driver's Lloyd (scikit-learn 1.2), with c^s in the
 * place of the centroids:
 *   - step s assigns every row to its nearest c^s (one pass) and counts the
 *     rows that moved;
 *   - strict convergence when no row moved; otherwise, from step 1 on, stop
 *     when the squared shift sum_c ||c^s_c - c^{s-1}_c||^2, computed from K
 *     as C^s_c + C^{s-1}_c - 2 cross_c / (|L_s,c| |L_{s-1},c|), is at most
 *     tol * (the feature-space variance trace(K)/n - sum(K)/n^2) / d; for the
 *     linear kernel that is Lloyd's test exactly; tol = 0: strict only;
 *   - the labels returned are assigned against the last centroids (the pass
 *     that detected convergence, or one more pass after max_iter), and
 *     iterations counts the partitions updated, as Lloyd's does.
 * Init: random labels (each row a uniform cluster, Popcorn's), greedy
 * k-means++ in feature space (the partition is each row's nearest seed), or
 * given labels.
 * Empty clusters (Popcorn leaves them at the feature-space origin, where
 * they capture rows) follow the driver's Lloyd: k clusters whenever the
 * data has k points apart in feature space. An empty cluster takes no part
 * in a pass's argmin; after a pass it takes a far row (kernel_relocate.cpp)
 * (1) on the initial partition, after one pass that measures D, so that the
 * initial partition is the run's true start; (2) on every iteration's
 * assignment; (3) on the final assignment, which is then made again from
 * the repaired partition (one more pass), at most k times. A cluster stays
 * empty only when every row coincides with its centroid (fewer points apart
 * than k: it is dropped, result.k < k_requested), or after those k rounds
 * (unfilled_clusters). After a move the next step does not test the shift.
 * Units: the data is x = (X - shift) 2^e (pgkm_options); K is evaluated
 * with gamma 2^-2e (KernelParams::in_engine_units), so it is the caller's K
 * for the RBF, polynomial and sigmoid kernels and 2^2e times it for the
 * linear one. A shift changes no feature-space distance of the linear and
 * RBF kernels and is refused for the others (they depend on the origin).
 * Results are converted at the end: input-space means unshifted and
 * unscaled, the linear kernel's distances and sums of squares unscaled;
 * the centroid norms stay in the engine's units (prediction applies the
 * same transform to its row).
 */
#include "kernel_kmeans.h"
#include "errors.h"
#include "gpu_kernel_device.h"
#include "rng.h"
#include "run_phases.h"
#include "stats.h"
#include "thread_pool.h"
#include "units.h"
#include "util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace pgkm
{

namespace
{

/* What a finished run leaves: see pgkm_result and pgkm_kernel_result. */
struct Outcome
{
	int32_t		k = 0;
	std::vector<int32_t> labels, init_labels, members;
	std::vector<double> dist;	/* squared until the result is made */
	std::vector<int64_t> seeds; /* k-means++ seed rows, else empty */
	std::vector<int64_t> member_sizes;
	std::vector<double> norms;
	double		inertia = 0;
	int32_t		iterations = 0;
	bool		converged = false;
	int32_t		run = 0;
	int32_t		repairs = 0;
	int32_t		unfilled = 0;
};

class KernelLoop : public KernelRun
{
public:
	KernelLoop(const float *x, int64_t n, int32_t d, const pgkm_options &opt,
			   pgkm_interrupt_fn interrupt, void *interrupt_ctx);
	int			step(pgkm_progress *progress) override;
	bool		result(pgkm_result *out) const override;

private:
	typedef RunPhase Phase;
	template <typename Loop>
	friend int	pgkm::step_phase(Loop &loop, RunPhase &phase, pgkm_progress *progress);

	void		step_init(pgkm_progress *progress);
	void		step_iterate(pgkm_progress *progress);
	void		step_final(pgkm_progress *progress);
	void		run_pass();
	double		centroid_shift() const;
	KernelPassView last_pass() const;
	void		end_or_fill(pgkm_progress *progress);
	void		end_run(int32_t unfilled, pgkm_progress *progress);
	void		finish();
	void		fill_progress(pgkm_progress *p, int32_t iteration, double inertia,
							  int64_t moved) const;

	const float *x_;
	int64_t		n_;
	int32_t		d_;
	pgkm_options opt_;
	Units		units_;			/* the caller's units: results are converted back */
	bool		scaled_distances_;	/* linear: distances scale with the data */
	std::vector<int32_t> given_;
	Stopwatch	clock_;
	int			n_runs_ = 1;
	std::unique_ptr<ThreadPool> pool_;
	std::unique_ptr<KernelDevice> dev_;
	KernelParams params_;
	bool		built_ = false;
	bool		have_tol_ = false;
	double		tol_scaled_ = 0;

	/* the current run: L_s in labels_, the pass's outputs beside it */
	Phase		phase_ = Phase::Init;
	int			run_ = 0;
	int32_t		k_ = 0;
	int32_t		step_ = 0;
	int32_t		iterations_ = 0;
	int32_t		repairs_ = 0;
	int32_t		fill_rounds_ = 0;	/* repairs of the final assignment */
	bool		repaired_before_ = false;	/* the previous step repaired */
	bool		final_pass_ = false;	/* Final must run one more pass */
	bool		converged_ = false;
	std::vector<int32_t> labels_, new_labels_, init_labels_;
	std::vector<int64_t> sizes_, new_sizes_, prev_sizes_, seeds_;
	std::vector<double> dist2_, norms_, prev_norms_, cross_, prev_cross_;

	/* the best run, then the result */
	bool		have_best_ = false;
	Outcome		best_;
	std::vector<double> centers_, init_centers_, cluster_inertia_;
	std::vector<int64_t> final_sizes_;
	pgkm_kernel_result kres_ {};
	std::string matrix_, detail_, fallback_;
	const char *device_ = "cpu";	/* the KernelDevice's name(), a literal */
	double		elapsed_ = 0;
};

KernelLoop::KernelLoop(const float *x, int64_t n, int32_t d, const pgkm_options &opt,
					   pgkm_interrupt_fn interrupt, void *interrupt_ctx)
	: x_(x), n_(n), d_(d), opt_(opt), units_(opt.shift, opt.scale_log2, d),
	  scaled_distances_(opt.kernel == PGKM_KERNEL_LINEAR)
{
	if (opt.init == PGKM_INIT_GIVEN)
	{
		given_.assign(opt.initial_labels, opt.initial_labels + n);
		for (int64_t i = 0; i < n; i++)
			if (given_[i] < 0 || given_[i] >= opt.k)
				throw EngineError(PGKM_ERR_INVALID,
								  fmt("initial label %d of row %lld is outside 0..%d",
									  given_[i], (long long) i, opt.k - 1));
		n_runs_ = 1;
	}
	else
		n_runs_ = opt.n_init;
	opt_.initial_labels = nullptr;
	opt_.initial_centroids = nullptr;
	opt_.gpu_plugin_path = nullptr;
	opt_.shift = nullptr;		/* kept in units_ */
	params_ = KernelParams::from_options(opt, d).in_engine_units(opt.scale_log2);
	/* the GPU when asked for and its plan fits (AUTO: else the CPU, and why); refusals before the data is read */
	const CudaPlugin *gpu = opt.device == PGKM_DEVICE_CPU ? nullptr : kernel_gpu_plugin(n, d, params_, opt, &fallback_);
	const int	threads = resolve_threads(opt.n_threads);
	const bool	stored = gpu ? false : kernel_store_matrix(n, d, opt, threads);
	pool_.reset(new ThreadPool(threads, interrupt, interrupt_ctx));
	DataStats	stats = data_statistics(x, n, d, pool_.get());
	if (gpu)
		dev_ = open_gpu_kernel_device(gpu, x, n, d, stats.mean.data(), params_, opt, interrupt, interrupt_ctx,
									  &fallback_);
	if (!dev_)
		dev_ = make_cpu_kernel_device(x, n, d, stats.mean.data(), params_,
									  gpu ? kernel_store_matrix(n, d, opt, threads) : stored, opt.k, pool_.get());
	device_ = dev_->name();
	const int32_t k = opt.k;
	labels_.resize(n);
	new_labels_.resize(n);
	dist2_.resize(n);
	sizes_.resize(k);
	new_sizes_.resize(k);
	norms_.resize(k);
	cross_.resize(k);
	seeds_.resize(k);
}

void
KernelLoop::fill_progress(pgkm_progress *p, int32_t iteration, double inertia, int64_t moved) const
{
	report_step(p, run_, iteration, scaled_distances_ ? units_.squared(inertia) : inertia, moved,
				clock_.seconds());
	if (p)
		p->method = PGKM_METHOD_KERNEL;
}

/*
 * The objective: squared distances summed in row order, each clamped at 0
 * (a distance is the square root of that). Only a kernel that is not
 * positive semi-definite (sigmoid) makes D negative beyond rounding.
 */
static double
objective(const std::vector<double> &dist2)
{
	double		s = 0;
	for (double v : dist2)
		s += v > 0 ? v : 0;
	return s;
}

static void
count_sizes(const std::vector<int32_t> &labels, int32_t k, std::vector<int64_t> &sizes)
{
	sizes.assign(k, 0);
	for (int32_t l : labels)
		sizes[l]++;
}

void
KernelLoop::step_init(pgkm_progress *progress)
{
	if (!built_)
	{
		dev_->build();
		built_ = true;
	}
	const uint64_t seed = derive_seed(opt_.seed, run_);
	double		potential = std::numeric_limits<double>::quiet_NaN();
	int32_t		k = opt_.k;
	seeds_.clear();
	if (opt_.init == PGKM_INIT_KMEANSPP)
	{
		seeds_.resize(k);
		k = kernel_kmeanspp(dev_.get(), n_, k, seed, pool_.get(), seeds_.data(),
							labels_.data(), &potential);
		seeds_.resize(k);
	}
	else if (opt_.init == PGKM_INIT_RANDOM)
	{
		SplitMix64	rng(seed);
		for (int64_t i = 0; i < n_; i++)
			labels_[i] = (int32_t) rng.below(k);
	}
	else
		std::copy(given_.begin(), given_.end(), labels_.begin());
	k_ = k;
	count_sizes(labels_, k, sizes_);
	step_ = 0;
	iterations_ = 0;
	repairs_ = 0;
	fill_rounds_ = 0;
	repaired_before_ = false;
	converged_ = false;
	final_pass_ = false;
	if (std::find(sizes_.begin(), sizes_.begin() + k, 0) != sizes_.begin() + k)
	{
		/* a cluster without rows has no centroid to start from: one pass measures D, it takes a far row */
		run_pass();
		repairs_ += kernel_fill_empty(last_pass(), labels_, sizes_, true);
	}
	init_labels_ = labels_;
	phase_ = Phase::Iterate;
	fill_progress(progress, 0, potential, 0);
}

void
KernelLoop::run_pass()
{
	KernelPass	out;
	out.labels = new_labels_.data();
	out.dist2 = dist2_.data();
	out.norms = norms_.data();
	out.cross = cross_.data();
	dev_->pass(labels_.data(), sizes_.data(), k_, &out);
	if (!have_tol_)
	{
		/* the feature-space variance, spread over the d input features */
		const double *diag = dev_->diag();
		double		trace = 0;
		for (int64_t i = 0; i < n_; i++)
			trace += diag[i];
		double		var = trace / n_ - out.kernel_sum / ((double) n_ * n_);
		tol_scaled_ = opt_.tol * std::max(var, 0.0) / d_;
		have_tol_ = true;
	}
}

/* sum_c ||c^s_c - c^{s-1}_c||^2 over the clusters non-empty in both partitions. */
double
KernelLoop::centroid_shift() const
{
	double		shift = 0;
	for (int32_t c = 0; c < k_; c++)
		if (sizes_[c] > 0 && prev_sizes_[c] > 0)
			shift += norms_[c] + prev_norms_[c] -
				2.0 * prev_cross_[c] / ((double) sizes_[c] * (double) prev_sizes_[c]);
	return shift;
}

/* The last pass, for the moves into empty clusters. */
KernelPassView
KernelLoop::last_pass() const
{
	return KernelPassView {x_, n_, d_, k_, new_labels_.data(), dist2_.data(), dev_->diag(),
						   norms_.data(), sizes_.data()};
}

void
KernelLoop::step_iterate(pgkm_progress *progress)
{
	run_pass();
	const int32_t s = step_;
	if (s >= 1 && tol_scaled_ > 0 && !repaired_before_ && centroid_shift() <= tol_scaled_)
	{
		/* converged on the shift: this pass was the final assignment against c^s */
		iterations_ = s;
		converged_ = true;
		end_or_fill(progress);
		return;
	}
	int64_t		moved = 0;
	for (int64_t i = 0; i < n_; i++)
		moved += new_labels_[i] != labels_[i];
	const double inertia = objective(dist2_);
	count_sizes(new_labels_, k_, new_sizes_);
	const int32_t repaired = kernel_fill_empty(last_pass(), new_labels_, new_sizes_, false);
	repairs_ += repaired;
	iterations_ = s + 1;
	fill_progress(progress, iterations_, inertia, moved);
	if (repaired == 0 && moved == 0)
	{
		converged_ = true;		/* strict: the labels are the final assignment already */
		phase_ = Phase::Final;
		return;
	}
	prev_norms_ = norms_;
	prev_cross_ = cross_;
	prev_sizes_ = sizes_;
	labels_.swap(new_labels_);
	sizes_.swap(new_sizes_);
	repaired_before_ = repaired > 0;
	step_++;
	if (iterations_ >= opt_.max_iter)
	{
		final_pass_ = true;
		phase_ = Phase::Final;
	}
}

void
KernelLoop::step_final(pgkm_progress *progress)
{
	if (final_pass_)
	{
		run_pass();
		/*
		 * After max_iter (no fill yet): this pass is the one that holds the
		 * last iteration's tol test, as step_iterate's next pass would have
		 * (the shift of c^s from c^(s-1) needs the pass against c^s).
		 */
		if (fill_rounds_ == 0 && step_ >= 1 && tol_scaled_ > 0 && !repaired_before_ &&
			centroid_shift() <= tol_scaled_)
			converged_ = true;
	}
	final_pass_ = false;
	end_or_fill(progress);
}

/*
 * new_labels_ is the final assignment against the centroids of labels_. A
 * cluster empty in it moves to a far row and the assignment is made again
 * from that partition (the next step), at most k times; then the run ends.
 */
void
KernelLoop::end_or_fill(pgkm_progress *progress)
{
	count_sizes(new_labels_, k_, new_sizes_);
	int32_t		unfilled = 0;
	if (fill_rounds_ < k_)
	{
		const int32_t moved = kernel_fill_empty(last_pass(), new_labels_, new_sizes_, false);
		if (moved > 0)
		{
			repairs_ += moved;
			fill_rounds_++;
			fill_progress(progress, iterations_, objective(dist2_), moved);
			labels_.swap(new_labels_);
			sizes_.swap(new_sizes_);
			final_pass_ = true;
			phase_ = Phase::Final;
			return;
		}
	}
	else if (!kernel_rows_for_empty(last_pass(), new_labels_, new_sizes_, false).empty())
		unfilled = (int32_t) std::count(new_sizes_.begin(), new_sizes_.begin() + k_, 0);
	end_run(unfilled, progress);
}

/*
 * The run's final labels are new_labels_ (with dist2_), assigned against the
 * centroids of labels_: keep the run if it is the best so far, then go on
 * to the next run or finish.
 */
void
KernelLoop::end_run(int32_t unfilled, pgkm_progress *progress)
{
	const double inertia = objective(dist2_);
	fill_progress(progress, iterations_, inertia, 0);
	if (!have_best_ || inertia < best_.inertia)
	{
		have_best_ = true;
		best_.k = k_;
		best_.inertia = inertia;
		best_.iterations = iterations_;
		best_.converged = converged_;
		best_.run = run_;
		best_.repairs = repairs_;
		best_.unfilled = unfilled;
		best_.labels = new_labels_;
		best_.dist = dist2_;
		best_.members = labels_;
		best_.member_sizes = sizes_;
		best_.norms.assign(norms_.begin(), norms_.begin() + k_);
		best_.init_labels = init_labels_;
		best_.seeds = seeds_;
	}
	if (!next_run(run_, n_runs_, phase_))
		finish();
}

/*
 * The result of the best run: clusters empty in its final labels dropped
 * and renumbered (their members become -1), input-space centroids (the
 * means of the final clusters) and initial centroids (the k-means++ seeds,
 * else the means of the initial partition), per-cluster inertia,
 * distances; all in the caller's units.
 */
void
KernelLoop::finish()
{
	Outcome    &b = best_;
	const int32_t k = b.k, d = d_;
	std::vector<int64_t> sizes(k, 0);
	for (int32_t l : b.labels)
		sizes[l]++;
	std::vector<int32_t> map(k, -1);
	int32_t		kept = 0;
	for (int32_t c = 0; c < k; c++)
		if (sizes[c] > 0)
			map[c] = kept++;
	for (int32_t &l : b.labels)
		l = map[l];
	for (int32_t &l : b.members)
		l = map[l];
	for (int32_t &l : b.init_labels)
		l = l < k ? map[l] : -1;
	std::vector<int64_t> msz(kept), fsz(kept);
	std::vector<double> norms(kept);
	std::vector<int64_t> seeds;
	for (int32_t c = 0; c < k; c++)
		if (map[c] >= 0)
		{
			msz[map[c]] = b.member_sizes[c];
			fsz[map[c]] = sizes[c];
			norms[map[c]] = b.norms[c];
			if (!b.seeds.empty())
				seeds.push_back(b.seeds[c]);
		}
	b.member_sizes.swap(msz);
	b.norms.swap(norms);
	b.seeds.swap(seeds);
	b.k = kept;
	final_sizes_.swap(fsz);

	auto		means = [&](const std::vector<int32_t> &labels, std::vector<double> &out) {
		std::vector<int64_t> cnt(kept, 0);
		out.assign((size_t) kept * d, 0.0);
		for (int64_t i = 0; i < n_; i++)
		{
			int32_t		c = labels[i];
			if (c < 0)
				continue;
			cnt[c]++;
			for (int32_t j = 0; j < d; j++)
				out[(size_t) c * d + j] += x_[i * d + j];
		}
		for (int32_t c = 0; c < kept; c++)
			for (int32_t j = 0; j < d && cnt[c] > 0; j++)
				out[(size_t) c * d + j] /= (double) cnt[c];
	};
	means(b.labels, centers_);
	if (!b.seeds.empty())
	{
		init_centers_.resize((size_t) kept * d);
		for (int32_t c = 0; c < kept; c++)
			for (int32_t j = 0; j < d; j++)
				init_centers_[(size_t) c * d + j] = x_[b.seeds[c] * d + j];
	}
	else
		means(b.init_labels, init_centers_);
	for (double &v : b.dist)
		v = std::max(v, 0.0);
	cluster_inertia_.assign(kept, 0.0);
	for (int64_t i = 0; i < n_; i++)
		cluster_inertia_[b.labels[i]] += b.dist[i];
	results_to_callers_units(units_, d, scaled_distances_, b.dist.data(), (int64_t) b.dist.size(), cluster_inertia_, b.inertia,
							 {&centers_, &init_centers_}, pool_.get());

	matrix_ = dev_->matrix();
	detail_ = dev_->detail();
	kres_.initial_labels = b.init_labels.data();
	kres_.members = b.members.data();
	kres_.member_sizes = b.member_sizes.data();
	kres_.centroid_norms = b.norms.data();
	kres_.gamma = params_.table_gamma;
	kres_.matrix = matrix_.c_str();
	kres_.matrix_s = dev_->build_seconds();
	std::vector<int32_t>().swap(labels_);
	std::vector<int32_t>().swap(new_labels_);
	std::vector<double>().swap(dist2_);
	dev_.reset();
	pool_.reset();
	elapsed_ = clock_.seconds();
	phase_ = Phase::Done;
}

int
KernelLoop::step(pgkm_progress *progress)
{
	return step_phase(*this, phase_, progress);
}

bool
KernelLoop::result(pgkm_result *out) const
{
	if (phase_ != Phase::Done)
		return false;
	memset(out, 0, sizeof(*out));
	const Outcome &b = best_;
	out->n = n_;
	out->d = d_;
	out->k = b.k;
	out->k_requested = opt_.k;
	out->centroids = centers_.data();
	out->initial_centroids = init_centers_.data();
	out->labels = b.labels.data();
	out->distances = b.dist.data();
	out->sizes = final_sizes_.data();
	out->cluster_inertia = cluster_inertia_.data();
	out->inertia = b.inertia;
	out->iterations = b.iterations;
	out->converged = b.converged ? 1 : 0;
	out->best_run = b.run;
	out->empty_cluster_repairs = b.repairs;
	out->unfilled_clusters = b.unfilled;
	out->elapsed_s = elapsed_;
	out->device = device_;
	out->device_detail = detail_.c_str();
	out->fallback_reason = fallback_.c_str();
	out->method_used = "kernel";	/* no input-space distances: no computations to count */
	out->kernel = &kres_;
	return true;
}

}							/* namespace */

std::unique_ptr<KernelRun>
make_kernel_run(const float *x, int64_t n, int32_t d, const pgkm_options &opt,
				pgkm_interrupt_fn interrupt, void *interrupt_ctx)
{
	return std::unique_ptr<KernelRun>(new KernelLoop(x, n, d, opt, interrupt, interrupt_ctx));
}

}							/* namespace pgkm */
