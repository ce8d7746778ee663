/*
 * run.cpp: the public C API and the host-side Lloyd driver.
 *
 * The driver is shared by the CPU and GPU backends, so convergence, empty
 * cluster repair and n_init selection are the same code on either device.
 * Semantics follow scikit-learn 1.2's _kmeans_single_lloyd exactly:
 *   - tol is scaled by the mean per-feature variance of the data;
 *   - each iteration assigns with the current centers, then recomputes them;
 *   - stop when labels did not change (strict convergence) or when the sum
 *     over clusters of squared center shifts <= scaled tol, or at max_iter;
 *   - a final assignment against the final centers gives labels, distances
 *     and inertia (sklearn skips it only when strictly converged, where it
 *     gives the same labels); iterations counts the Lloyd updates done.
 * Policies (documented in the README by the glue):
 *   - empty cluster: FAISS-style split of the largest cluster (counted in
 *     empty_cluster_repairs);
 *   - fewer distinct points than k: k-means++ and random init return only
 *     as many clusters as there are distinct points (result.k < k_requested);
 *     with given centroids, clusters that cannot be filled are dropped at the
 *     end (same signal). No empty cluster is ever returned.
 *   - progress.inertia of the init step is the k-means++ potential on the
 *     CPU, NaN where it is not computed (random, given, GPU k-means++).
 */
#include "engine_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_set>
#include <unordered_map>

using namespace pgkm;

/* Relative size of the symmetric perturbation used when splitting a cluster. */
static constexpr double SPLIT_EPS = 1.0 / 1024.0;

/* Rows per chunk for the data statistics pass. */
static constexpr int64_t STATS_CHUNK = 65536;

enum class Phase
{
	Init,
	Iterate,
	Final,
	Done,
	Failed
};

struct pgkm_run
{
	const float *x = nullptr;
	int64_t		n = 0;
	int32_t		d = 0;
	pgkm_options opt {};
	pgkm_interrupt_fn interrupt = nullptr;
	void	   *interrupt_ctx = nullptr;
	std::chrono::steady_clock::time_point t0;

	std::unique_ptr<ThreadPool> pool;
	std::unique_ptr<Backend> backend;
	std::vector<double> mean;
	double		tol_scaled = 0;
	double		data_scale = 1;
	std::vector<double> given;	/* INIT_GIVEN centroids */

	/* state of the current run */
	Phase		phase = Phase::Init;
	int			run = 0;
	int			n_runs = 1;
	int32_t		k = 0;
	int32_t		iter = 0;
	int32_t		repairs = 0;
	bool		converged = false;
	std::vector<double> centers, old_centers, init_centers;
	std::vector<char> split_last;	/* cluster took part in a split last iteration */
	std::vector<char> split_futile;	/* a split of this cluster did not separate points: stop */
	std::vector<int64_t> sizes;
	std::vector<int32_t> labels;
	std::vector<double> dist2;

	/* best run so far */
	bool		have_best = false;
	int32_t		best_k = 0;
	double		best_inertia = 0;
	int32_t		best_iter = 0, best_converged = 0, best_run = 0, best_repairs = 0;
	std::vector<double> best_centers, best_init;
	std::vector<int64_t> best_sizes;
	std::vector<int32_t> best_labels;
	std::vector<double> best_dist;	/* squared until Done, then Euclidean */

	std::string device = "cpu";
	std::string device_detail;
	std::string fallback_reason;
	double		elapsed = 0;
};

static double
seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static std::string
fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static std::string
fmt(const char *f, ...)
{
	char		buf[512];
	va_list		ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return buf;
}

/* Catches everything at the C boundary and turns it into status + message. */
template <typename F>
static int
guarded(char *err, size_t errlen, F &&f)
{
	try
	{
		return f();
	}
	catch (const Interrupted &)
	{
		copy_message(err, errlen, "k-means interrupted");
		return PGKM_INTERRUPTED;
	}
	catch (const EngineError &e)
	{
		copy_message(err, errlen, e.what());
		return e.status;
	}
	catch (const std::bad_alloc &)
	{
		copy_message(err, errlen, "out of memory in the k-means engine");
		return PGKM_ERR_NOMEM;
	}
	catch (const std::exception &e)
	{
		copy_message(err, errlen, std::string("internal error in the k-means engine: ") + e.what());
		return PGKM_ERR_INTERNAL;
	}
	catch (...)
	{
		copy_message(err, errlen, "internal error in the k-means engine");
		return PGKM_ERR_INTERNAL;
	}
}

