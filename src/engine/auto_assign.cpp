/*
 * auto_assign.cpp: method 'auto' on the CPU. It starts with a bounded method
 * chosen from the shape and the memory budget, and measures: the CPU time of
 * each assignment pass (the set_centroids work of the bounded method
 * included), and once, early, the time of a Lloyd pass. A bounded method that
 * is not faster than Lloyd gives way to it, and is tried again 8, 16, 32, ...
 * passes later (pruning grows as the centroids settle), the way Wu & Hong's
 * hybrid falls back to the plain kernel when pruning does not pay. The
 * bounded method follows every centroid change meanwhile, so its bounds
 * stay valid and a try costs one pass. Every method returns the same
 * labels, so switching changes no result, only the time; which one ran each
 * iteration is reported (pgkm_progress.method).
 */
#include "auto_assign.h"
#include "bounded_assign.h"
#include "thread_pool.h"

#include <chrono>

namespace pgkm
{

/*
 * Yinyang from k = 16 (two groups or more; measured: as fast as Hamerly at
 * k = 32, n = 245,760, and faster at larger n and k), Hamerly below, within
 * the engine's memory budget (opt->memory_limit, the data not counted) after
 * Lloyd's own needs; Lloyd
 * when k < 4 (nothing to gain).
 */
int32_t
auto_first_method(int64_t n, int32_t d, int32_t k, const pgkm_options *opt)
{
	if (k < 4 || !ExactMargins::usable(d))
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

/* Passes of the start of a run during which only a hopeless bounded method gives way. */
static constexpr int AUTO_WARMUP = 8;

class AutoAssign : public CpuAssign
{
public:
	AutoAssign(std::unique_ptr<CpuAssign> lloyd, std::unique_ptr<BoundedAssign> bounded,
			   int workers)
		: lloyd_(std::move(lloyd)), bounded_(std::move(bounded)), ns_(workers)
	{
		use_bounded_ = bounded_ != nullptr;
	}

	/*
	 * Both methods always see the centroids: the bounded one's bounds stay
	 * valid (loose) through a Lloyd stretch, so trying it again costs one
	 * bounded pass, not a full search.
	 */
	void		set_centroids(const double *centroids, int32_t k) override
	{
		lloyd_->set_centroids(centroids, k);
		if (!bounded_)
			return;
		auto		t0 = std::chrono::steady_clock::now();
		bounded_->set_centroids(centroids, k);
		set_ns_ += (int64_t) ns_.size() * since(t0);
	}

	void		nearest(int64_t r0, int64_t r1, int worker, int32_t *out) override
	{
		auto		t0 = std::chrono::steady_clock::now();
		if (use_bounded_)
			bounded_->nearest(r0, r1, worker, out);
		else
			lloyd_->nearest(r0, r1, worker, out);
		ns_[worker].v += since(t0);
	}

	AssignCounts take_counts() override;

private:
	struct alignas(64) Clock
	{
		int64_t		v = 0;
	};
	static int64_t since(std::chrono::steady_clock::time_point t0)
	{
		return std::chrono::duration_cast<std::chrono::nanoseconds>(
			std::chrono::steady_clock::now() - t0).count();
	}
	void		to_lloyd();

	std::unique_ptr<CpuAssign> lloyd_;
	std::unique_ptr<BoundedAssign> bounded_;
	std::vector<Clock> ns_;		/* per worker: time in nearest() this pass */
	int64_t		set_ns_ = 0;	/* bounded set_centroids this pass, x workers */
	bool		use_bounded_;	/* the next pass runs the bounded method */
	bool		probing_ = false;	/* the next bounded pass is a try after Lloyd */
	int64_t		lloyd_ns_ = -1; /* the last Lloyd pass */
	int64_t		bounded_ns_ = 0;	/* the last bounded pass */
	int			bounded_passes_ = 0;
	int			strikes_ = 0;	/* bounded passes in a row slower than Lloyd */
	int			pass_ = 0;
	int			probe_at_ = 0;
	int			backoff_ = 8;
};

/* Lloyd from the next pass; the bounded method is tried again later. */
void
AutoAssign::to_lloyd()
{
	use_bounded_ = false;
	strikes_ = 0;
	probe_at_ = pass_ + backoff_;
	backoff_ *= 2;
}

/*
 * After each pass. The first bounded pass is a full search: no measure.
 * Lloyd is measured once, on the third pass (and keeps the run if the second
 * bounded pass cost more than twice as much). During the first passes, while
 * the centroids still move a lot, a bounded pass hands over to Lloyd only
 * when it costs more than twice as much; later when it costs more than 1.3x
 * Lloyd, or more than Lloyd twice in a row. From Lloyd the bounded method is
 * tried again after 8, 16, 32, ... passes (one pass, with the bounds it kept).
 */
AssignCounts
AutoAssign::take_counts()
{
	AssignCounts c;
	if (use_bounded_)
		c = bounded_->take_counts();
	else
		c.method = PGKM_METHOD_LLOYD;
	int64_t		cost = set_ns_;
	for (Clock &w : ns_)
	{
		cost += w.v;
		w.v = 0;
	}
	set_ns_ = 0;
	pass_++;
	if (!bounded_)
		return c;
	if (!use_bounded_)
	{
		const bool first = lloyd_ns_ < 0;
		lloyd_ns_ = cost;
		if (first && bounded_ns_ > 2 * lloyd_ns_)
			to_lloyd();			/* the bounded pass before was hopeless already */
		else if (pass_ >= probe_at_)
		{
			use_bounded_ = true;
			probing_ = bounded_passes_ > 1;
		}
		return c;
	}
	bounded_ns_ = cost;
	if (++bounded_passes_ == 1)
		return c;
	if (lloyd_ns_ < 0)
	{
		use_bounded_ = false;
		return c;
	}
	if (probing_)
	{
		probing_ = false;
		if (cost > lloyd_ns_)
			to_lloyd();
	}
	else if (pass_ <= AUTO_WARMUP)
	{
		if (cost > 2 * lloyd_ns_)
			to_lloyd();
	}
	else if (cost > lloyd_ns_ + lloyd_ns_ * 3 / 10 || (cost > lloyd_ns_ && ++strikes_ >= 2))
		to_lloyd();
	else if (cost <= lloyd_ns_)
		strikes_ = 0;
	return c;
}

std::unique_ptr<CpuAssign>
make_auto_assign(const pgkm_options *opt, const float *x, int64_t n, int32_t d, int32_t kmax,
				 const double *mean, ThreadPool *pool)
{
	const int32_t first = auto_first_method(n, d, kmax, opt);
	std::unique_ptr<BoundedAssign> bounded;
	if (first != PGKM_METHOD_LLOYD)
		bounded = make_bounded_assign(first, x, n, d, kmax, mean, pool);
	return std::unique_ptr<CpuAssign>(
		new AutoAssign(make_lloyd_assign(x, d, kmax, mean, pool->size()), std::move(bounded),
					   pool->size()));
}

}							/* namespace pgkm */
