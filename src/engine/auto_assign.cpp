/*
 * auto_assign.cpp: method 'auto' on the CPU. Each pass is Lloyd's own, or
 * one bounded method's (chosen from the shape and the memory budget),
 * either dense (Lloyd's tiled kernel over every row, its best and runner-up
 * values kept as bounds: a Lloyd pass and a few stores per row) or pruned
 * (its own bounds skip rows and centroids). A dense pass leaves valid
 * bounds, so a pruned pass may follow it and it may follow anything. The
 * choice is made pass by pass from counts, never from the clock, so it does
 * not depend on the machine's load or the thread count: the rows that moved;
 * a pruned pass's rows opened and distances computed, priced against a
 * dense pass; in a dense pass, the method's O(1) test on every 8th row says
 * how many rows a pruned pass would skip. Every method returns the same
 * labels, so switching changes no result, only the time; what ran is
 * reported per iteration (plain and dense passes as "lloyd").
 *
 * Shapes where Lloyd uses its direct kernel (small d and k) run Lloyd only:
 * the tiled kernel of the dense passes is slower there.
 */
#include "auto_assign.h"
#include "bounded_assign.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

namespace pgkm
{

/*
 * Yinyang from k = 16 (two groups or more), Hamerly below, within the
 * engine's memory budget (opt->memory_limit, the data not counted) after
 * Lloyd's own needs; Lloyd when k < 4 (nothing to gain) or where Lloyd uses
 * its direct kernel.
 */
int32_t
auto_first_method(int64_t n, int32_t d, int32_t k, const pgkm_options *opt)
{
	if (k < 4 || !ExactMargins::usable(d) || !use_gemm(d, k))
		return PGKM_METHOD_LLOYD;
	double		budget = -1;
	if (opt && opt->memory_limit > 0)
	{
		pgkm_options base = *opt;
		base.method = PGKM_METHOD_LLOYD;
		budget = (double) opt->memory_limit - (double) pgkm_estimate_bytes(n, d, &base);
	}
	const int	threads = resolve_threads(opt ? opt->n_threads : 0);
	const int32_t wanted[] = {k >= 16 ? PGKM_METHOD_YINYANG : PGKM_METHOD_HAMERLY,
	PGKM_METHOD_HAMERLY};
	for (int32_t m : wanted)
		if (budget < 0 || method_state_bytes(m, n, d, k, threads) <= budget)
			return m;
	return PGKM_METHOD_LLOYD;
}

/*
 * The price of a pass per row, in Lloyd distances (one row against one
 * centroid in the tiled kernel), fitted to the per-pass times of n =
 * 245,760, d = 32 runs at k = 32, 256 and 1024 on the 2-core AVX-512 VM
 * (bench/RESULTS.md): a pruned pass costs OPENED per row its O(1) test did
 * not settle and DIST per distance it computed (group blocks, intervals,
 * bound updates: Yinyang's per-distance work costs about 2.5 Lloyd
 * distances). Hamerly's opened rows run a dense search of their own. Only
 * the prediction from a dense pass's sample uses them: passes that ran are
 * judged by their seconds.
 */
struct PassPrice
{
	double		opened, dist;
};

static PassPrice
pass_price(int32_t method)
{
	if (method == PGKM_METHOD_YINYANG)
		return {250.0, 2.5};
	return {30.0, 1.1};
}

/*
 * What a dense pass costs beyond Lloyd's own, per row (its bounds, its
 * sample, the rows it searches again in fp64: 17-27 Lloyd distances at
 * k = 16-32 on the 2-core box), and what making the bounded method's
 * per-row state costs, once, on the first try: the first try's price
 * before any was measured.
 */
static constexpr double DENSE_ROW = 24.0;
static constexpr double CREATE_ROW = 32.0;

/*
 * While more than PLAIN_MOVED of the rows change label per pass, passes are
 * Lloyd's own: pruning has never paid there (on Wu & Hong's sweep every
 * switch came below 0.7 %).
 */
static constexpr double PLAIN_MOVED = 0.02;

/*
 * The first try may come before the budget covers it once fewer than
 * FIRST_TRY_MOVED of the rows move per pass: the bounds then hold for most
 * rows (Wu & Hong's sweep switched at 0.1-0.7 %), and on data that never
 * settles (uniform rows) so few move only late in a long run. Its price
 * must still be within FIRST_TRY_BUDGET of the run's seconds so far (at
 * k = 32 a try is priced at 2.5 Lloyd passes: from pass 25 on; at
 * k = 1024 at once): a run that ends soon after its try does not repay it.
 */
static constexpr double FIRST_TRY_MOVED = 0.005;
static constexpr double FIRST_TRY_BUDGET = 0.1;

/* Lloyd passes timed before the first try (the run's first pass, warming up, is not one). */
static constexpr int LLOYD_SAMPLES = 2;

/*
 * A pruned pass at most IMPROVING_SLOWER times Lloyd's, with at most
 * IMPROVING_MOVED of the last pass's moved rows, is given another pass,
 * IMPROVING_PASSES times in a try at most, as on the GPU: at 16 threads
 * Wu & Hong's k = 1024, sigma^2 = 0.05 has its first pruned passes slower
 * than Lloyd's (whose kernel scales better than the bounds' bookkeeping)
 * and the later ones 3-4x faster.
 */
static constexpr double IMPROVING_SLOWER = 1.2;
static constexpr double IMPROVING_MOVED = 0.75;
static constexpr int IMPROVING_PASSES = 3;

/*
 * What tries lose (their dense passes' seconds beyond Lloyd's, and pruned
 * passes' slower than Lloyd's), with the next try's price, stays within
 * TRY_BUDGET of the run's seconds so far, as 'auto' does on the GPU
 * (gpu_auto_policy.h): so 'auto' is never more than a few percent slower
 * than 'lloyd' where nothing prunes, and short runs, which would not repay
 * a try, make none. Seconds, not counts, because what a pruned pass's work
 * costs against Lloyd's depends on the machine and the thread count (at 16
 * threads Lloyd's kernel gains more than the bounds' bookkeeping).
 */
static std::atomic<double> try_budget {0.03};

extern "C" double
pgkm_internal_set_auto_try_budget(double share)
{
	return try_budget.exchange(share < 0 ? 0.03 : share);
}

/* Passes priced from their counts instead of the clock (tests: the same choices on any machine). */
static std::atomic<bool> priced_by_counts {false};

extern "C" int32_t
pgkm_internal_set_auto_counted_seconds(int32_t on)
{
	return priced_by_counts.exchange(on != 0);
}

class AutoAssign : public CpuAssign
{
public:
	/* method: the bounded method to try (PGKM_METHOD_LLOYD: none, Lloyd's passes only) */
	AutoAssign(std::unique_ptr<CpuAssign> lloyd, int32_t method, const float *x, int64_t n,
			   int32_t d, int32_t kmax, const double *mean, ThreadPool *pool)
		: lloyd_(std::move(lloyd)), method_(method), x_(x), n_(n), d_(d), kmax_(kmax),
		  mean_(mean, mean + d), pool_(pool), price_(pass_price(method)),
		  budget_(try_budget.load(std::memory_order_relaxed)),
		  counted_(priced_by_counts.load(std::memory_order_relaxed)), last_(Clock::now())
	{
	}

