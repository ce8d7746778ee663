/*
 * plan.h: what a run will do on the device, decided before anything is
 * allocated: the settings taken from the caller's config, the assignment
 * path, the GEMM product, whether the data is resident or streamed and in
 * which chunks, launch geometry, and every byte of device memory it holds.
 *
 * Host-only arithmetic with no CUDA call, so tests/gpu/test_plan.cpp checks
 * it on a machine without a GPU. DESIGN.md says why each number is what it is.
 */
#ifndef PGKM_CUDA_PLAN_H
#define PGKM_CUDA_PLAN_H

#include "pgkm_cuda_api.h"

#include <cstddef>
#include <cstdint>

namespace pgkm_cuda
{

/* Assignment paths, picked by shape (DESIGN.md, "Paths"). */
enum Path
{
	PATH_DIRECT,				/* d < 16: fused kernel, sum((x-c)^2) in fp32 */
	PATH_DOT,					/* 16 <= d <= 64: fused kernel, ||c'||^2 - 2 x'.c' */
	PATH_GEMM,					/* cuBLAS per row tile + argmin kernel */
	PATH_TILED					/* tiled product + argmin, then the sorted update */
};

/* Product of the GEMM path. */
enum Product
{
	PRODUCT_FP32,				/* SGEMM without tensor cores */
	PRODUCT_TF32,				/* one TF32 product: tests' negative control only */
	PRODUCT_3XTF32				/* x_hi c_hi + x_hi c_lo + x_lo c_hi, fp32-accurate */
};

/* Shape limits of the paths. */
static constexpr int FUSED_MAX_D = 64;		/* rows of the fused kernel live in registers */
static constexpr int DIRECT_MAX_D = 15;		/* the CPU engine's exact-form range */
static constexpr int TILED_MIN_D = 32;		/* below, the fused kernel is faster */
static constexpr int TILED_MAX_K = 256;		/* default split with the GEMM path */
static constexpr int TILED_MAX_D = 1024;	/* the sorted update holds d/32 columns per lane */
static constexpr int TILED_FORCED_MAX_K = 1024;	/* largest k a forced TILED run takes */
static constexpr int GEMM_3XTF32_MIN = 512;	/* 3xTF32 where d and k are both this large */
static constexpr int TILED_MASK_MAX_K = 64;	/* TILED lists an open row's candidates as one 64-bit mask */

/* Launch geometry the plan needs (the kernels use the same constants). */
static constexpr int PASS_THREADS = 256;	/* fused and GEMM argmin kernels */
static constexpr int ARGMIN_ROWS_PER_BLOCK = PASS_THREADS / 32;	/* one warp per row */
static constexpr int KPP_THREADS = 256;		/* k-means++ kernels */

/* Per-device numbers the plan depends on. */
struct DeviceLimits
{
	int			sms = 0;
	int			smem_per_sm = 0;	/* bytes of shared memory per SM */
	int			smem_optin = 0; /* largest dynamic shared memory per block */
};

/* The caller's config, checked (pgkm_cuda_config; NULL = production defaults). */
struct Settings
{
	bool		deterministic = true;
	int			device_ordinal = -1;
	int64_t		memory_limit = 0;	/* bytes; <= 0: what the device has free */
	pgkm_cuda_path force_path = PGKM_CUDA_PATH_AUTO;
	pgkm_cuda_product product = PGKM_CUDA_PRODUCT_AUTO;
	bool		global_sums = false;
	int			gemm_blocks_per_sm = 4;
	int64_t		gemm_tile_bytes = 16LL << 20;
	/* config.method: the bounded method the plan makes room for where it can (set_method's other choice) */
	int32_t		method = PGKM_CUDA_METHOD_LLOYD;
};

/* Throws Failure {PGKM_ERR_INVALID} for a value out of range. */
Settings	settings_from_config(const pgkm_cuda_config *cfg);

/* The fused kernel instance of a shape: features held per row (DP), rows per thread. */
struct FusedShape
{
	int			dp;
	int			ppt;
	bool		direct;
};
FusedShape	fused_shape(Path path, int d);

struct Plan
{
	Path		path = PATH_DIRECT;
	Product		product = PRODUCT_FP32;
	int			x_copies = 1;	/* 2 with 3xTF32: x_lo is kept beside x */
	bool		resident = false;
	int64_t		budget = 0;		/* bytes of device memory the run may hold */
	int64_t		chunk_rows = 0; /* rows per pass launch (resident) or per copy (streamed) */
	int64_t		nchunks = 0;
	int64_t		tile_rows = 0;	/* GEMM: rows per cuBLAS product */
	int			grid = 0;		/* blocks per launch (fused, TILED update) or per tile (GEMM) */
	int64_t		nslots = 0;		/* inertia partials per pass */
	int64_t		kpp_rows = 0;	/* k-means++ sample when the budget holds it */
	int64_t		pass_bytes = 0; /* device memory of the pass: every buffer the run holds */
	int64_t		loan_bytes = 0; /* streamed: of which the buffers each pass fills afresh
								 * (chunk copies, GEMM tile, distances), lent to init */
	bool		hamerly = false;	/* iterate() prunes with Hamerly's bounds (hamerly.cu): asked
									 * for, resident with its bounds, d <= TILED_MAX_D */
	bool		yinyang = false;	/* and with Yinyang's group bounds (yinyang.cu): asked for, fits */
	bool		elkan = false;	/* iterate() prunes with Elkan's bounds (elkan.cu), as hamerly */
	bool		sort = false;	/* with Wu & Hong's (sort.cu), as hamerly, k^2 <= SORT_MAX_PAIRS */
};

/* The bounded pgkm_cuda_method whose state the plan holds; LLOYD when none. */
inline int32_t
planned_method(const Plan &p)
{
	return p.yinyang ? PGKM_CUDA_METHOD_YINYANG : p.hamerly ? PGKM_CUDA_METHOD_HAMERLY :
		p.elkan ? PGKM_CUDA_METHOD_ELKAN : p.sort ? PGKM_CUDA_METHOD_SORT : PGKM_CUDA_METHOD_LLOYD;
}

inline bool
bounded_plan(const Plan &p)
{
	return planned_method(p) != PGKM_CUDA_METHOD_LLOYD;
}

/*
 * Path by shape, or the forced one (Failure when the shape cannot take it).
 * Crossovers measured on the H100 (bench/RESULTS.md sections 3 and 8).
 */
Path		pick_path(int d, int k, pgkm_cuda_path force);

/* The whole plan; Failure {PGKM_ERR_NOMEM} when the budget cannot hold a pass. */
Plan		make_plan(int64_t n, int d, int k, const Settings &s, const DeviceLimits &dev, int64_t budget);

/* k-means++: candidates per step, sample rows, device bytes of a sample of rows. */
int			kpp_candidates(int k);
int64_t		kpp_sample_rows(int64_t n, int k);
int64_t		kpp_scratch_bytes(int64_t rows, int d, int k, int sms, bool copy_rows);
/* The largest sample of at most want rows whose scratch fits in avail bytes (0 if none). */
int64_t		kpp_rows_within(int64_t want, int64_t avail, int d, int k, int sms, bool copy_rows);

/* Hamerly: device bytes of its bounds, lists of rows to label, centroid geometry. */
int64_t		hamerly_bytes(int64_t n, int d, int k);

/* Yinyang: groups of YY_GROUP centroids, one step of the labelling kernels each (hamerly_label.cu). */
constexpr int YY_GROUP = 64;
int			yinyang_groups(int k);
/* Yinyang: device bytes beyond hamerly_bytes (group bounds, the centroids' order, the list's sort). */
int64_t		yinyang_bytes(int64_t n, int k);
/* Yinyang: the radix sort's scratch for n rows (yinyang.cu checks cub's own count against it). */
int64_t		yinyang_sort_bytes(int64_t n);

/* Elkan: device bytes of its k bounds per row, reference centroids, geometry, inter-centroid bounds. */
int64_t		elkan_bytes(int64_t n, int d, int k);

/* Sort: device bytes of the ranked inter-centroid bounds and the segmented sort's scratch (counted). */
static constexpr int64_t SORT_MAX_PAIRS = INT32_MAX;	/* the segmented sort counts items in int */
int64_t		sort_bytes(int k);
int64_t		sort_scratch_bytes(int k);

/* TILED: bytes per chunk row of the list of rows to decide (the row, and its candidates' mask when k <= 64). */
int64_t		tiled_list_row_bytes(int k);

/* Per-block private sums: bytes, and whether they fit beside other_smem at 2 blocks per SM. */
size_t		priv_bytes(int d, int k);
bool		priv_fits(const Settings &s, const DeviceLimits &dev, int d, int k, size_t other_smem);

}							/* namespace pgkm_cuda */

#endif
