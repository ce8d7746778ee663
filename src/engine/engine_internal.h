/*
 * engine_internal.h: shared pieces of the engine's implementation (not part of
 * the public API): errors, the seeded RNG, the thread pool, and the Backend
 * interface that both the CPU engine and the CUDA plugin adapter implement so
 * that one host-side Lloyd driver (run.cpp) gives the same semantics on both.
 */
#ifndef PGKM_ENGINE_INTERNAL_H
#define PGKM_ENGINE_INTERNAL_H

#include "pgkm_engine.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace pgkm
{

/* An error carrying the pgkm_status the C API returns for it. */
struct EngineError : std::runtime_error
{
	int status;
	EngineError(int st, const std::string &msg) : std::runtime_error(msg), status(st) {}
};

/* Thrown (and caught at the API boundary) when the interrupt callback fired. */
struct Interrupted
{
};

/* SplitMix64: tiny, fast, fully specified, so a seed means the same stream everywhere. */
struct Rng
{
	uint64_t	state;
	explicit Rng(uint64_t seed) : state(seed) {}
	uint64_t	next()
	{
		uint64_t	z = (state += 0x9E3779B97F4A7C15ULL);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		return z ^ (z >> 31);
	}
	/* uniform in [0, 1) with 53 random bits */
	double		uniform() { return (double) (next() >> 11) * 0x1.0p-53; }
	/* uniform integer in [0, n), n > 0 (multiply-shift; bias < n / 2^64) */
	int64_t		below(int64_t n)
	{
		return (int64_t) (((unsigned __int128) next() * (uint64_t) n) >> 64);
	}
};

/* Seed of run r among n_init: decorrelated from neighbouring seeds and runs. */
uint64_t	derive_seed(uint64_t seed, int run);

/*
 * Persistent worker pool. parallel_for hands out fixed chunks through an
 * atomic counter; the calling thread works too and is the ONLY one that calls
 * the interrupt callback (PostgreSQL's interrupt flags are backend-local).
 * Workers only read the atomic stop flag. Results never depend on which
 * thread ran a chunk, so callers get thread-count-independent output as long
 * as they reduce per-chunk results in chunk order.
 */
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

private:
	void		worker_main(int worker);
	void		run_chunks(int worker);
	bool		poll_interrupt(bool force);

	int			nthreads_;
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

/* One Lloyd iteration's statistics (mirrors pgkm_cuda_iter). */
struct IterStats
{
	double		inertia = 0;	/* with the centroids before the update */
	int64_t		moved = 0;		/* labels changed (all n on the first pass) */
};

/*
 * The operations the host-side driver needs, in the plugin's terms:
 * kmeanspp / set_centroids -> iterate* -> assign. iterate leaves the
 * centroids of empty clusters unchanged; the driver repairs them.
 */
class Backend
{
public:
	virtual		~Backend() {}
	/* Greedy k-means++; writes k x d, returns the number of distinct centers found. */
	virtual int32_t kmeanspp(uint64_t seed, int32_t k, double *centroids, double *potential) = 0;
	virtual void set_centroids(const double *centroids, int32_t k) = 0;
	virtual void iterate(IterStats *st, double *centroids, int64_t *sizes) = 0;
	virtual void assign(int32_t *labels, double *dist2, int64_t *sizes, double *inertia) = 0;
	virtual std::string detail() const = 0;
	virtual const char *device() const = 0;
};

/* CPU engine over x (n x d float32, row-major); pool owned by the caller. */
std::unique_ptr<Backend> make_cpu_backend(const float *x, int64_t n, int32_t d, int32_t k,
										  const double *mean, double data_scale,
										  ThreadPool *pool);

/* Rows per chunk of the assignment pass: depends on the shape only. */
int64_t		assign_chunk_rows(int32_t d, int32_t k);

/* Use the GEMM distance form for this shape? */
bool		use_gemm(int32_t d, int32_t k);

/*
 * CUDA plugin: load (cached per path, once per process) and probe. On failure
 * returns nullptr and the reason in *why.
 */
struct CudaPlugin;
const CudaPlugin *load_cuda_plugin(const char *path, std::string *why);
std::string cuda_plugin_probe_info(const CudaPlugin *p);

std::unique_ptr<Backend> make_gpu_backend(const CudaPlugin *plugin, const float *x, int64_t n,
										  int32_t d, int32_t k, const pgkm_options *opt,
										  pgkm_interrupt_fn interrupt, void *ctx);

/* Copy a message into a caller's buffer, always NUL-terminated. */
void		copy_message(char *dst, size_t len, const std::string &msg);

}							/* namespace pgkm */

/*
 * Tuning and test hook, deliberately not in pgkm_engine.h: the smallest d that
 * uses the GEMM form (default 8). Returns the previous value. Process-wide.
 */
extern "C" int32_t pgkm_internal_set_gemm_min_d(int32_t d);
/* Test hook: k-means++ row skipping on (1, default) or off (0); returns the previous. */
extern "C" int32_t pgkm_internal_set_kpp_pruning(int32_t on);
/* Test hook: the driver library required before loading the plugin ("" = none); returns the previous. */
extern "C" const char *pgkm_internal_set_driver_library(const char *soname);

#endif							/* PGKM_ENGINE_INTERNAL_H */
