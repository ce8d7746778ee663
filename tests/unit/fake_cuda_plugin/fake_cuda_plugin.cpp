/*
 * fake_cuda_plugin.cpp: a CPU stand-in for pg_kmeans_cuda.so that implements
 * the plugin ABI (cuda/pgkm_cuda_api.h) with the fp64 reference of
 * tests/common/reference.h, so the engine's GPU path (dlopen, ABI checks,
 * host-side Lloyd driver, empty-cluster repair, fallbacks, interrupts) is
 * tested on machines without a GPU.
 * Environment switches (read at each call) inject failures and pass times:
 *   PGKM_FAKE_PROBE_FAIL=1   probe reports no device
 *   PGKM_FAKE_CREATE_FAIL=1  create fails with PGKM_ERR_NOMEM
 *   PGKM_FAKE_NO_BOUNDS=1    the plan holds no bounds: every pass is Lloyd's
 *   PGKM_FAKE_PASS_MS=L,B    iterate() sleeps L ms in Lloyd's passes, B ms in bounded ones
 */
#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"	/* status codes */
#include "reference.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace
{

struct Run
{
	const float *x;
	int64_t		n;
	int32_t		d, k;
	pgkm_cuda_config cfg;
	std::vector<double> c;
	std::vector<int32_t> labels;
	int32_t		method;			/* of the next pass (set_method) */
};

/* What iterate() runs for the method asked: Lloyd's passes when the plan holds no bounds. */
int32_t
method_run(const Run *r)
{
	return getenv("PGKM_FAKE_NO_BOUNDS") ? PGKM_CUDA_METHOD_LLOYD : r->method;
}

/* A pass of PGKM_FAKE_PASS_MS's length for its method. */
void
pass_sleep(int32_t method)
{
	const char *v = getenv("PGKM_FAKE_PASS_MS");
	double		lloyd_ms = 0, bounded_ms = 0;
	if (!v || sscanf(v, "%lf,%lf", &lloyd_ms, &bounded_ms) != 2)
		return;
	const double ms = method == PGKM_CUDA_METHOD_LLOYD ? lloyd_ms : bounded_ms;
	std::this_thread::sleep_for(std::chrono::microseconds((int64_t) (ms * 1000)));
}

void
msg(char *err, size_t len, const char *m)
{
	if (err && len)
	{
		strncpy(err, m, len - 1);
		err[len - 1] = '\0';
	}
}

bool
interrupted(Run *r)
{
	return r->cfg.interrupt && r->cfg.interrupt(r->cfg.interrupt_ctx) != 0;
}

/* Nearest centroid of row i in fp64 (the reference's), its squared distance in *best. */
int32_t
nearest(const Run *r, int64_t i, double *best)
{
	return pgkm_test::nearest_fp64(r->x + i * r->d, r->c.data(), r->k, r->d, best);
}

int
probe(char *info, size_t len)
{
	if (getenv("PGKM_FAKE_PROBE_FAIL"))
	{
		msg(info, len, "fake: no CUDA device");
		return PGKM_ERR_GPU_UNAVAILABLE;
	}
	msg(info, len, "Fake GPU (CPU stand-in), 1 GiB");
	return 0;
}

int
create(const float *x, int64_t n, int32_t d, int32_t k, const pgkm_cuda_config *cfg,
	   void **handle, char *err, size_t len)
{
	if (getenv("PGKM_FAKE_CREATE_FAIL"))
	{
		msg(err, len, "fake: out of device memory");
		return PGKM_ERR_NOMEM;
	}
	Run		   *r = new Run {x, n, d, k, *cfg, std::vector<double>((size_t) k * d), std::vector<int32_t>(n, -1),
		cfg->method};
	*handle = r;
	return 0;
}

/* Not k-means++: distinct rows in order from seed % n (enough for the driver's contract). */
int
init_kmeanspp(void *h, uint64_t seed, double *centroids, int32_t *k_found, char *, size_t)
{
	Run		   *r = (Run *) h;
	std::set<std::vector<float>> seen;
	int32_t		found = 0;
	for (int64_t s = 0; s < r->n && found < r->k; s++)
	{
		int64_t		i = (int64_t) ((seed + (uint64_t) s) % (uint64_t) r->n);
		std::vector<float> row(r->x + i * r->d, r->x + (i + 1) * r->d);
		if (!seen.insert(row).second)
			continue;
		for (int32_t j = 0; j < r->d; j++)
			centroids[(size_t) found * r->d + j] = row[j];
		found++;
	}
	*k_found = found;
	std::copy(centroids, centroids + (size_t) found * r->d, r->c.begin());
	return 0;
}

int
set_centroids(void *h, const double *centroids, char *, size_t)
{
	Run		   *r = (Run *) h;
	std::copy(centroids, centroids + (size_t) r->k * r->d, r->c.begin());
	return 0;
}

int
iterate(void *h, pgkm_cuda_iter *out, double *centroids, int64_t *sizes, char *err, size_t len)
{
	Run		   *r = (Run *) h;
	if (interrupted(r))
	{
		msg(err, len, "fake: interrupted");
		return PGKM_INTERRUPTED;
	}
	const int32_t k = r->k;
	out->inertia = 0;
	out->moved = 0;
	out->distances = -1;		/* every distance, whatever the method asked for */
	out->method = method_run(r);
	pass_sleep(out->method);
	for (int64_t i = 0; i < r->n; i++)
	{
		double		best;
		int32_t		l = nearest(r, i, &best);
		out->inertia += best;
		out->moved += l != r->labels[i];
		r->labels[i] = l;
	}
	pgkm_test::ref_update(r->x, r->n, r->d, r->labels.data(), k, r->c.data(), sizes);
	std::copy(r->c.begin(), r->c.end(), centroids);
	return 0;
}

int
assign(void *h, int32_t *labels, double *d2, int64_t *sizes, double *inertia, char *err, size_t len)
{
	Run		   *r = (Run *) h;
	if (interrupted(r))
	{
		msg(err, len, "fake: interrupted");
		return PGKM_INTERRUPTED;
	}
	std::fill(sizes, sizes + r->k, 0);
	*inertia = 0;
	for (int64_t i = 0; i < r->n; i++)
	{
		double		best;
		labels[i] = nearest(r, i, &best);
		d2[i] = best;
		sizes[labels[i]]++;
		*inertia += best;
	}
	return 0;
}

void
destroy(void *h)
{
	delete (Run *) h;
}

int
set_method(void *h, int32_t method, int32_t *runs, char *err, size_t len)
{
	Run		   *r = (Run *) h;
	if (method != PGKM_CUDA_METHOD_LLOYD && method != r->cfg.method)
	{
		msg(err, len, "fake: not the run's method");
		return PGKM_ERR_INVALID;
	}
	r->method = method;
	*runs = method_run(r);
	return 0;
}

/* no kernel k-means: its entry points NULL (the engine runs it on the CPU) */
const pgkm_cuda_api api = {PGKM_CUDA_ABI_VERSION, sizeof(pgkm_cuda_api), probe, create, init_kmeanspp,
	set_centroids, iterate, assign, destroy, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, set_method};

}							/* namespace */

extern "C" __attribute__((visibility("default"))) const pgkm_cuda_api *
pgkm_cuda_get_api(void)
{
	return &api;
}
