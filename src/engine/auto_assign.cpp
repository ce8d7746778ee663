/*
 * auto_assign.cpp: method 'auto' on the CPU. One bounded method (chosen
 * from the shape and the memory budget) runs every pass, either dense
 * (Lloyd's tiled kernel over every row, its best and runner-up values kept
 * as bounds: the cost of a Lloyd pass and a few stores per row) or pruned
 * (its own bounds skip rows and centroids). Because a dense pass leaves
 * valid bounds, switching either way costs nothing, and the choice is made
 * pass by pass from counts, never from the clock, so it does not depend on
 * the machine's load or the thread count: a pruned pass's rows opened and
 * distances computed, priced against a dense pass; in a dense pass, the
 * method's O(1) test on every 8th row says how many rows a pruned pass
 * would skip. Every method returns the same labels, so switching changes
 * no result, only the time; what ran is reported per iteration (dense
 * passes as "lloyd").
 *
 * Shapes where Lloyd uses its direct kernel (small d and k) run Lloyd only:
 * the tiled kernel of the dense passes is slower there.
 */
#include "auto_assign.h"
#include "bounded_assign.h"
#include "thread_pool.h"

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

class AutoAssign : public CpuAssign
{
public:
	AutoAssign(std::unique_ptr<CpuAssign> lloyd, std::unique_ptr<BoundedAssign> bounded,
			   int32_t method, int64_t n)
		: lloyd_(std::move(lloyd)), bounded_(std::move(bounded)), n_(n), price_(pass_price(method))
	{
		if (bounded_)
			bounded_->set_dense(true);
	}

	void		set_centroids(const double *centroids, int32_t k) override
	{
		k_ = k;
		if (bounded_)
			bounded_->set_centroids(centroids, k);
		else
			lloyd_->set_centroids(centroids, k);
	}

	void		nearest(int64_t r0, int64_t r1, int worker, int32_t *out) override
	{
		if (bounded_)
			bounded_->nearest(r0, r1, worker, out);
		else
			lloyd_->nearest(r0, r1, worker, out);
	}

	AssignCounts take_counts() override;

private:
	std::unique_ptr<CpuAssign> lloyd_;
	std::unique_ptr<BoundedAssign> bounded_;
	int64_t		n_;
	int32_t		k_ = 0;
	PassPrice	price_;
	int			wait_ = 0;		/* dense passes before the next pruned try */
	int			backoff_ = 1;
};

/*
 * After each pass. Dense: the sampled O(1) test gives the share of rows
 * a pruned pass would skip; the rest are priced as if each opened row
 * computed every distance (the bounds a dense pass leaves are a single
 * lower bound per row, so the first pruned pass searches its opened rows
 * whole): prune next when that is cheaper than a dense pass. Pruned: price
 * the pass from its counts; back to dense when it cost more than a dense
 * pass, and try again after 1, 2, 4, ... dense passes whose sample agrees.
 */
AssignCounts
AutoAssign::take_counts()
{
	if (!bounded_)
	{
		AssignCounts c;
		c.method = PGKM_METHOD_LLOYD;
		return c;
	}
	const double n = (double) n_, k = (double) k_;
	const double dense = n * (k + DENSE_ROW);
	int64_t		kept, tested;
	bounded_->keep_counts(&kept, &tested);
	const bool	was_dense = bounded_->dense();
	AssignCounts c = bounded_->take_counts();
	if (was_dense)
	{
		c.method = PGKM_METHOD_LLOYD;
		if (wait_ > 0)
			wait_--;
		if (tested > 0 && wait_ == 0)
		{
			const double open = 1.0 - (double) kept / (double) tested;
			const double pruned = n * open * (price_.opened + k * price_.dist);
			if (pruned < dense)
				bounded_->set_dense(false);
		}
		return c;
	}
	const double open = tested > 0 ? 1.0 - (double) kept / (double) tested : 1.0;
	const double pruned = n * open * price_.opened + (double) c.distances * price_.dist;
	if (pruned > dense)
	{
		bounded_->set_dense(true);
		wait_ = backoff_;
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
			new AutoAssign(make_lloyd_assign(x, d, kmax, mean, pool->size()), nullptr, first, n));
	return std::unique_ptr<CpuAssign>(
		new AutoAssign(nullptr, make_bounded_assign(first, x, n, d, kmax, mean, pool), first, n));
}

}							/* namespace pgkm */