static int
resolve_threads(int32_t n_threads)
{
	if (n_threads > 0)
		return n_threads;
	unsigned	hc = std::thread::hardware_concurrency();
	return hc == 0 ? 1 : (int) hc;
}

extern "C" void
pgkm_options_default(pgkm_options *opt)
{
	if (!opt)
		return;
	memset(opt, 0, sizeof(*opt));
	opt->k = 0;
	opt->max_iter = 300;
	opt->tol = 1e-4;
	opt->init = PGKM_INIT_KMEANSPP;
	opt->initial_centroids = nullptr;
	opt->n_init = 1;
	opt->seed = 0;
	opt->method = PGKM_METHOD_LLOYD;
	opt->device = PGKM_DEVICE_AUTO;
	opt->n_threads = 0;
	opt->deterministic = 1;
	opt->gpu_plugin_path = nullptr;
	opt->gpu_memory_limit = 0;
}

/* Argument checks that need no data pass. */
static void
validate_options(int64_t n, int32_t d, const pgkm_options *opt)
{
	if (!opt)
		throw EngineError(PGKM_ERR_INVALID, "options must not be NULL");
	if (d < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("the number of features must be at least 1 (got %d)", d));
	if (n < 1)
		throw EngineError(PGKM_ERR_INVALID, "no rows to cluster");
	if (opt->k < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("k must be at least 1 (got %d)", opt->k));
	if (opt->k > n)
		throw EngineError(PGKM_ERR_INVALID,
						  fmt("k (%d) must not exceed the number of rows (%lld)", opt->k, (long long) n));
	if (opt->max_iter < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("max_iter must be at least 1 (got %d)", opt->max_iter));
	if (!(opt->tol >= 0) || std::isinf(opt->tol))
		throw EngineError(PGKM_ERR_INVALID, fmt("tol must be a finite number >= 0 (got %g)", opt->tol));
	if (opt->n_init < 1)
		throw EngineError(PGKM_ERR_INVALID, fmt("n_init must be at least 1 (got %d)", opt->n_init));
	if (opt->init != PGKM_INIT_KMEANSPP && opt->init != PGKM_INIT_RANDOM && opt->init != PGKM_INIT_GIVEN)
		throw EngineError(PGKM_ERR_INVALID, fmt("unknown init method %d", opt->init));
	if (opt->init == PGKM_INIT_GIVEN && !opt->initial_centroids)
		throw EngineError(PGKM_ERR_INVALID, "init GIVEN needs initial_centroids");
	if (opt->method != PGKM_METHOD_LLOYD)
		throw EngineError(PGKM_ERR_INVALID, fmt("unknown method %d (valid: lloyd)", opt->method));
	if (opt->device != PGKM_DEVICE_AUTO && opt->device != PGKM_DEVICE_CPU && opt->device != PGKM_DEVICE_GPU)
		throw EngineError(PGKM_ERR_INVALID, fmt("unknown device %d", opt->device));
	if (opt->n_threads < 0)
		throw EngineError(PGKM_ERR_INVALID, fmt("n_threads must be >= 0 (got %d)", opt->n_threads));
	if ((double) d * (double) opt->k > 2.0e9)
		throw EngineError(PGKM_ERR_INVALID, "k x d is too large");
}

/*
 * One parallel pass of per-chunk column sums: for each row, add(xi, p) adds
 * its terms into the chunk's d partials p, or returns false to stop the
 * chunk (the caller records why). Chunks are fixed-size and reduced in chunk
 * order by the caller, so the sums do not depend on the thread count.
 */
