/*
 * gpu_auto_policy.cpp: when 'auto' on the GPU tries its bounded method,
 * keeps it, and goes back to Lloyd's passes (gpu_auto_policy.h).
 */
#include "gpu_auto_policy.h"

#include <algorithm>

namespace pgkm
{

int32_t
gpu_auto_candidate(int32_t d, int32_t k)
{
	if (k < 64)
		return PGKM_METHOD_LLOYD;
	/* one Yinyang group below 128 centroids: Hamerly's bound with more bookkeeping */
	return d >= 64 && k >= 128 ? PGKM_METHOD_YINYANG : PGKM_METHOD_HAMERLY;
}

double
GpuAutoPolicy::lloyd_seconds() const
{
	if (lloyd_count_ == 0)
		return 0;
	/* the fastest recent pass: a pass is only ever slowed down by what else runs */
	return *std::min_element(lloyd_, lloyd_ + std::min(lloyd_count_, 3));
}

void
GpuAutoPolicy::record(int32_t ran, double seconds, int64_t moved)
{
	const int64_t prev_moved = prev_moved_;
	prev_moved_ = moved;
	passes_++;
	total_ += seconds;
	if (ran == PGKM_METHOD_LLOYD)
	{
		if (next_ != PGKM_METHOD_LLOYD)
			candidate_ = next_ = PGKM_METHOD_LLOYD;	/* asked for, not run: the plan holds no bounds */
		if (passes_ > 1)		/* the run's first pass warms the device up */
		{
			lloyd_[2] = lloyd_[1];
			lloyd_[1] = lloyd_[0];
			lloyd_[0] = seconds;
			lloyd_count_++;
		}
		if (candidate_ != PGKM_METHOD_LLOYD && lloyd_count_ >= LLOYD_SAMPLES &&
			lost_ + try_cost_ <= TRY_BUDGET * total_)
		{
			next_ = candidate_;
			tries_++;
			try_passes_ = 0;
			won_ = false;
			improving_ = 0;
			slower_ = 0;
			try_start_excess_ = excess_;
		}
		return;
	}
	const double lloyd = lloyd_seconds();
	excess_ += seconds - lloyd;
	lost_ += std::max(seconds - lloyd, 0.0);
	/* the switch's pass computes every distance to start the bounds: part of the try's price, not its verdict */
	if (++try_passes_ == 1)
		return;
	const bool	slower = seconds >= lloyd;
	slower_ = slower ? slower_ + 1 : 0;
	if (won_)
	{
		if (slower_ >= 2)		/* two slower passes in a row end a try that had won */
			leave_candidate();
		return;
	}
	if (!slower)
	{
		won_ = true;
		return;
	}
	const bool	improving = seconds <= IMPROVING_SLOWER * lloyd && prev_moved > 0 &&
		(double) moved <= IMPROVING_MOVED * (double) prev_moved;
	if (improving && improving_ < IMPROVING_PASSES)
		improving_++;
	else
		leave_candidate();
}

void
GpuAutoPolicy::leave_candidate()
{
	next_ = PGKM_METHOD_LLOYD;
	/*
	 * The next try is priced at what this one lost (or, after a winning
	 * stretch, at least half a Lloyd pass), so that tries are spaced out
	 * in proportion to their cost.
	 */
	try_cost_ = std::max(excess_ - try_start_excess_, 0.5 * lloyd_seconds());
}

}							/* namespace pgkm */
