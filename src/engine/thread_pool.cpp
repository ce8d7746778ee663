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
#include <sched.h>

#include <stdexcept>

namespace pgkm
{

/* How often the calling thread asks the interrupt callback (cheap, but not free). */
static constexpr auto POLL_INTERVAL = std::chrono::milliseconds(2);

constexpr std::chrono::microseconds ThreadPool::SPIN_TIME;

/* Helpers per call: the ticket's low bits. */
static constexpr uint64_t TICKET_HELPERS = 0xffff;

static inline void
cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Cores this process may run on (its affinity mask; the machine's count if unknown). */
static int
usable_cores()
{
	cpu_set_t	set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	unsigned	hc = std::thread::hardware_concurrency();
	return hc == 0 ? 1 : (int) hc;
}

ThreadPool::ThreadPool(int nthreads, pgkm_interrupt_fn interrupt, void *ctx)
	: nthreads_(std::min(nthreads < 1 ? 1 : nthreads, (int) TICKET_HELPERS)), interrupt_(interrupt),
	  ctx_(ctx), last_poll_(std::chrono::steady_clock::now())
{
	if (nthreads_ == 1)
		return;
	spin_ = nthreads_ <= usable_cores();
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
			shutdown_.store(true);
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
		shutdown_.store(true);
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

/* Claim word: the call's number above the next chunk's index (CLAIM_INDEX_BITS bits). */
static constexpr int CLAIM_INDEX_BITS = 36;
static constexpr uint64_t CLAIM_INDEX = ((uint64_t) 1 << CLAIM_INDEX_BITS) - 1;

/* A worker that sleeps this long once before it takes part in a call (tests: a helper that comes late). */
static std::atomic<int> late_worker {0};
static std::atomic<int64_t> late_us {0};

extern "C" void
pgkm_internal_pool_late_start(int worker, int64_t microseconds)
{
	late_worker.store(worker);
	late_us.store(microseconds);
}

/*
 * Claims chunks of the call until none are left, the call is over (a late
 * helper) or a stop was requested; records the first error. Every claimed
 * chunk counts in done_ when it ends, however it ends.
 */
void
ThreadPool::run_chunks(int worker, uint64_t call)
{
	const uint64_t tag = call << CLAIM_INDEX_BITS;
	const CallSlot &slot = slots_[call & 1];
	for (;;)
	{
		if (stop_.load(std::memory_order_relaxed))
			return;
		if (worker == 0 && poll_interrupt(false))
			return;
		uint64_t	v = claim_.load(std::memory_order_acquire);
		if ((v & ~CLAIM_INDEX) != tag)
			return;
		const int64_t c = (int64_t) (v & CLAIM_INDEX);
		const int64_t nchunks = slot.nchunks.load(std::memory_order_relaxed);
		if (c >= nchunks)
			return;
		/* fails when another thread claimed c, or the call ended and the slot may be another's */
		if (!claim_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_relaxed))
			continue;
		const std::function<void(int64_t, int)> &body = *slot.body.load(std::memory_order_relaxed);
		bool		failed = false;
		try
		{
			if (worker == 0 && times_)
			{
				const auto	t0 = std::chrono::steady_clock::now();
				body(c, worker);
				own_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
				own_chunks_++;
			}
			else
				body(c, worker);
		}
		catch (const Interrupted &)
		{
			stop_.store(true);
			failed = true;
		}
		catch (...)
		{
			std::lock_guard<std::mutex> lk(mu_);
			if (!error_)
				error_ = std::current_exception();
			stop_.store(true);
			failed = true;
		}
		if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == nchunks && worker != 0)
		{
			/* under the lock, so that a caller about to sleep sees done_ or gets the notice */
			std::lock_guard<std::mutex> lk(mu_);
			done_cv_.notify_all();
		}
		if (failed)
			return;
	}
}

/* The next ticket after seen (spinning, then asleep); 0 on shutdown. */
uint64_t
ThreadPool::await_ticket(uint64_t seen)
{
	if (spin_)
	{
		const auto	until = std::chrono::steady_clock::now() + SPIN_TIME;
		for (uint32_t i = 1;; i++)
		{
			const uint64_t t = ticket_.load(std::memory_order_acquire);
			if (t != seen)
				return t;
			if (shutdown_.load(std::memory_order_relaxed))
				return 0;
			if (i % 64 == 0 && std::chrono::steady_clock::now() >= until)
				break;
			cpu_relax();
		}
	}
	std::unique_lock<std::mutex> lk(mu_);
	work_cv_.wait(lk, [&] { return shutdown_.load() || ticket_.load() != seen; });
	return shutdown_.load() ? 0 : ticket_.load(std::memory_order_acquire);
}

/*
 * A worker takes part in the calls whose ticket names it, if it comes in
 * time: it claims chunks of that call only (run_chunks), and a worker that
 * was late or asleep through calls reads the latest ticket alone.
 */
void
ThreadPool::worker_main(int worker)
{
	uint64_t	seen = 0;
	while ((seen = await_ticket(seen)) != 0)
	{
		if (worker > (int) (seen & TICKET_HELPERS))
			continue;
		if (late_worker.load(std::memory_order_relaxed) == worker && late_us.load(std::memory_order_relaxed) > 0)
			std::this_thread::sleep_for(std::chrono::microseconds(late_us.exchange(0)));
		run_chunks(worker, seen >> 16);
	}
}

/* The caller, its own chunks done: spin, then sleep until the claimed chunks are, answering interrupts. */
void
ThreadPool::await_chunks(int64_t claimed)
{
	if (done_.load(std::memory_order_acquire) >= claimed)
		return;
	if (spin_)
	{
		const auto	until = std::chrono::steady_clock::now() + SPIN_TIME;
		for (uint32_t i = 1; done_.load(std::memory_order_acquire) < claimed; i++)
		{
			if (i % 64 == 0)
			{
				poll_interrupt(false);
				if (std::chrono::steady_clock::now() >= until)
					break;
			}
			cpu_relax();
		}
	}
	std::unique_lock<std::mutex> lk(mu_);
	while (done_.load(std::memory_order_acquire) < claimed)
	{
		done_cv_.wait_for(lk, POLL_INTERVAL);
		if (done_.load(std::memory_order_acquire) < claimed)
		{
			lk.unlock();
			poll_interrupt(false);
			lk.lock();
		}
	}
}

void
ThreadPool::parallel_for(int64_t nchunks, const std::function<void(int64_t, int)> &body)
{
	if (poll_interrupt(true))
		throw Interrupted();
	if (nchunks <= 0)
		return;
	if (nchunks > (int64_t) CLAIM_INDEX)
		throw std::length_error("parallel_for: more chunks than the claim word counts");
	const auto	start = times_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
	own_s_ = 0;
	own_chunks_ = 0;
	const uint64_t call = ++calls_;
	CallSlot   &slot = slots_[call & 1];
	slot.body.store(&body, std::memory_order_relaxed);
	slot.nchunks.store(nchunks, std::memory_order_relaxed);
	done_.store(0, std::memory_order_relaxed);
	stop_.store(false);
	error_ = nullptr;
	claim_.store(call << CLAIM_INDEX_BITS, std::memory_order_release);
	const int	helpers = inline_ ? 0 : (int) std::min<int64_t>(nthreads_ - 1, nchunks - 1);
	if (helpers > 0)
	{
		{
			std::lock_guard<std::mutex> lk(mu_);
			ticket_.store(call << 16 | (uint64_t) helpers, std::memory_order_release);
		}
		work_cv_.notify_all();
	}
	run_chunks(0, call);
	/* no claims from here on (a stop leaves chunks unclaimed); then the claimed ones end */
	uint64_t	v = claim_.load(std::memory_order_acquire);
	while ((int64_t) (v & CLAIM_INDEX) < nchunks &&
		   !claim_.compare_exchange_weak(v, (v & ~CLAIM_INDEX) | (uint64_t) nchunks, std::memory_order_acq_rel,
										 std::memory_order_acquire))
		;
	await_chunks(std::min<int64_t>((int64_t) (v & CLAIM_INDEX), nchunks));
	if (times_)
	{
		const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		times_->wall_s += wall;
		times_->alone_s += own_chunks_ > 0 ? own_s_ / own_chunks_ * nchunks : wall;
	}
	if (error_)
		std::rethrow_exception(error_);
	if (interrupted_.load() || poll_interrupt(true))
		throw Interrupted();
}

int
resolve_threads(int32_t n_threads)
{
	return n_threads > 0 ? n_threads : usable_cores();
}

}							/* namespace pgkm */