	void		set_centroids(const double *centroids, int32_t k) override
	{
		k_ = k;
		if (method_ != PGKM_METHOD_LLOYD)
			centroids_.assign(centroids, centroids + (size_t) k * d_);
		active()->set_centroids(centroids, k);
	}

	void		nearest(int64_t r0, int64_t r1, int worker, int32_t *out) override
	{
		active()->nearest(r0, r1, worker, out);
	}

	AssignCounts take_counts(int64_t moved) override;

private:
	typedef std::chrono::steady_clock Clock;
	enum class Pass
	{
		PLAIN,					/* Lloyd's own */
		DENSE,					/* the bounded method's dense pass: bounds and a sample */
		PRUNED
	};

	CpuAssign  *active() const
	{
		return pass_ == Pass::PLAIN ? lloyd_.get() : static_cast<CpuAssign *>(bounded_.get());
	}
	/* Between passes: the method that runs next gets the current centroids if it had not. */
	void		next_pass(Pass p);
	/* The fastest of the last Lloyd passes (a pass is only ever slowed by what else runs). */
	double		lloyd_seconds() const
	{
		return lloyd_count_ == 0 ? 0.0 : *std::min_element(lloyd_s_, lloyd_s_ + std::min(lloyd_count_, 3));
	}
	/* Whether the next try's price fits budget (a share of the run's seconds so far) now. */
	bool		try_fits(double budget) const
	{
		double		price = try_price_;
		if (price < 0)			/* none measured yet: two dense passes and the state, from counts */
			price = lloyd_seconds() * (2 * DENSE_ROW + CREATE_ROW) / std::max(k_, 1);
		return lost_ + price <= budget * total_;
	}
	/* A try ends: the next one is priced at what this one lost (half a Lloyd pass at least). */
	void		end_try()
	{
		try_price_ = std::max(lost_ - try_start_lost_, 0.5 * lloyd_seconds());
		next_pass(Pass::PLAIN);
	}

