/*
 * phase_clock.h: time per phase of a repeated step, for the benchmarks'
 * internal hooks (internal_hooks.h). A PhaseClock adds the time since its
 * last mark to one phase, locally, and hands its totals to a process-wide
 * PhaseTotals when it goes; a clock read per mark, far below a phase's cost.
 */
#ifndef PGKM_PHASE_CLOCK_H
#define PGKM_PHASE_CLOCK_H

#include <atomic>
#include <chrono>
#include <cstdint>

namespace pgkm
{

/* N phases' nanoseconds, summed over the clocks that have gone since the last take(). */
template <int N>
struct PhaseTotals
{
	std::atomic<int64_t> ns[N];

	/* out[0..N) = the totals; they start again from zero */
	void		take(int64_t *out)
	{
		for (int p = 0; p < N; p++)
			out[p] = ns[p].exchange(0);
	}
};

template <int N>
class PhaseClock
{
public:
	explicit PhaseClock(PhaseTotals<N> &totals) : totals_(totals), t_(std::chrono::steady_clock::now()) {}
	PhaseClock(const PhaseClock &) = delete;
	PhaseClock &operator=(const PhaseClock &) = delete;

	/* the time since the last mark (or construction) goes to phase p */
	void		mark(int p)
	{
		const auto	now = std::chrono::steady_clock::now();
		local_[p] += std::chrono::duration_cast<std::chrono::nanoseconds>(now - t_).count();
		t_ = now;
	}

	~PhaseClock()
	{
		for (int p = 0; p < N; p++)
			totals_.ns[p].fetch_add(local_[p], std::memory_order_relaxed);
	}

private:
	PhaseTotals<N> &totals_;
	std::chrono::steady_clock::time_point t_;
	int64_t		local_[N] = {};
};

}							/* namespace pgkm */

#endif							/* PGKM_PHASE_CLOCK_H */
