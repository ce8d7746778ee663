/*
 * kernel_device.h: the device half of kernel k-means. The step loop
 * (kernel_kmeans.cpp) owns the policy: initial partition, convergence,
 * empty-cluster repair, n_init. A KernelDevice owns the kernel matrix K
 * (n x n, K_il = kappa(x_i, x_l)), stored or recomputed tile by tile, and
 * does the passes over it. The CPU implements it in kernel_cpu.cpp; a GPU
 * implementation is one more class behind the same calls (the CUDA plugin's
 * kernel entry points, adapted as gpu_plugin.cpp adapts Lloyd's).
 *
 * Call order: build, then rows* and pass* in any order.
 *
 * One pass from a partition L (labels, sizes) is the whole of one iteration
 * (Popcorn's D = -2 K V^T + diag(K) + V z, in one read of K):
 *   S_ic   = sum_{l in L_c} K_il                       (n x k)
 *   C_c    = 1/|L_c|^2 sum_{i in L_c} S_ic  = ||c_c||^2  (the centroid norms)
 *   D_ic   = K_ii - 2 S_ic / |L_c| + C_c             (squared distances)
 *   label_i = argmin over clusters with |L_c| > 0 of D_ic, lowest c on ties
 * and what the loop needs for its convergence test:
 *   cross_c = sum over rows i newly labelled c of S_ic
 *           = sum_{i in new c, l in L_c} K_il.
 */
#ifndef PGKM_KERNEL_DEVICE_H
#define PGKM_KERNEL_DEVICE_H

#include "kernel_function.h"

#include <cstdint>
#include <memory>
#include <string>

namespace pgkm
{

class ThreadPool;

/* Where a pass writes (all caller-owned, sized n or k). */
struct KernelPass
{
	int32_t    *labels = nullptr;	/* n: the argmin */
	double	   *dist2 = nullptr;	/* n: D at that label, fp64 */
	double	   *norms = nullptr;	/* k: C_c, 0 for an empty cluster */
	double	   *cross = nullptr;	/* k */
	double		kernel_sum = 0; /* sum of every entry of K */
};

class KernelDevice
{
public:
	virtual		~KernelDevice() {}
	/* Builds K (stored) or checks that tiles can be recomputed; throws on failure. */
	virtual void build() = 0;
	/* K_ii (n, fp64, exactly the values the passes use). */
	virtual const double *diag() const = 0;
	/* Rows idx[0..count) of K into out (count x n float32), for k-means++. */
	virtual void rows(const int64_t *idx, int32_t count, float *out) = 0;
	/* One pass from the partition labels (n, in 0..k-1) with its sizes (k). */
	virtual void pass(const int32_t *labels, const int64_t *sizes, int32_t k, KernelPass *out) = 0;
	/* "stored" or "recomputed", and the seconds build() took. */
	virtual const char *matrix() const = 0;
	virtual double build_seconds() const = 0;
	virtual std::string detail() const = 0;
	virtual const char *name() const = 0;	/* "cpu" or "gpu" */
};

/*
 * The CPU kernel device over x (n x d float32, row-major) with column means
 * mean (the Gram products are taken on centred rows, then corrected exactly
 * in fp64, see kernel_cpu.cpp); pool owned by the caller.
 */
std::unique_ptr<KernelDevice> make_cpu_kernel_device(const float *x, int64_t n, int32_t d,
													 const double *mean, const KernelParams &p,
													 bool stored, int32_t kmax,
													 ThreadPool *pool);

/* Bytes the CPU kernel device allocates (stored K included when stored). */
double		cpu_kernel_device_bytes(int64_t n, int32_t d, int32_t k, int threads, bool stored);

}							/* namespace pgkm */

#endif							/* PGKM_KERNEL_DEVICE_H */
