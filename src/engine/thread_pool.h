/*
 * thread_pool.h: the engine's persistent worker pool.
 *
 * parallel_for hands out fixed chunks through an atomic counter; the calling
 * thread works too and is the ONLY one that calls the interrupt callback
 * (PostgreSQL's interrupt flags are backend-local). Workers only read the
 * atomic stop flag. Results never depend on which thread ran a chunk, so
 * callers get thread-count-independent output as long as they reduce
 * per-chunk results in chunk order.
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

private:
	void		worker_main(int worker);
	void		run_chunks(int worker);
	bool		poll_interrupt(bool force);

	int			nthreads_;
	bool		inline_ = false;
	pgkm_interrupt_fn interrupt_;
	void	   *ctx_;
	std::vector<std::thread> threads_;
	std::mutex	mu_;
	std::condition_variable work_cv_;
	std::condition_variable done_cv_;
	uint64_t	generation_ = 0;
	bool		shutdown_ = false;
	int			busy_ = 0;
	const std::function<void(int64_t, int)> *body_ = nullptr;
	int64_t		nchunks_ = 0;
	std::atomic<int64_t> next_ {0};
	std::atomic<bool> stop_ {false};
	std::atomic<bool> interrupted_ {false};
	std::exception_ptr error_;
	std::chrono::steady_clock::time_point last_poll_;
};

/* Threads for n_threads (0 = all cores, at least 1). */
int			resolve_threads(int32_t n_threads);

}							/* namespace pgkm */

#endif							/* PGKM_THREAD_POOL_H */
