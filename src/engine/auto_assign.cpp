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
 * (bench/RESULTS.md): a dense pass costs k + DENSE_ROW; a pruned pass
 * OPENED per row its O(1) test did not settle and DIST per distance it
 * computed (group blocks, intervals, bound updates: Yinyang's per-distance
 * work costs about 2.5 Lloyd distances). Hamerly's opened rows run a dense
 * search of their own.
 */
struct PassPrice
{
	double		opened, dist;
};

static constexpr double DENSE_ROW = 8.0;

static PassPrice
pass_price(int32_t method)
{
	if (method == PGKM_METHOD_YINYANG)
		return {250.0, 2.5};
	return {30.0, 1.1};
}

/*
 * Dense passes cost a Lloyd pass plus DENSE_ROW per row (about a fifth more
 * than Lloyd's own at k = 32), which only their sample and bounds repay. So
 * while more than PLAIN_MOVED of the rows change label per pass (pruning
 * has never paid there on Wu & Hong's sweep: every switch came below 0.7 %),
 * and while waiting to try again after a pruned pass that lost, passes are
 * Lloyd's own; the first dense pass after them samples against bounds that
 * the skipped passes' drift has loosened (valid, only pessimistic).
 */
static constexpr double PLAIN_MOVED = 0.02;

class AutoAssign : public CpuAssign
{
public:
	AutoAssign(std::unique_ptr<CpuAssign> lloyd, std::unique_ptr<BoundedAssign> bounded,
			   int32_t method, int64_t n, int32_t d)
		: lloyd_(std::move(lloyd)), bounded_(std::move(bounded)), n_(n), d_(d),
		  price_(pass_price(method))
	{
		if (bounded_)
			bounded_->set_dense(true);
	}

	void		set_centroids(const double *centroids, int32_t k) override
	{
		k_ = k;
		if (bounded_)
			centroids_.assign(centroids, centroids + (size_t) k * d_);
		active()->set_centroids(centroids, k);
	}

	void		nearest(int64_t r0, int64_t r1, int worker, int32_t *out) override
	{
		active()->nearest(r0, r1, worker, out);
	}

	AssignCounts take_counts(int64_t moved) override;

private:
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

	std::unique_ptr<CpuAssign> lloyd_;
	std::unique_ptr<BoundedAssign> bounded_;
	int64_t		n_;
	int32_t		d_;
	int32_t		k_ = 0;
	std::vector<double> centroids_;	/* the last set_centroids (k x d) */
	PassPrice	price_;
	Pass		pass_ = Pass::PLAIN;
	int			plain_left_ = 0;	/* Lloyd passes before the next dense one */
	int			backoff_ = 1;
};

void
AutoAssign::next_pass(Pass p)
{
	const bool	other = (p == Pass::PLAIN) != (pass_ == Pass::PLAIN);
	pass_ = p;
	if (other)
		active()->set_centroids(centroids_.data(), k_);
	if (p != Pass::PLAIN)
		bounded_->set_dense(p == Pass::DENSE);
}

/*
 * After each pass. Plain: dense next once few rows move. Dense: the sampled
 * O(1) test gives the share of rows a pruned pass would skip; the rest are
 * priced as if each opened row computed every distance (the bounds a dense
 * pass leaves are a single lower bound per row, so the first pruned pass
 * searches its opened rows whole): prune next when that is cheaper than a
 * dense pass. Pruned: price the pass from its counts; when it cost more
 * than a dense pass, run 0, 1, 3, 7, ... plain passes, then dense ones
 * until their sample says pruning pays again.
 */
AssignCounts
AutoAssign::take_counts(int64_t moved)
{
	if (!bounded_)
	{
		AssignCounts c;
		c.method = PGKM_METHOD_LLOYD;
		return c;
	}
	const double n = (double) n_, k = (double) k_;
	const bool	many_moved = moved > PLAIN_MOVED * n;
	if (pass_ == Pass::PLAIN)
	{
		AssignCounts c = lloyd_->take_counts(moved);
		c.method = PGKM_METHOD_LLOYD;
		if (plain_left_ > 0)
			plain_left_--;
		if (plain_left_ == 0 && !many_moved)
			next_pass(Pass::DENSE);
		return c;
	}
	const double dense = n * (k + DENSE_ROW);
	int64_t		kept, tested;
	bounded_->keep_counts(&kept, &tested);
	AssignCounts c = bounded_->take_counts(moved);
	if (pass_ == Pass::DENSE)
	{
		c.method = PGKM_METHOD_LLOYD;
		if (many_moved)
			next_pass(Pass::PLAIN);
		else if (tested > 0)
		{
			const double open = 1.0 - (double) kept / (double) tested;
			if (n * open * (price_.opened + k * price_.dist) < dense)
				next_pass(Pass::PRUNED);
		}
		return c;
	}
	const double open = tested > 0 ? 1.0 - (double) kept / (double) tested : 1.0;
	const double pruned = n * open * price_.opened + (double) c.distances * price_.dist;
	if (pruned > dense)
	{
		plain_left_ = backoff_ - 1;
		next_pass(plain_left_ > 0 ? Pass::PLAIN : Pass::DENSE);
		backoff_ = std::min(backoff_ * 2, 64);
	}
	else
		backoff_ = 1;
	return c;
}

std::unique_ptr<CpuAssign>
make_auto_assign(const pgkm_options *opt, const float *x, int64_t n, int32_t d, int32_t kmax,
				 const double *mean, ThreadPool *pool)
{
	const int32_t first = auto_first_method(n, d, kmax, opt);
	if (first == PGKM_METHOD_LLOYD)
		return std::unique_ptr<CpuAssign>(
			new AutoAssign(make_lloyd_assign(x, d, kmax, mean, pool->size()), nullptr, first, n, d));
	return std::unique_ptr<CpuAssign>(
		new AutoAssign(make_lloyd_assign(x, d, kmax, mean, pool->size()),
					   make_bounded_assign(first, x, n, d, kmax, mean, pool), first, n, d));
}

}							/* namespace pgkm */
