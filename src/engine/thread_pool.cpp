/*
 * thread_pool.cpp: the engine's worker threads.
 *
 * Workers are created once per run with every signal blocked (a PostgreSQL
 * backend's signal handlers must only ever run on the backend's own thread),
 * and they never call back into the caller: only the calling thread polls
 * the interrupt callback, then raises an atomic flag the workers read.
 */
#include "thread_pool.h"
#include "errors.h"

#include <algorithm>
#include <csignal>
#include <pthread.h>

namespace pgkm
{

/* How often the calling thread asks the interrupt callback (cheap, but not free). */
static constexpr auto POLL_INTERVAL = std::chrono::milliseconds(2);

ThreadPool::ThreadPool(int nthreads, pgkm_interrupt_fn interrupt, void *ctx)
	: nthreads_(nthreads < 1 ? 1 : nthreads), interrupt_(interrupt), ctx_(ctx),
	  last_poll_(std::chrono::steady_clock::now())
{
	if (nthreads_ == 1)
		return;
	/* New threads inherit the creator's mask: block everything while spawning. */
	sigset_t	all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	try
	{
		for (int w = 1; w < nthreads_; w++)
			threads_.emplace_back(&ThreadPool::worker_main, this, w);
	}
	catch (...)
	{
		pthread_sigmask(SIG_SETMASK, &old, nullptr);
		{
			std::lock_guard<std::mutex> lk(mu_);
			shutdown_ = true;
		}
		work_cv_.notify_all();
		for (auto &t : threads_)
			t.join();
		throw;
	}
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

ThreadPool::~ThreadPool()
{
	{
		std::lock_guard<std::mutex> lk(mu_);
		shutdown_ = true;
	}
	work_cv_.notify_all();
	for (auto &t : threads_)
		t.join();
}

/* Calls the interrupt callback at most every POLL_INTERVAL unless forced. */
bool
ThreadPool::poll_interrupt(bool force)
{
	if (interrupted_.load(std::memory_order_relaxed))
		return true;
	if (!interrupt_)
		return false;
	auto		now = std::chrono::steady_clock::now();
	if (!force && now - last_poll_ < POLL_INTERVAL)
		return false;
	last_poll_ = now;
	if (interrupt_(ctx_) != 0)
	{
		interrupted_.store(true);
		stop_.store(true);
		return true;
	}
	return false;
}

void
ThreadPool::poll()
{
	if (poll_interrupt(false))
		throw Interrupted();
}

void
ThreadPool::checkpoint(int worker)
{
	if (worker == 0)
		poll_interrupt(false);
	if (stop_.load(std::memory_order_relaxed))
		throw Interrupted();
}

/* Grabs chunks until none are left or a stop was requested; records the first error. */
void
ThreadPool::run_chunks(int worker)
{
	for (;;)
	{
		if (stop_.load(std::memory_order_relaxed))
			return;
		if (worker == 0 && poll_interrupt(false))
			return;
		int64_t		c = next_.fetch_add(1, std::memory_order_relaxed);
		if (c >= nchunks_)
			return;
		try
		{
			(*body_) (c, worker);
		}
		catch (const Interrupted &)
		{
			stop_.store(true);
			return;
		}
		catch (...)
		{
			std::lock_guard<std::mutex> lk(mu_);
			if (!error_)
				error_ = std::current_exception();
			stop_.store(true);
			return;
		}
	}
}

void
ThreadPool::worker_main(int worker)
{
	uint64_t	seen = 0;
	for (;;)
	{
		{
			std::unique_lock<std::mutex> lk(mu_);
			work_cv_.wait(lk, [&] { return shutdown_ || generation_ != seen; });
			if (shutdown_)
				return;
			seen = generation_;
		}
		run_chunks(worker);
		{
			std::lock_guard<std::mutex> lk(mu_);
			busy_--;
		}
		done_cv_.notify_all();
	}
}

void
ThreadPool::parallel_for(int64_t nchunks, const std::function<void(int64_t, int)> &body)
{
	if (poll_interrupt(true))
		throw Interrupted();
	if (nchunks <= 0)
		return;
	body_ = &body;
	nchunks_ = nchunks;
	next_.store(0);
	stop_.store(false);
	error_ = nullptr;
	int			helpers = inline_ ? 0 : (int) std::min<int64_t>(nthreads_ - 1, nchunks - 1);
	if (helpers > 0)
	{
		{
			std::lock_guard<std::mutex> lk(mu_);
			busy_ = (int) threads_.size();
			generation_++;
		}
		work_cv_.notify_all();
	}
	run_chunks(0);
	if (helpers > 0)
	{
		/* Wait for the helpers, still answering interrupts meanwhile. */
		std::unique_lock<std::mutex> lk(mu_);
		while (busy_ > 0)
		{
			done_cv_.wait_for(lk, POLL_INTERVAL);
			if (busy_ > 0)
			{
				lk.unlock();
				poll_interrupt(false);
				lk.lock();
			}
		}
	}
	body_ = nullptr;
	if (error_)
		std::rethrow_exception(error_);
	if (interrupted_.load() || poll_interrupt(true))
		throw Interrupted();
}

int
resolve_threads(int32_t n_threads)
{
	if (n_threads > 0)
		return n_threads;
	unsigned	hc = std::thread::hardware_concurrency();
	return hc == 0 ? 1 : (int) hc;
}

}							/* namespace pgkm */