template <class AddRow>
static void
chunk_column_sums(pgkm_run *r, std::vector<double> &part, int64_t nchunks, AddRow add)
{
	const int64_t n = r->n;
	const int32_t d = r->d;
	r->pool->parallel_for(nchunks, [&](int64_t ch, int w) {
		int64_t		r0 = ch * STATS_CHUNK, r1 = std::min(n, r0 + STATS_CHUNK);
		double	   *p = part.data() + (size_t) ch * d;
		std::fill(p, p + d, 0.0);
		for (int64_t i = r0; i < r1; i++)
		{
			if ((i & 0x3FFF) == 0)
				r->pool->checkpoint(w);
			if (!add(r->x + i * d, i, ch, p))
				return;
		}
	});
}

/*
 * Two parallel passes over the data: the first rejects NaN/Inf (naming the
 * first bad row and feature) and sums the columns for the means, the second
 * sums squared deviations for the mean per-feature variance (fp64,
 * per-chunk partials reduced in chunk order).
 */
static void
data_statistics(pgkm_run *r)
{
	const int64_t n = r->n;
	const int32_t d = r->d;
	const int64_t nchunks = (n + STATS_CHUNK - 1) / STATS_CHUNK;
	std::vector<double> part((size_t) nchunks * d);
	std::vector<int64_t> bad(nchunks, -1);
	const float *x = r->x;
	chunk_column_sums(r, part, nchunks, [&](const float *xi, int64_t i, int64_t ch, double *p) {
		for (int32_t j = 0; j < d; j++)
		{
			if (!std::isfinite(xi[j]))
			{
				bad[ch] = i * d + j;
				return false;
			}
			p[j] += xi[j];
		}
		return true;
	});
	for (int64_t ch = 0; ch < nchunks; ch++)
		if (bad[ch] >= 0)
		{
			int64_t		row = bad[ch] / d;
			int32_t		col = (int32_t) (bad[ch] % d);
			float		v = x[bad[ch]];
			throw EngineError(PGKM_ERR_INVALID,
							  fmt("row %lld (0-based) feature %d (0-based) is %s; NaN and infinite values cannot be clustered",
								  (long long) row, col, std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity")));
		}
	r->mean.assign(d, 0.0);
	for (int64_t ch = 0; ch < nchunks; ch++)
		for (int32_t j = 0; j < d; j++)
			r->mean[j] += part[(size_t) ch * d + j];
	for (int32_t j = 0; j < d; j++)
		r->mean[j] /= (double) n;
	const double *mean = r->mean.data();
	chunk_column_sums(r, part, nchunks, [&](const float *xi, int64_t, int64_t, double *p) {
		for (int32_t j = 0; j < d; j++)
		{
			double		t = (double) xi[j] - mean[j];
			p[j] += t * t;
		}
		return true;
	});
	double		var_sum = 0;
	for (int32_t j = 0; j < d; j++)
	{
		double		v = 0;
		for (int64_t ch = 0; ch < nchunks; ch++)
			v += part[(size_t) ch * d + j];
		var_sum += v / (double) n;
	}
	double		mean_var = var_sum / d;
	r->tol_scaled = r->opt.tol == 0 ? 0 : mean_var * r->opt.tol;
	r->data_scale = mean_var > 0 ? std::sqrt(mean_var) : 1.0;
}

/* Picks the backend: GPU when asked and usable, else CPU (AUTO records why). */
static void
choose_backend(pgkm_run *r, const char *plugin_path)
{
	const pgkm_options &o = r->opt;
	if (o.device == PGKM_DEVICE_GPU || o.device == PGKM_DEVICE_AUTO)
	{
		std::string why;
		const CudaPlugin *p = load_cuda_plugin(plugin_path, &why);
		if (p)
		{
			try
			{
				r->backend = make_gpu_backend(p, r->x, r->n, r->d, o.k, &r->opt, r->interrupt,
											  r->interrupt_ctx);
			}
			catch (const EngineError &e)
			{
				if (o.device == PGKM_DEVICE_GPU)
					throw;
				why = e.what();
			}
		}
		if (!r->backend && o.device == PGKM_DEVICE_GPU)
			throw EngineError(PGKM_ERR_GPU_UNAVAILABLE, why);
		if (!r->backend)
			r->fallback_reason = why;
	}
	if (!r->backend)
		r->backend = make_cpu_backend(r->x, r->n, r->d, o.k, r->mean.data(), r->data_scale,
									  r->pool.get());
	r->device = r->backend->device();
	r->device_detail = r->backend->detail();
}

extern "C" int
pgkm_run_create(const float *x, int64_t n, int32_t d, const pgkm_options *opt,
				pgkm_interrupt_fn interrupt, void *interrupt_ctx, pgkm_run **out,
				char *err, size_t errlen)
{
	if (out)
		*out = nullptr;
	return guarded(err, errlen, [&]() -> int {
		if (!out)
			throw EngineError(PGKM_ERR_INVALID, "out must not be NULL");
		validate_options(n, d, opt);
		if (!x)
			throw EngineError(PGKM_ERR_INVALID, "data must not be NULL");
		std::unique_ptr<pgkm_run> r(new pgkm_run);
		r->t0 = std::chrono::steady_clock::now();
		r->x = x;
		r->n = n;
		r->d = d;
		r->opt = *opt;
		r->interrupt = interrupt;
		r->interrupt_ctx = interrupt_ctx;
		if (opt->init == PGKM_INIT_GIVEN)
		{
			size_t		kd = (size_t) opt->k * d;
			r->given.assign(opt->initial_centroids, opt->initial_centroids + kd);
			for (size_t i = 0; i < kd; i++)
				if (!std::isfinite(r->given[i]))
					throw EngineError(PGKM_ERR_INVALID,
									  fmt("initial centroid %d feature %d is not finite",
										  (int) (i / d), (int) (i % d)));
			r->n_runs = 1;		/* like sklearn: several runs from one start are pointless */
		}
		else
			r->n_runs = opt->n_init;
		r->opt.initial_centroids = nullptr;
		r->opt.gpu_plugin_path = nullptr;	/* not kept: the caller's string may go away */
		r->pool.reset(new ThreadPool(resolve_threads(opt->n_threads), interrupt, interrupt_ctx));
		data_statistics(r.get());
		choose_backend(r.get(), opt->gpu_plugin_path);
		size_t		kd = (size_t) opt->k * d;
		r->centers.resize(kd);
		r->old_centers.resize(kd);
		r->sizes.resize(opt->k);
		r->labels.resize(n);
		r->dist2.resize(n);
		*out = r.release();
		return PGKM_OK;
	});
}

/*
 * 'random' init: rows in a seeded random order (lazy Fisher-Yates), skipping
 * rows equal to one already taken, until k distinct rows are found or the
 * data runs out.
 */
static int32_t
random_init(pgkm_run *r, uint64_t seed, double *centers)
{
	const int32_t d = r->d, k = r->opt.k;
	const int64_t n = r->n;
	Rng			rng(seed);
	std::unordered_map<int64_t, int64_t> swapped;
	std::unordered_set<std::string> seen;
	int32_t		found = 0;
	std::string key(sizeof(float) * d, '\0');
	for (int64_t i = 0; i < n && found < k; i++)
	{
		if ((i & 0xFFF) == 0)
			r->pool->poll();
		int64_t		j = i + rng.below(n - i);
		auto		fj = swapped.find(j);
		int64_t		row = fj == swapped.end() ? j : fj->second;
		auto		fi = swapped.find(i);
		swapped[j] = fi == swapped.end() ? i : fi->second;
		const float *xr = r->x + row * d;
		for (int32_t c = 0; c < d; c++)
		{
			float		v = xr[c] + 0.0f;	/* -0 -> +0 */
			memcpy(&key[sizeof(float) * c], &v, sizeof(float));
		}
		if (!seen.insert(key).second)
			continue;
		for (int32_t c = 0; c < d; c++)
			centers[(size_t) found * d + c] = xr[c];
		found++;
	}
	return found;
}

/*
 * FAISS-style repair: each empty cluster takes the centroid of the currently
 * largest cluster; the two are pushed apart by a small relative epsilon in
 * opposite directions (alternating per feature), and the largest cluster's
 * count is assumed split in two. Deterministic; returns the repairs done.
 * A cluster that is empty again right after taking part in a split was
 * split from identical points (fewer distinct points than k): it is given up
 * (left empty, then dropped from the result) instead of split forever.
 */
static int32_t
repair_empty_clusters(pgkm_run *r, double *centers, int64_t *sizes, int32_t k)
{
	const int32_t d = r->d;
	int32_t		repairs = 0;
	std::vector<int64_t> sz(sizes, sizes + k);
	std::vector<char> split_now(k, 0);
	for (int32_t ci = 0; ci < k; ci++)
	{
		if (sz[ci] != 0)
			continue;
		if (r->split_last[ci])
			r->split_futile[ci] = 1;
		if (r->split_futile[ci])
			continue;
		int32_t		cj = 0;
		for (int32_t c = 1; c < k; c++)
			if (sz[c] > sz[cj])
				cj = c;
		if (sz[cj] < 2)
			break;				/* nothing left to split */
		double	   *a = centers + (size_t) ci * d;
		double	   *b = centers + (size_t) cj * d;
		for (int32_t j = 0; j < d; j++)
		{
			double		delta = SPLIT_EPS * (std::fabs(b[j]) + r->data_scale);
			double		sgn = (j % 2 == 0) ? 1.0 : -1.0;
			a[j] = b[j] + sgn * delta;
			b[j] = b[j] - sgn * delta;
		}
		sz[ci] = sz[cj] / 2;
		sz[cj] -= sz[ci];
		split_now[ci] = split_now[cj] = 1;
		repairs++;
	}
	r->split_last.swap(split_now);
	return repairs;
}

/*
 * No empty cluster is returned: clusters still empty after the final
 * assignment (only possible with fewer distinct points than k) are dropped
 * and labels renumbered, so result.k < k_requested says so.
 */
static void
drop_empty_clusters(pgkm_run *r)
{
	const int32_t d = r->d, k = r->k;
	std::vector<int32_t> map(k, -1);
	int32_t		kept = 0;
	for (int32_t c = 0; c < k; c++)
		if (r->sizes[c] > 0)
		{
			if (kept != c)
			{
				std::copy(r->centers.begin() + (size_t) c * d, r->centers.begin() + (size_t) (c + 1) * d,
						  r->centers.begin() + (size_t) kept * d);
				std::copy(r->init_centers.begin() + (size_t) c * d,
						  r->init_centers.begin() + (size_t) (c + 1) * d,
						  r->init_centers.begin() + (size_t) kept * d);
				r->sizes[kept] = r->sizes[c];
			}
			map[c] = kept++;
		}
	if (kept == k)
		return;
	for (int32_t &l : r->labels)
		l = map[l];
	r->init_centers.resize((size_t) kept * d);
	r->k = kept;
}

static void
fill_progress(pgkm_run *r, pgkm_progress *p, int32_t iteration, double inertia, int64_t moved)
{
	if (!p)
		return;
	p->run = r->run;
	p->iteration = iteration;
	p->inertia = inertia;
	p->moved = moved;
	p->elapsed_s = seconds_since(r->t0);
}

static void
step_init(pgkm_run *r, pgkm_progress *progress)
{
	const int32_t d = r->d;
	uint64_t	seed = derive_seed(r->opt.seed, r->run);
	double		potential = std::numeric_limits<double>::quiet_NaN();
	int32_t		k;
	switch (r->opt.init)
	{
		case PGKM_INIT_KMEANSPP:
			k = r->backend->kmeanspp(seed, r->opt.k, r->centers.data(), &potential);
			break;
		case PGKM_INIT_RANDOM:
			k = random_init(r, seed, r->centers.data());
			r->backend->set_centroids(r->centers.data(), k);
			break;
		default:
			k = r->opt.k;
			std::copy(r->given.begin(), r->given.end(), r->centers.begin());
			r->backend->set_centroids(r->centers.data(), k);
			break;
	}
	r->k = k;
	r->init_centers.assign(r->centers.begin(), r->centers.begin() + (size_t) k * d);
	r->iter = 0;
	r->repairs = 0;
	r->split_last.assign(k, 0);
	r->split_futile.assign(k, 0);
	r->converged = false;
	r->phase = Phase::Iterate;
	fill_progress(r, progress, 0, potential, 0);
}

static void
step_iterate(pgkm_run *r, pgkm_progress *progress)
{
	const int32_t d = r->d, k = r->k;
	const size_t kd = (size_t) k * d;
	std::copy(r->centers.begin(), r->centers.begin() + kd, r->old_centers.begin());
	IterStats	st;
	r->backend->iterate(&st, r->centers.data(), r->sizes.data());
	/*
	 * A run's first iteration compares with "no labels" (sklearn starts from
	 * -1), whatever a backend remembers from an earlier run of this n_init.
	 */
	if (r->iter == 0)
		st.moved = r->n;
	int32_t		repaired = repair_empty_clusters(r, r->centers.data(), r->sizes.data(), k);
	if (repaired > 0)
		r->backend->set_centroids(r->centers.data(), k);
	r->repairs += repaired;
	r->iter++;
	fill_progress(r, progress, r->iter, st.inertia, st.moved);
	if (repaired > 0)
	{
		/* split clusters need at least one Lloyd update before any stop test */
		if (r->iter >= r->opt.max_iter)
			r->phase = Phase::Final;
		return;
	}
	if (st.moved == 0)
	{
		r->converged = true;	/* strict convergence: labels unchanged */
		r->phase = Phase::Final;
		return;
	}
	double		shift = 0;
	for (size_t i = 0; i < kd; i++)
	{
		double		t = r->centers[i] - r->old_centers[i];
		shift += t * t;
	}
	if (shift <= r->tol_scaled)
	{
		r->converged = true;
		r->phase = Phase::Final;
	}
	else if (r->iter >= r->opt.max_iter)
		r->phase = Phase::Final;
}

static void
step_final(pgkm_run *r, pgkm_progress *progress)
{
	const int32_t d = r->d;
	double		inertia = 0;
	r->backend->assign(r->labels.data(), r->dist2.data(), r->sizes.data(), &inertia);
	drop_empty_clusters(r);
	const int32_t k = r->k;
	fill_progress(r, progress, r->iter, inertia, 0);
	if (!r->have_best || inertia < r->best_inertia)
	{
		r->have_best = true;
		r->best_inertia = inertia;
		r->best_k = k;
		r->best_iter = r->iter;
		r->best_converged = r->converged ? 1 : 0;
		r->best_run = r->run;
		r->best_repairs = r->repairs;
		r->best_centers.assign(r->centers.begin(), r->centers.begin() + (size_t) k * d);
		r->best_init = r->init_centers;
		r->best_sizes.assign(r->sizes.begin(), r->sizes.begin() + k);
		std::swap(r->best_labels, r->labels);
		std::swap(r->best_dist, r->dist2);
		if (r->labels.size() != (size_t) r->n)
			r->labels.resize(r->n);
		if (r->dist2.size() != (size_t) r->n)
			r->dist2.resize(r->n);
	}
	r->run++;
	if (r->run < r->n_runs)
	{
		r->phase = Phase::Init;
		return;
	}
	for (double &v : r->best_dist)
		v = std::sqrt(v);
	/* free what the result does not need */
	std::vector<int32_t>().swap(r->labels);
	std::vector<double>().swap(r->dist2);
	r->backend.reset();
	r->pool.reset();
	r->elapsed = seconds_since(r->t0);
	r->phase = Phase::Done;
}

extern "C" int
pgkm_run_step(pgkm_run *run, pgkm_progress *progress, char *err, size_t errlen)
{
	if (progress)
		memset(progress, 0, sizeof(*progress));
	return guarded(err, errlen, [&]() -> int {
		if (!run)
			throw EngineError(PGKM_ERR_INVALID, "run must not be NULL");
		try
		{
			switch (run->phase)
			{
				case Phase::Init:
					step_init(run, progress);
					return PGKM_OK;
				case Phase::Iterate:
					step_iterate(run, progress);
					return PGKM_OK;
				case Phase::Final:
					step_final(run, progress);
					return run->phase == Phase::Done ? PGKM_DONE : PGKM_OK;
				case Phase::Done:
					return PGKM_DONE;
				case Phase::Failed:
					throw EngineError(PGKM_ERR_INVALID, "this run failed or was interrupted; free it");
			}
		}
		catch (...)
		{
			run->phase = Phase::Failed;
			throw;
		}
		return PGKM_ERR_INTERNAL;
	});
}

extern "C" int
pgkm_run_result(const pgkm_run *r, pgkm_result *out)
{
	if (!r || !out || r->phase != Phase::Done)
		return PGKM_ERR_INVALID;
	memset(out, 0, sizeof(*out));
	out->n = r->n;
	out->d = r->d;
	out->k = r->best_k;
	out->k_requested = r->opt.k;
	out->centroids = r->best_centers.data();
	out->initial_centroids = r->best_init.data();
	out->labels = r->best_labels.data();
	out->distances = r->best_dist.data();
	out->sizes = r->best_sizes.data();
	out->inertia = r->best_inertia;
	out->iterations = r->best_iter;
	out->converged = r->best_converged;
	out->best_run = r->best_run;
	out->empty_cluster_repairs = r->best_repairs;
	out->elapsed_s = r->elapsed;
	out->device = r->device.c_str();
	out->device_detail = r->device_detail.c_str();
	out->fallback_reason = r->fallback_reason.c_str();
	return PGKM_OK;
}

extern "C" void
pgkm_run_free(pgkm_run *run)
{
	try
	{
		delete run;
	}
	catch (...)
	{
	}
}

/*
 * Upper bound of the engine's own allocations for this shape (the caller's
 * float buffer excluded): labels and distances of the current and best run,
 * k-means++ scratch, per-thread chunk tiles, centroid arrays, partial sums.
 * GPU memory is the plugin's business; the host side is the same.
 */
extern "C" int64_t
pgkm_estimate_bytes(int64_t n, int32_t d, const pgkm_options *opt)
{
	if (n < 0 || d < 1 || !opt)
		return 0;
	const double k = std::max<int32_t>(opt->k, 1);
	const double threads = resolve_threads(opt->n_threads);
	const double dn = (double) n, dd = d;
	double		b = 0;
	b += 2 * dn * (4 + 8);		/* labels + squared distances: current and best */
	b += dn * 4;				/* CPU backend's iteration labels */
	if (opt->init == PGKM_INIT_KMEANSPP)
	{
		const double trials = 2 + std::floor(std::log(k));
		b += dn * 4 + (dn / 1024 + 1) * 8 * (1 + trials);	/* D^2 (float), chunk sums, trial partials */
		if (trials <= d)
			b += dn * trials * 4;	/* every row's distance to each candidate */
		else
			b += threads * 1024 * trials * 4;
	}
	const double rows = (double) assign_chunk_rows(d, (int32_t) k);
	b += threads * rows * (dd + k) * 4;	/* per-thread chunk tile + products */
	b += threads * k * 8;		/* per-thread cluster counts */
	b += k * dd * (8 * 8 + 4 * 2) + k * 64;	/* fp64 centroid arrays, float copies, sizes */
	b += (dn / 65536 + 1) * dd * 8; /* statistics partials */
	b += (dn / 64 + 1) * 8;		/* per-chunk inertia */
	b += threads * (8 << 20);	/* thread stacks (virtual, counted anyway) */
	return (int64_t) std::ceil(b);
}

extern "C" int
pgkm_gpu_available(const char *plugin_path, char *info, size_t infolen)
{
	try
	{
		std::string why;
		const CudaPlugin *p = load_cuda_plugin(plugin_path, &why);
		if (!p)
		{
			copy_message(info, infolen, why);
			return 0;
		}
		copy_message(info, infolen, cuda_plugin_probe_info(p));
		return 1;
	}
	catch (...)
	{
		copy_message(info, infolen, "error while probing the GPU engine");
		return 0;
	}
}

extern "C" int32_t
pgkm_nearest(const double *centroids, int32_t k, int32_t d, const double *x, double *dist2)
{
	if (!centroids || !x || k < 1 || d < 1)
		return -1;
	int32_t		best = 0;
	double		bd = std::numeric_limits<double>::infinity();
	for (int32_t c = 0; c < k; c++)
	{
		double		s = 0;
		const double *cc = centroids + (size_t) c * d;
		for (int32_t j = 0; j < d; j++)
		{
			double		t = x[j] - cc[j];
			s += t * t;
		}
		if (s < bd)
		{
			bd = s;
			best = c;
		}
	}
	if (dist2)
		*dist2 = bd;
	return best;
}
