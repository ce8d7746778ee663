/*
 * assign_methods.cpp: which CpuAssign runs a pgkm_method, the methods' SQL
 * names, and the memory each keeps (for pgkm_estimate_bytes).
 */
#include "auto_assign.h"
#include "bounded_assign.h"
#include "thread_pool.h"

#include <algorithm>

namespace pgkm
{

std::unique_ptr<CpuAssign>
make_cpu_assign(const pgkm_options *opt, const float *x, int64_t n, int32_t d, int32_t kmax,
				const double *mean, ThreadPool *pool)
{
	const int32_t method = opt ? opt->method : PGKM_METHOD_LLOYD;
	/* the float error bound of the pruned methods needs d <= 2^20: Lloyd beyond */
	if (method == PGKM_METHOD_LLOYD || !ExactMargins::usable(d))
		return make_lloyd_assign(x, d, kmax, mean, pool->size());
	if (method == PGKM_METHOD_AUTO)
		return make_auto_assign(opt, x, n, d, kmax, mean, pool);
	return make_bounded_assign(method, x, n, d, kmax, mean, pool);
}

std::unique_ptr<BoundedAssign>
make_bounded_assign(int32_t method, const float *x, int64_t n, int32_t d, int32_t kmax,
					const double *mean, ThreadPool *pool)
{
	switch (method)
	{
		case PGKM_METHOD_ELKAN:
			return make_elkan_assign(x, n, d, kmax, mean, pool);
		case PGKM_METHOD_HAMERLY:
			return make_hamerly_assign(x, n, d, kmax, mean, pool);
		case PGKM_METHOD_YINYANG:
			return make_yinyang_assign(x, n, d, kmax, mean, pool);
		default:
			return make_sort_assign(x, n, d, kmax, mean, pool);
	}
}

bool
method_on_gpu(int32_t method, std::string *why)
{
	if (method == PGKM_METHOD_LLOYD || method == PGKM_METHOD_AUTO || method == PGKM_METHOD_HAMERLY ||
		method == PGKM_METHOD_YINYANG || method == PGKM_METHOD_ELKAN || method == PGKM_METHOD_SORT)
		return true;
	*why = std::string("method \"") + pgkm_method_name(method) + "\" has no GPU centroid pass; the GPU engine runs "
		"\"lloyd\", \"hamerly\", \"yinyang\", \"elkan\", \"sort\" and \"auto\"";
	return false;
}

/*
 * On top of Lloyd's: labels, the geometry (fp64 current and reference
 * centroids, float rows and blocks, drifts), per-thread scratch, and each
 * method's bounds.
 */
double
method_state_bytes(int32_t method, int64_t n, int32_t d, int32_t k, int threads)
{
	if (method == PGKM_METHOD_LLOYD)
		return 0;
	const double dn = (double) n, dk = k, kp = (double) yinyang_groups(k) * BLOCK;
	/* + the tiled kernel's panels and, per thread, its scratch for dense passes (generous) */
	double		b = dn * 4 + dk * d * 16 + kp * d * 12 + dk * 64 + threads * (kp * 4 + d * 4 + 4096)
		+ kp * 8 + threads * (std::min(d, 512) * 64.0 * 4 + 1024.0 * 64 * 4 + 256.0 * 64 + 64.0 * d * 4);
	switch (method)
	{
		case PGKM_METHOD_ELKAN:
			return b + dn * (8 + 4 * dk) + dk * dk * 4 + threads * (dk + 8);
		case PGKM_METHOD_HAMERLY:
			return b + dn * 16;
		case PGKM_METHOD_YINYANG:	/* + per-pass drift history, capped */
			/* + per thread a batch of 32 rows' values and centred rows */
			return b + dn * (17 + 4.0 * yinyang_groups(k)) + threads * (kp * 140 + 32.0 * d * 4)
				+ 4096.0 * 16 * (k / 16 + 2);
		default:
			return b + dk * dk * 12 + threads * dk * 16;	/* sort */
	}
}

}							/* namespace pgkm */

extern "C" const char *
pgkm_method_name(int32_t method)
{
	switch (method)
	{
		case PGKM_METHOD_LLOYD:
			return "lloyd";
		case PGKM_METHOD_ELKAN:
			return "elkan";
		case PGKM_METHOD_HAMERLY:
			return "hamerly";
		case PGKM_METHOD_YINYANG:
			return "yinyang";
		case PGKM_METHOD_SORT:
			return "sort";
		case PGKM_METHOD_AUTO:
			return "auto";
		case PGKM_METHOD_KERNEL:
			return "kernel";
		default:
			return nullptr;
	}
}
