/*
 * kernel_plan.h: what a kernel k-means run does on the device, decided
 * before anything is allocated: the settings from the caller's kernel
 * config, stored or streamed K and at which precision, the Gram product
 * (GEMM or SYRK, fp32 or 3xTF32), the panel, chunk and tile sizes, and every
 * byte of device memory, so that a run that fits no mode is refused with the
 * numbers. Host-only (no CUDA call): tests/gpu/test_kernel_plan.cpp checks it
 * without a GPU. DESIGN.md ("Kernel k-means") says why each number is what it is.
 */
#ifndef PGKM_CUDA_KERNEL_PLAN_H
#define PGKM_CUDA_KERNEL_PLAN_H

#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"
#include "plan.h"

#include <cstdint>

namespace pgkm_cuda
{

/*
 * n / d above which the full GEMM builds K (below: SYRK). H100, n = 50k:
 * SYRK 1.9x faster at n/d = 5, 1.3x at 200, 1.07x at 1000; n = 10k: GEMM
 * 1.1x faster at 500 (bench/RESULTS.md, kernel k-means on the GPU).
 */
static constexpr double KBUILD_GEMM_MIN_RATIO = 500;
/* d from which a stored K's product runs as 3xTF32 (a streamed one: KSTREAM_3XTF32_MIN_D). */
static constexpr int KBUILD_3XTF32_MIN_D = 512;
static constexpr int KSTREAM_3XTF32_MIN_D = 256;

/* Launch geometry the plan and the kernels share. */
static constexpr int KPASS_THREADS = 256;	/* 8 warps per block split a chunk's rows */
static constexpr int KPASS_LOADS = 2;		/* 16-byte loads per lane and row */
static constexpr int KMAP_TILE = 32;		/* the build's map + mirror tile */

/* The caller's kernel config, checked (NULL is refused: the kernel needs its parameters). */
struct KernelSettings
{
	int			device_ordinal = -1;
	int64_t		memory_limit = 0;
	int			kernel = PGKM_KERNEL_RBF;
	int			degree = 3;
	double		gamma = 1, coef0 = 1;
	pgkm_cuda_kmatrix matrix = PGKM_CUDA_KMATRIX_AUTO;
	pgkm_cuda_kprecision precision = PGKM_CUDA_KPREC_FP32;
	pgkm_cuda_kbuild build = PGKM_CUDA_KBUILD_AUTO;
	pgkm_cuda_product product = PGKM_CUDA_PRODUCT_AUTO;
	int			chunk_rows = 0;
	int64_t		tile_bytes = 32LL << 20;
};

/* Throws Failure {PGKM_ERR_INVALID} for a value out of range. */
KernelSettings kernel_settings_from_config(const pgkm_cuda_kernel_config *cfg);

struct KernelPlan
{
	bool		stored = true;
	pgkm_cuda_kprecision precision = PGKM_CUDA_KPREC_FP32;
	int			elem_bytes = 4;	/* of a stored K */
	bool		syrk = true;	/* the build's product shape */
	bool		tf32x3 = false; /* the product: 3xTF32 on the tensor cores, else fp32 */
	int			xw = 0;			/* floats per row of the device copies: dp, or 3 dp for a streamed
								 * 3xTF32 run ([hi lo hi] x [hi hi lo]: one product of depth 3 dp) */
	int64_t		n = 0;
	int			d = 0, dp = 0;	/* features, and padded to 8 in the device copies */
	int			kmax = 0;
	int64_t		ld = 0;			/* row stride of K and of a build panel (elements, whole pass strips) */
	int64_t		panel_rows = 0; /* build: rows per Gram product */
	int64_t		chunk_rows = 0; /* pass: rows of one cluster one block sums */
	int64_t		max_chunks = 0; /* ceil(n / chunk_rows) + kmax */
	int64_t		tile_rows = 0, tile_cols = 0;	/* streamed: sorted rows x columns of a tile */
	int64_t		partial_cols = 0;	/* columns of the chunk partials (n padded, or a tile's) */
	int64_t		kpp_rows = 0;	/* rows() staging: 2 + ln kmax rows */
	int64_t		device_bytes = 0;	/* peak */
	int64_t		stored_bytes = 0;	/* a stored run's peak at this precision */
	int64_t		streamed_bytes = 0; /* a streamed run's peak */
	int64_t		budget = 0;
};

/* The bytes of each buffer, in kernel_buffers.cu's order (the plan sums them). */
struct KernelBytes
{
	int64_t		mean, x, xc, xlo, xs, stats, labels, perm, chunks, S, partial, rowsum, norms, clusters, out_labels,
				dist2, w, flag, rows, K, panel, tile;
	int64_t		total() const;
};
KernelBytes kernel_bytes(const KernelPlan &p);

/* The plan for this budget; Failure {PGKM_ERR_NOMEM} with the numbers and a hint when nothing fits. */
KernelPlan	make_kernel_plan(int64_t n, int d, int kmax, const KernelSettings &s, const DeviceLimits &dev,
							 int64_t budget);

/* Is the build's product the upper triangle (SYRK) for this shape? */
bool		kernel_build_syrk(int64_t n, int d, pgkm_cuda_kbuild want);

}							/* namespace pgkm_cuda */

#endif
