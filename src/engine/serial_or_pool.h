/*
 * serial_or_pool.h: whether a loop of short repeated steps (greedy
 * k-means++'s: a few parallel_for calls each) runs each step on the pool or
 * on the calling thread alone. Waking the workers costs tens of
 * microseconds per parallel_for, more on a loaded or virtual machine, and a
 * step of the sampled k-means++ can be as short (245,760 x 32, k = 1024 on
 * the 2-core box: 0.27 s for 1,023 steps at 1 thread, 0.45 s at 2). Which
 * is faster depends on the machine and the step, so PROBE steps run on the
 * pool, timed against their estimate on the calling thread alone
 * (ThreadPool::CallTimes: the calling thread's own time per chunk), then the
 * faster way runs EPOCH steps, then the pool is timed again. Serial steps
 * are not probed: on an idle many-core machine they cost 10x a pool step,
 * and k-means++ at k = 32 has 31 steps. The results are the same either
 * way (any chunk may run on any worker).
 */
#ifndef PGKM_SERIAL_OR_POOL_H
#define PGKM_SERIAL_OR_POOL_H

#include "thread_pool.h"

namespace pgkm
{

class SerialOrPool
{
public:
	static constexpr int PROBE = 4;
	static constexpr int EPOCH = 64;

	/* CLOCK: probe and time (the default); POOL, SERIAL: every step that way (benchmarks). */
	enum Choice { CLOCK, POOL, SERIAL };

	explicit SerialOrPool(ThreadPool *pool, Choice choice = CLOCK)
		: pool_(pool->size() > 1 ? pool : nullptr), choice_(choice) {}
	~SerialOrPool()
	{
		if (pool_)
		{
			pool_->set_inline(false);
			pool_->set_timing(nullptr);
		}
	}
	SerialOrPool(const SerialOrPool &) = delete;
	SerialOrPool &operator=(const SerialOrPool &) = delete;

	/* One step: the pool set for it while it lives, its time taken when it ends. */
	class Step
	{
	public:
		explicit Step(SerialOrPool &s) : s_(s) { s_.begin(); }
		~Step() { s_.end(); }
		Step(const Step &) = delete;
		Step &operator=(const Step &) = delete;
	private:
		SerialOrPool &s_;
	};

	/* Steps run on the calling thread so far (for tests). */
	int64_t		serial_steps() const { return serial_steps_; }

private:
	bool		probing() const { return choice_ == CLOCK && pos_ < PROBE; }
	bool		serial_now() const
	{
		if (choice_ != CLOCK)
			return choice_ == SERIAL;
		return !probing() && serial_;
	}
	void		begin()
	{
		if (!pool_)
			return;
		pool_->set_inline(serial_now());
		pool_->set_timing(probing() ? &times_ : nullptr);
	}
	void		end()
	{
		if (!pool_)
			return;
		serial_steps_ += serial_now();
		pool_->set_inline(false);
		pool_->set_timing(nullptr);
		if (choice_ != CLOCK)
			return;
		if (++pos_ == PROBE)
			serial_ = times_.wall_s > times_.alone_s;
		if (pos_ == PROBE + EPOCH)
		{
			pos_ = 0;
			times_ = ThreadPool::CallTimes();
		}
	}

	ThreadPool *pool_;
	Choice		choice_;
	int			pos_ = 0;		/* in the cycle: PROBE timed pool steps, then EPOCH steps of the faster */
	ThreadPool::CallTimes times_;
	bool		serial_ = false;
	int64_t		serial_steps_ = 0;
};

}							/* namespace pgkm */

#endif							/* PGKM_SERIAL_OR_POOL_H */
