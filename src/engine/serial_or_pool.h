/*
 * serial_or_pool.h: whether a loop of short repeated steps (greedy
 * k-means++'s: a few parallel_for calls each) runs each step on the pool or
 * on the calling thread alone. Waking the workers costs tens of
 * microseconds per parallel_for, more on a loaded or virtual machine, and a
 * step of the sampled k-means++ can be as short (245,760 x 32, k = 1024 on
 * the 2-core box: 0.27 s for 1,023 steps at 1 thread, 0.45 s at 2). Which
 * is faster depends on the machine and the step, so both are timed: PROBE
 * steps each way, then the faster for EPOCH steps, then timed again. The
 * probes go pool, serial, serial, pool, ...: k-means++'s steps get cheaper
 * as centers are added (more rows skipped), and all pool probes first
 * would time the pool on the dearest steps. The results are the same
 * either way (any chunk may run on any worker).
 */
#ifndef PGKM_SERIAL_OR_POOL_H
#define PGKM_SERIAL_OR_POOL_H

#include "thread_pool.h"

#include <chrono>

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
			pool_->set_inline(false);
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
	typedef std::chrono::steady_clock Clock;

	/* probes in the order pool, serial, serial, pool (repeated), then the faster */
	bool		probing() const { return choice_ == CLOCK && pos_ < 2 * PROBE; }
	bool		serial_now() const
	{
		if (choice_ != CLOCK)
			return choice_ == SERIAL;
		return probing() ? ((pos_ + 1) & 2) != 0 : serial_;
	}
	void		begin()
	{
		if (!pool_)
			return;
		pool_->set_inline(serial_now());
		t0_ = Clock::now();
	}
	void		end()
	{
		if (!pool_)
			return;
		const double s = std::chrono::duration<double>(Clock::now() - t0_).count();
		serial_steps_ += serial_now();
		if (probing())
			(serial_now() ? t_serial_ : t_pool_) += s;
		if (++pos_ == 2 * PROBE)
			serial_ = t_serial_ < t_pool_;
		if (pos_ == 2 * PROBE + EPOCH)
		{
			pos_ = 0;
			t_pool_ = t_serial_ = 0;
		}
		pool_->set_inline(false);
	}

	ThreadPool *pool_;
	Choice		choice_;
	int			pos_ = 0;		/* in the cycle: 2 PROBE probes, then EPOCH steps of the faster */
	double		t_pool_ = 0, t_serial_ = 0;
	bool		serial_ = false;
	int64_t		serial_steps_ = 0;
	Clock::time_point t0_;
};

}							/* namespace pgkm */

#endif							/* PGKM_SERIAL_OR_POOL_H */
