/*
 * engine_run.cpp: run the engine to completion (engine_run.h).
 */
#include "engine_run.h"

namespace pgkm_test
{

pgkm_options
cpu_options(int32_t k)
{
	pgkm_options o;
	pgkm_options_default(&o);
	o.k = k;
	o.device = PGKM_DEVICE_CPU;
	return o;
}

pgkm_options
given_options(int32_t method, const std::vector<double> &init, int32_t k, int max_iter, double tol,
			  int threads)
{
	pgkm_options o = cpu_options(k);
	o.method = method;
	o.init = PGKM_INIT_GIVEN;
	o.initial_centroids = init.data();
	o.max_iter = max_iter;
	o.tol = tol;
	o.n_threads = threads;
	return o;
}

/* Copies the finished run's result out. */
static void
copy_result(const pgkm_result &res, int32_t d, EngineResult &r)
{
	const int64_t n = res.n;
	r.k = res.k;
	r.k_requested = res.k_requested;
	r.iterations = res.iterations;
	r.converged = res.converged;
	r.repairs = res.empty_cluster_repairs;
	r.unfilled = res.unfilled_clusters;
	r.best_run = res.best_run;
	r.inertia = res.inertia;
	r.centroids.assign(res.centroids, res.centroids + (size_t) res.k * d);
	r.init.assign(res.initial_centroids, res.initial_centroids + (size_t) res.k * d);
	r.labels.assign(res.labels, res.labels + n);
	r.dist.assign(res.distances, res.distances + n);
	r.sizes.assign(res.sizes, res.sizes + res.k);
	r.cluster_inertia.assign(res.cluster_inertia, res.cluster_inertia + res.k);
	r.device = res.device;
	r.detail = res.device_detail;
	r.fallback = res.fallback_reason;
	r.method_used = res.method_used;
	r.distance_computations = res.distance_computations;
	r.distance_computations_lloyd = res.distance_computations_lloyd;
	if (const pgkm_kernel_result *kr = res.kernel)
	{
		r.kernel_init_labels.assign(kr->initial_labels, kr->initial_labels + n);
		r.kernel_members.assign(kr->members, kr->members + n);
		r.kernel_member_sizes.assign(kr->member_sizes, kr->member_sizes + res.k);
		r.kernel_norms.assign(kr->centroid_norms, kr->centroid_norms + res.k);
		r.kernel_gamma = kr->gamma;
		r.kernel_matrix = kr->matrix;
	}
}

EngineResult
run_engine(const std::vector<float> &x, int32_t d, const pgkm_options &o, pgkm_interrupt_fn intr,
		   void *ctx)
{
	EngineResult r;
	char		err[512] = "";
	pgkm_run   *h = nullptr;
	int64_t		n = (int64_t) (x.size() / (d > 0 ? d : 1));
	/* the run rounds its data in place to the sums' grid: its own copy, as the glue's buffer */
	std::vector<float> data(x);
	r.status = pgkm_run_create(data.data(), n, d, &o, intr, ctx, &h, err, sizeof(err));
	if (r.status != PGKM_OK)
	{
		r.err = err;
		if (h != nullptr)
		{
			r.status = PGKM_ERR_INTERNAL;
			r.err = "pgkm_run_create failed but returned a run: " + r.err;
			pgkm_run_free(h);
		}
		return r;
	}
	for (;;)
	{
		pgkm_progress p;
		int			st = pgkm_run_step(h, &p, err, sizeof(err));
		if (st == PGKM_OK || st == PGKM_DONE)
			r.progress.push_back(p);
		if (st == PGKM_OK)
			continue;
		r.status = st;
		r.err = err;
		break;
	}
	if (r.status == PGKM_DONE)
	{
		pgkm_result res;
		if (pgkm_run_result(h, &res) == PGKM_OK)
			copy_result(res, d, r);
		else
		{
			r.status = PGKM_ERR_INTERNAL;
			r.err = "pgkm_run_result failed after PGKM_DONE";
		}
	}
	pgkm_run_free(h);
	return r;
}

}							/* namespace pgkm_test */
