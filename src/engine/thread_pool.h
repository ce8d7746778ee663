/*
 * thread_pool.h: the engine's persistent worker pool.
 *
 * parallel_for hands out fixed chunks through an atomic counter tagged with
 * the call, and returns once every claimed chunk is done: a helper that
 * comes late (pre-empted while it spun, slow to wake) finds its call over
 * and claims nothing, so no call waits for a thread that has no chunk. The
 * calling thread works too and is the ONLY one that calls the interrupt
 * callback (PostgreSQL's interrupt flags are backend-local). Workers only read the
 * atomic stop flag. Results never depend on which thread ran a chunk, so
 * callers get thread-count-independent output as long as they reduce
 * per-chunk results in chunk order.
 *
 * Between calls a worker spins for SPIN_TIME before it sleeps: greedy
 * k-means++ and the bounded passes issue thousands of short parallel_for
 * calls, and waking sleeping threads (a futex per thread, one mutex) cost
 * more than such a call's work on 16 cores. The spin is bounded, so an idle
 * pool sleeps; it is off when the pool has more threads than the process
 * may use cores (spinners would take the cores the working threads need).
 */
#ifndef PGKM_THREAD_POOL_H
#define PGKM_THREAD_POOL_H

#include "pgkm_engine.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pgkm
{

class ThreadPool
{
public:
	ThreadPool(int nthreads, pgkm_interrupt_fn interrupt, void *ctx);
	~ThreadPool();
	ThreadPool(const ThreadPool &) = delete;
	ThreadPool &operator=(const ThreadPool &) = delete;

	int			size() const { return nthreads_; }

	/* body(chunk, worker): worker 0 is the calling thread. Throws Interrupted. */
	void		parallel_for(int64_t nchunks, const std::function<void(int64_t, int)> &body);

	/*
	 * Inside long chunk bodies: the calling thread polls the callback (rate
	 * limited), every thread unwinds once a stop was requested.
	 */
	void		checkpoint(int worker);

	/* Serial code on the calling thread: poll now (rate limited); throws Interrupted. */
	void		poll();

	/*
	 * While set, parallel_for runs every chunk on the calling thread as
	 * worker 0 (the same results: any chunk may run on any worker), for
	 * steps too short to pay for waking the workers (serial_or_pool.h).
	 */
	void		set_inline(bool on) { inline_ = on; }

	/*
	 * What calls cost against the calling thread alone, summed while set
	 * (serial_or_pool.h): their wall time, and an estimate of their time on
	 * the calling thread alone, its own mean time per chunk times the
	 * chunks (a call whose chunks it took none of counts its wall time).
	 * The caller's chunks are not delayed by waking the workers, so a pool
	 * slow to start or pre-empted shows as wall time above the estimate.
	 */
	struct CallTimes
	{
		double		wall_s = 0;
		double		alone_s = 0;
	};
	void		set_timing(CallTimes *times) { times_ = times; }

	/* How long an idle worker (and the caller awaiting the claimed chunks) spins before sleeping. */
	static constexpr std::chrono::microseconds SPIN_TIME {200};

	/* Whether workers spin (false when the pool has more threads than usable cores). */
	bool		spins() const { return spin_; }

private:
	void		worker_main(int worker);
	void		run_chunks(int worker, uint64_t call);
	bool		poll_interrupt(bool force);
	uint64_t	await_ticket(uint64_t seen);
	void		await_chunks(int64_t claimed);

	int			nthreads_;
	bool		inline_ = false;
	CallTimes  *times_ = nullptr;
	double		own_s_ = 0;		/* the calling thread's time in chunk bodies this call, while timing */
	int64_t		own_chunks_ = 0;
	bool		spin_ = false;
	pgkm_interrupt_fn interrupt_;
	void	   *ctx_;
	std::vector<std::thread> threads_;
	std::mutex	mu_;			/* sleeping: ticket_ and shutdown_ change under it */
	std::condition_variable work_cv_;
	std::condition_variable done_cv_;
	/*
	 * A call's ticket: its number << 16 | its helpers (workers 1..helpers
	 * take part), in one word so that a worker reads both at once. Chunks
	 * are claimed from claim_ (the call's number above the next chunk), so a
	 * helper that comes late, after its call ended, claims nothing; the
	 * caller waits for the claimed chunks (done_), not for every helper to
	 * show up. The words that every thread writes during a call (claim_,
	 * done_) have cache lines of their own, away from those the idle workers
	 * spin on.
	 */
	alignas(64) std::atomic<uint64_t> ticket_ {0};
	std::atomic<bool> shutdown_ {false};
	std::atomic<bool> stop_ {false};
	uint64_t	calls_ = 0;		/* the caller's call number */
	/* the current and the last call's body and chunks, by call number parity (a late helper may read the last) */
	struct CallSlot
	{
		std::atomic<const std::function<void(int64_t, int)> *> body {nullptr};
		std::atomic<int64_t> nchunks {0};
	};
	CallSlot	slots_[2];
	alignas(64) std::atomic<uint64_t> claim_ {0};
	alignas(64) std::atomic<int64_t> done_ {0};	/* chunks of the current call finished (or failed) */
	alignas(64) std::atomic<bool> interrupted_ {false};
	std::exception_ptr error_;
	std::chrono::steady_clock::time_point last_poll_;
};

/*
 * Threads for n_threads: 0 = the cores this process may run on (its
 * affinity mask, as a container's cpuset sets it; not the machine's count).
 */
int			resolve_threads(int32_t n_threads);

}							/* namespace pgkm */

#endif							/* PGKM_THREAD_POOL_H */