	std::unique_ptr<CpuAssign> lloyd_;
	/*
	 * The bounded method, made on the first try: a run that ends while rows
	 * still move (most runs with tol > 0 on clustered data) never pays for
	 * its per-row state.
	 */
	std::unique_ptr<BoundedAssign> bounded_;
	int32_t		method_;
	const float *x_;
	int64_t		n_;
	int32_t		d_, kmax_;
	std::vector<double> mean_;	/* a copy: the caller's may be gone by the first try */
	ThreadPool *pool_;
	int32_t		k_ = 0;
	std::vector<double> centroids_;	/* the last set_centroids (k x d) */
	PassPrice	price_;
	double		budget_;
	bool		counted_;
	Clock::time_point last_;	/* the last take_counts (or the start) */
	Pass		pass_ = Pass::PLAIN;
	bool		last_bounded_ = false;	/* the pass before the last one kept bounds */
	int64_t		passes_ = 0;
	double		total_ = 0;		/* seconds of every pass */
	double		lloyd_s_[3] = {0, 0, 0};	/* the last Lloyd passes' seconds, newest first */
	int			lloyd_count_ = 0;
	double		lost_ = 0;		/* seconds tries' passes took beyond Lloyd's */
	double		try_start_lost_ = 0;
	double		try_price_ = -1;	/* what the last try lost (< 0: no try yet) */
	/* the try under way: */
	int			pruned_passes_ = 0;
	bool		won_ = false;	/* a judged pruned pass was faster than Lloyd's */
	int			improving_ = 0; /* passes it was given for improving */
	int			slower_ = 0;	/* consecutive judged pruned passes not faster than Lloyd's */
	int64_t		prev_moved_ = -1;	/* the last pass's moved rows */
};

void
AutoAssign::next_pass(Pass p)
{
	const bool	other = (p == Pass::PLAIN) != (pass_ == Pass::PLAIN);
	if (p != Pass::PLAIN && !bounded_)
	{
		bounded_ = make_bounded_assign(method_, x_, n_, d_, kmax_, mean_.data(), pool_);
		bounded_->set_dense(true);
	}
	if (p != Pass::PLAIN && pass_ == Pass::PLAIN)
	{
		try_start_lost_ = lost_;
		pruned_passes_ = improving_ = slower_ = 0;
		won_ = false;
	}
	pass_ = p;
	if (other)
		active()->set_centroids(centroids_.data(), k_);
	if (p != Pass::PLAIN)
		bounded_->set_dense(p == Pass::DENSE);
}

/*
 * After each pass, timed from the last call (the pass and the update: the
 * same work besides the pass whatever ran). Plain: a try (dense next) once
 * few rows move, not none (converged: the next pass is the last), Lloyd's
 * passes are timed and the budget allows it. Dense: the sampled O(1) test
 * gives the share of rows a pruned pass would skip; the rest are priced as
 * if each opened row computed every distance (the bounds a dense pass
 * leaves are a single lower bound per row, so the first pruned pass
 * searches its opened rows whole): prune next when that is cheaper than a
 * dense pass. Otherwise dense passes go on while the tries' losses fit the
 * budget (at large k a dense pass costs little more than Lloyd's, and the
 * sample says yes a few passes later as the run settles), but at least
 * until a fair sample: the bounds a dense pass tests are the last pass's
 * only after a dense pass (after Lloyd's own passes they are older,
 * loosened by every pass's drift since). Pruned
 * passes are judged as on the GPU: the try's first is not (it tightens the
 * dense pass's bounds); a later one slower than Lloyd's own ends the try
 * unless the try had won (then two slower in a row do) or it is improving.
 */
AssignCounts
AutoAssign::take_counts(int64_t moved)
{
	const double n = (double) n_, k = (double) k_;
	const bool	fair_sample = last_bounded_;
	const bool	many_moved = moved > PLAIN_MOVED * n;
	const Clock::time_point now = Clock::now();
	double		seconds = std::chrono::duration<double>(now - last_).count();
	last_ = now;
	last_bounded_ = pass_ != Pass::PLAIN;
	passes_++;
	if (pass_ == Pass::PLAIN)
	{
		AssignCounts c = lloyd_->take_counts(moved);
		c.method = PGKM_METHOD_LLOYD;
		if (method_ == PGKM_METHOD_LLOYD)
			return c;
		if (counted_)
			seconds = n * k;
		total_ += seconds;
		if (passes_ > 1)		/* the run's first pass warms the caches up */
		{
			lloyd_s_[2] = lloyd_s_[1];
			lloyd_s_[1] = lloyd_s_[0];
			lloyd_s_[0] = seconds;
			lloyd_count_++;
		}
		const bool	settling = !bounded_ && moved > 0 && moved < FIRST_TRY_MOVED * n;
		if (!many_moved && moved != 0 && lloyd_count_ >= LLOYD_SAMPLES &&
			try_fits(settling ? std::max(budget_, FIRST_TRY_BUDGET) : budget_))
			next_pass(Pass::DENSE);
		return c;
	}
	int64_t		kept, tested;
	bounded_->keep_counts(&kept, &tested);
	AssignCounts c = bounded_->take_counts(moved);
	const double open = tested > 0 ? 1.0 - (double) kept / (double) tested : 1.0;
	if (counted_)
		seconds = pass_ == Pass::DENSE ? n * (k + DENSE_ROW)
			: n * open * price_.opened + (double) c.distances * price_.dist;
	total_ += seconds;
	const double lloyd = lloyd_seconds();
	lost_ += std::max(seconds - lloyd, 0.0);
	if (pass_ == Pass::DENSE)
	{
		c.method = PGKM_METHOD_LLOYD;
		if (many_moved)
			end_try();
		else if (tested > 0 && n * open * (price_.opened + k * price_.dist) < n * (k + DENSE_ROW))
			next_pass(Pass::PRUNED);
		else if (tested > 0 && fair_sample && lost_ > budget_ * total_)
			end_try();
		return c;
	}
	const int64_t prev_moved = prev_moved_;
	prev_moved_ = moved;
	if (many_moved)
	{
		end_try();
		return c;
	}
	/* the first pruned pass tightens the dense pass's single bound: part of the try's price */
	if (++pruned_passes_ == 1)
		return c;
	const bool	slower = seconds >= lloyd;
	slower_ = slower ? slower_ + 1 : 0;
	if (won_)
	{
		if (slower_ >= 2)		/* two slower passes in a row end a try that had won */
			end_try();
	}
	else if (!slower)
		won_ = true;
	else if (seconds <= IMPROVING_SLOWER * lloyd && prev_moved > 0 &&
			 (double) moved <= IMPROVING_MOVED * (double) prev_moved && improving_ < IMPROVING_PASSES)
		improving_++;
	else
		end_try();
	return c;
}

std::unique_ptr<CpuAssign>
make_auto_assign(const pgkm_options *opt, const float *x, int64_t n, int32_t d, int32_t kmax,
				 const double *mean, ThreadPool *pool)
{
	return std::unique_ptr<CpuAssign>(new AutoAssign(make_lloyd_assign(x, d, kmax, mean, pool->size()),
													 auto_first_method(n, d, kmax, opt), x, n, d,
													 kmax, mean, pool));
}

}							/* namespace pgkm */
