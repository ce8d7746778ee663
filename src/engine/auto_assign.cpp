/*
 * auto_assign.cpp: method 'auto' on the CPU. Each pass is Lloyd's own, or
 * one bounded method's (chosen from the shape and the memory budget),
 * either dense (Lloyd's tiled kernel over every row, its best and runner-up
 * values kept as bounds: a Lloyd pass and a few stores per row) or pruned
 * (its own bounds skip rows and centroids). A dense pass leaves valid
 * bounds, so a pruned pass may follow it and it may follow anything. The
 * choice is made pass by pass from counts: the rows that moved; a pruned
 * pass's rows opened and distances computed, priced in Lloyd distances; in
 * a dense pass, the method's O(1) test on every 8th row says how many rows
 * a pruned pass would skip. Tries of the bounded method are kept within a
 * budget of the run's work, and the clock can only veto them (where the
 * counts misjudge this machine). Every method returns the same labels, so
 * switching changes no result, only the time; what ran is reported per
 * iteration (plain and dense passes as "lloyd").
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
 * distances). Hamerly's opened rows run a dense search of their own.
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
 * What a dense pass costs beyond Lloyd's own, per row (its fp64 bounds,
 * their stores, the sample: 8-10 Lloyd distances at k = 32-64 on the
 * 2-core box, 245,760 x 32 and 20,000 x 16 uniform rows, medians of 35
 * passes), and what making the bounded method's per-row state costs, once,
 * on the first try (its pages first written by the first dense pass).
 */
static constexpr double DENSE_ROW = 12.0;
static constexpr double CREATE_ROW = 32.0;

/*
 * While more than PLAIN_MOVED of the rows change label per pass, passes are
 * Lloyd's own: pruning has never paid there (on Wu & Hong's sweep every
 * switch came below 0.7 %).
 */
static constexpr double PLAIN_MOVED = 0.02;

/*
 * Tries that do not pay (their dense passes' cost beyond Lloyd's, the
 * state made on the first, pruned passes dearer than Lloyd's, less what
 * pruned passes saved) stay within TRY_BUDGET of the run's work so far, in
 * Lloyd passes: so 'auto' is never more than a few percent slower than
 * 'lloyd' where nothing prunes, and short runs, which would not repay a
 * try, make none. The first try may come before that budget covers it
 * once fewer than FIRST_TRY_MOVED of the rows move per pass (the bounds
 * then hold for most rows: Wu & Hong's sweep switched at 0.1-0.7 %, and
 * data that never settles, such as uniform rows, gets there only late in a
 * long run), if its price is within FIRST_TRY_BUDGET of the run so far (at
 * k = 32 about 1.75 Lloyd passes: from pass 18 on; at k = 1024 at once).
 */
static std::atomic<double> try_budget {0.03};
static constexpr double FIRST_TRY_MOVED = 0.005;
static constexpr double FIRST_TRY_BUDGET = 0.1;

extern "C" double
pgkm_internal_set_auto_try_budget(double share)
{
	return try_budget.exchange(share < 0 ? 0.03 : share);
}

/*
 * Choices are made from the counts, so that they do not depend on the
 * machine's load (the same run, the same trail). But what pruned work
 * costs against Lloyd's kernel does depend on the machine and the thread
 * count (at 16 threads Lloyd's kernel gains more than the bounds'
 * bookkeeping: Wu & Hong's k = 256, sigma^2 = 0.3 ran 15 % slower on
 * counts alone), so the passes are also timed: once the bounded passes
 * have taken more seconds than Lloyd's would have (the fastest of its last
 * three, each; what they saved counts), by over the budget's share of the
 * run's time and VETO_GRACE Lloyd passes (early in a run the budget is
 * small and a try's dense passes cost more than that: at 16 threads Wu &
 * Hong's k = 256, sigma^2 = 0.05 lost its late pruned passes, 3x faster
 * than Lloyd's, to a veto at pass 14), no new try starts until that
 * holds the last try's loss as well, and a try under way ends at its next
 * pruned pass slower than Lloyd's. Until then a try is judged by its
 * counts: its first pruned passes may be slower than Lloyd's and the later
 * ones several times faster (Wu & Hong's k = 256, sigma^2 = 0.05), which
 * no verdict from the last pass alone can see. Lloyd passes timed before
 * the first try: LLOYD_SAMPLES (the run's first pass, warming up, is not
 * one).
 */
static constexpr int LLOYD_SAMPLES = 2;
static constexpr double VETO_GRACE = 3.0;

/*
 * Passes timed as their count price, a bounded pass's plus this factor
 * less 1 Lloyd passes (0: the clock): tests see the same choices on any
 * machine, with or without the veto.
 */
static std::atomic<double> counted_seconds {0.0};

extern "C" double
pgkm_internal_set_auto_counted_seconds(double bounded_factor)
{
	return counted_seconds.exchange(bounded_factor);
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
		  counted_(counted_seconds.load(std::memory_order_relaxed)), last_(Clock::now())
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

	/* A try decided after the last pass starts now, unless this pass is the run's final assignment. */
	void		begin_pass(bool last) override
	{
		if (try_next_ && !last)
			next_pass(Pass::DENSE);
		try_next_ = false;
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
	/* Whether a try (two dense passes, the state made on the first) fits budget now. */
	bool		try_fits(double budget) const
	{
		const double n = (double) n_;
		const double cost = 2 * n * DENSE_ROW + (bounded_ ? 0.0 : n * CREATE_ROW);
		return spent_ + cost <= budget * work_;
	}
	/* The fastest of the last Lloyd passes (a pass is only ever slowed by what else runs). */
	double		lloyd_seconds() const
	{
		return lloyd_count_ == 0 ? 0.0 : *std::min_element(lloyd_s_, lloyd_s_ + std::min(lloyd_count_, 3));
	}
	/*
	 * The clock's veto: the bounded passes so far took more seconds than
	 * Lloyd's would have, beyond the budget and VETO_GRACE Lloyd passes
	 * (with_try: with what the last try lost on top, so that a new try
	 * starts only where the budget holds a whole one).
	 */
	bool		vetoed(bool with_try = false) const
	{
		const double next = with_try ? std::max(try_loss_s_, 0.0) : 0.0;
		return excess_s_ + next > budget_ * total_s_ + VETO_GRACE * lloyd_seconds();
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
	double		counted_;
	Pass		pass_ = Pass::PLAIN;
	bool		try_next_ = false;	/* a try starts with the next pass that is not the last */
	bool		last_bounded_ = false;	/* the pass before the last one kept bounds */
	double		work_ = 0;		/* Lloyd distances of the passes so far */
	double		spent_ = 0;		/* what tries cost beyond Lloyd's passes, less what they saved */
	/* the clock's side */
	Clock::time_point last_;	/* the last take_counts (or the start) */
	int64_t		passes_ = 0;
	double		total_s_ = 0;	/* seconds since the method was made (the first pass's: all before it) */
	double		excess_s_ = 0;	/* seconds of bounded passes beyond Lloyd's (negative: saved) */
	double		try_start_s_ = 0;	/* excess_s_ when the try under way started */
	double		try_loss_s_ = 0;	/* what the last try added to excess_s_ */
	double		lloyd_s_[3] = {0, 0, 0};	/* the last Lloyd passes' seconds, newest first */
	int			lloyd_count_ = 0;
};

void
AutoAssign::next_pass(Pass p)
{
	const bool	other = (p == Pass::PLAIN) != (pass_ == Pass::PLAIN);
	if (p != Pass::PLAIN && pass_ == Pass::PLAIN)
		try_start_s_ = excess_s_;
	if (p == Pass::PLAIN && pass_ != Pass::PLAIN)
		try_loss_s_ = excess_s_ - try_start_s_;
	if (p != Pass::PLAIN && !bounded_)
	{
		spent_ += (double) n_ * CREATE_ROW;
		bounded_ = make_bounded_assign(method_, x_, n_, d_, kmax_, mean_.data(), pool_);
		bounded_->set_dense(true);
	}
	pass_ = p;
	if (other)
		active()->set_centroids(centroids_.data(), k_);
	if (p != Pass::PLAIN)
		bounded_->set_dense(p == Pass::DENSE);
}

/*
 * After each pass (timed from the last call: the pass and the update, the
 * same work besides the pass whatever ran). Plain: a try (dense next) once
 * few rows move, not none (converged: the next pass is the last), and the
 * budget allows it. Dense: the sampled O(1) test gives the share of rows a
 * pruned pass would skip; the rest are priced as if each opened row
 * computed every distance (the bounds a dense pass leaves are a single
 * lower bound per row, so the first pruned pass searches its opened rows
 * whole): prune next when that is cheaper than a dense pass. Otherwise
 * dense passes go on while the budget allows (at large k one costs little
 * more than Lloyd's, and the sample says yes a few passes later as the run
 * settles), but at least until a fair sample: the bounds a dense pass
 * tests are the last pass's only after a dense pass (after Lloyd's own
 * passes they are older, loosened by every pass's drift since). Pruned:
 * priced from its counts; dearer than Lloyd's own ends the try. The clock
 * may veto (vetoed).
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
	work_ += n * k;
	if (pass_ == Pass::PLAIN)
	{
		AssignCounts c = lloyd_->take_counts(moved);
		c.method = PGKM_METHOD_LLOYD;
		if (method_ == PGKM_METHOD_LLOYD)
			return c;
		if (counted_ > 0)
			seconds = n * k;
		total_s_ += seconds;
		if (passes_ > 1)		/* the run's first pass warms the caches up */
		{
			lloyd_s_[2] = lloyd_s_[1];
			lloyd_s_[1] = lloyd_s_[0];
			lloyd_s_[0] = seconds;
			lloyd_count_++;
		}
		const bool	settling = !bounded_ && moved > 0 && moved < FIRST_TRY_MOVED * n;
		if (!many_moved && moved != 0 && lloyd_count_ >= LLOYD_SAMPLES && !vetoed(true) &&
			(try_fits(budget_) || (settling && try_fits(FIRST_TRY_BUDGET))))
			try_next_ = true;		/* made (and its state) only if another iteration comes */
		return c;
	}
	int64_t		kept, tested;
	bounded_->keep_counts(&kept, &tested);
	AssignCounts c = bounded_->take_counts(moved);
	const double open = tested > 0 ? 1.0 - (double) kept / (double) tested : 1.0;
	const double price = pass_ == Pass::DENSE ? n * (k + DENSE_ROW)
		: n * open * price_.opened + (double) c.distances * price_.dist;
	if (counted_ > 0)
		seconds = price + (counted_ - 1) * n * k;
	total_s_ += seconds;
	excess_s_ += seconds - lloyd_seconds();
	spent_ += price - n * k;
	if (pass_ == Pass::DENSE)
	{
		c.method = PGKM_METHOD_LLOYD;
		if (many_moved)
			next_pass(Pass::PLAIN);
		else if (tested > 0 && n * open * (price_.opened + k * price_.dist) < price)
			next_pass(Pass::PRUNED);
		else if (tested > 0 && fair_sample && spent_ > budget_ * work_)
			next_pass(Pass::PLAIN);
		return c;
	}
	if (many_moved || (vetoed() && seconds > lloyd_seconds()))
		next_pass(Pass::PLAIN);
	else if (price > n * k)
		next_pass(try_fits(budget_) ? Pass::DENSE : Pass::PLAIN);	/* a dense pass samples fresh bounds */
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
