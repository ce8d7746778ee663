/*
 * plan.cpp: settings, path choice and the device memory plan of a run
 * (plan.h). Every device allocation the run makes is counted here, byte for
 * byte as the allocator counts it, so a plan that fits the budget never
 * fails it later.
 */
#include "plan.h"

#include "failure.h"

#include <algorithm>
#include <cmath>

namespace pgkm_cuda
{

Settings
settings_from_config(const pgkm_cuda_config *cfg)
{
	Settings	s;
	if (!cfg)
		return s;
	s.deterministic = cfg->deterministic != 0;
	s.device_ordinal = cfg->device_ordinal;
	s.memory_limit = cfg->memory_limit;	/* <= 0: what the device has free */
	if (cfg->force_path < PGKM_CUDA_PATH_AUTO || cfg->force_path > PGKM_CUDA_PATH_GEMM)
		fail(PGKM_ERR_INVALID, "unknown GPU path %d", cfg->force_path);
	s.force_path = (pgkm_cuda_path) cfg->force_path;
	if (cfg->gemm_product < PGKM_CUDA_PRODUCT_AUTO || cfg->gemm_product > PGKM_CUDA_PRODUCT_TF32)
		fail(PGKM_ERR_INVALID, "unknown GEMM product %d", cfg->gemm_product);
	s.product = (pgkm_cuda_product) cfg->gemm_product;
	if (cfg->sums != PGKM_CUDA_SUMS_AUTO && cfg->sums != PGKM_CUDA_SUMS_GLOBAL)
		fail(PGKM_ERR_INVALID, "unknown sums mode %d", cfg->sums);
	s.global_sums = cfg->sums == PGKM_CUDA_SUMS_GLOBAL;
	if (cfg->gemm_blocks_per_sm < 0 || cfg->gemm_blocks_per_sm > 8)
		fail(PGKM_ERR_INVALID, "GEMM argmin blocks per SM must be 1..8 (got %d)", cfg->gemm_blocks_per_sm);
	if (cfg->gemm_blocks_per_sm > 0)
		s.gemm_blocks_per_sm = cfg->gemm_blocks_per_sm;
	if (cfg->gemm_tile_mb < 0 || cfg->gemm_tile_mb > 1024)
		fail(PGKM_ERR_INVALID, "GEMM tile must be 1..1024 MB (got %d)", cfg->gemm_tile_mb);
	if (cfg->gemm_tile_mb > 0)
		s.gemm_tile_bytes = (int64_t) cfg->gemm_tile_mb << 20;
	if (cfg->method != PGKM_CUDA_METHOD_LLOYD && cfg->method != PGKM_CUDA_METHOD_HAMERLY &&
		cfg->method != PGKM_CUDA_METHOD_YINYANG && cfg->method != PGKM_CUDA_METHOD_ELKAN &&
		cfg->method != PGKM_CUDA_METHOD_SORT)
		fail(PGKM_ERR_INVALID, "unknown GPU method %d", cfg->method);
	s.method = cfg->method;
	return s;
}

FusedShape
fused_shape(Path path, int d)
{
	if (path == PATH_DIRECT)
	{
		if (d <= 2)
			return {2, 8, true};
		if (d <= 4)
			return {4, 8, true};
		if (d <= 8)
			return {8, 4, true};
		return {16, 4, true};
	}
	if (d <= 16)
		return {16, 4, false};
	if (d <= 32)
		return {32, 2, false};
	return {64, 1, false};
}

Path
pick_path(int d, int k, pgkm_cuda_path force)
{
	switch (force)
	{
		case PGKM_CUDA_PATH_GEMM:
			return PATH_GEMM;
		case PGKM_CUDA_PATH_TILED:
			if (d > TILED_MAX_D || k > TILED_FORCED_MAX_K)
				fail(PGKM_ERR_INVALID, "the TILED path needs d <= %d and k <= %d (got d = %d, k = %d)",
					 TILED_MAX_D, TILED_FORCED_MAX_K, d, k);
			return PATH_TILED;
		case PGKM_CUDA_PATH_FUSED:
			if (d > FUSED_MAX_D)
				fail(PGKM_ERR_INVALID, "the fused path needs d <= %d (got %d)", FUSED_MAX_D, d);
			return d <= DIRECT_MAX_D ? PATH_DIRECT : PATH_DOT;
		case PGKM_CUDA_PATH_AUTO:
			break;
	}
	if (d <= DIRECT_MAX_D)
		return PATH_DIRECT;
	/* at d >= 768 cuBLAS beat TILED from k = 128 (27 vs 32 ms at 4M rows; tied at k = 64) */
	if (d >= TILED_MIN_D && d <= TILED_MAX_D && k <= TILED_MAX_K && !(d >= 768 && k > 64))
		return PATH_TILED;
	if (d <= FUSED_MAX_D)		/* fused beat cuBLAS + argmin up to d = 64 at k = 64 and 1024 */
		return PATH_DOT;
	return PATH_GEMM;
}

/*
 * 3xTF32 where the product dominates (d, k >= 512: 10M x 768 x 1024 266 vs
 * 382 ms); it lost where the argmin and tiles dominate (4M x 128 x 1024:
 * 54 vs 44 ms), bench/RESULTS.md section 8.
 */
static Product
pick_product(Path path, int d, int k, pgkm_cuda_product want)
{
	if (path != PATH_GEMM)
		return PRODUCT_FP32;
	switch (want)
	{
		case PGKM_CUDA_PRODUCT_FP32:
			return PRODUCT_FP32;
		case PGKM_CUDA_PRODUCT_3XTF32:
			return PRODUCT_3XTF32;
		case PGKM_CUDA_PRODUCT_TF32:
			return PRODUCT_TF32;
		case PGKM_CUDA_PRODUCT_AUTO:
			break;
	}
	return d >= GEMM_3XTF32_MIN && k >= GEMM_3XTF32_MIN ? PRODUCT_3XTF32 : PRODUCT_FP32;
}

int
kpp_candidates(int k)
{
	return std::min(16, 2 + (int) std::log((double) k));
}

/* ns = min(n, max(131072, 128 k)) rows, at most 4M (DESIGN.md, "k-means++"). */
int64_t
kpp_sample_rows(int64_t n, int k)
{
	return std::min<int64_t>(n, std::min<int64_t>(1LL << 22, std::max<int64_t>(131072, 128LL * k)));
}

/* The allocator counts a zero-byte request as 16 bytes. */
static int64_t
counted(int64_t bytes)
{
	return bytes == 0 ? 16 : bytes;
}

/* Sample rows (if copied), min distances, block sums, candidate partials, exchange block. */
int64_t
kpp_scratch_bytes(int64_t rows, int d, int k, int sms, bool copy_rows)
{
	const int64_t L = kpp_candidates(k);
	const int64_t blocks = (rows + KPP_THREADS - 1) / KPP_THREADS;
	const int64_t nb = std::min<int64_t>(1024, blocks);
	const int64_t g = std::min<int64_t>(2LL * sms, blocks);
	int64_t		b = 0;
	if (copy_rows)
		b += counted(rows * d * 4);
	b += counted(rows * 8) + counted(nb * 8) + counted(L * g * 8) + counted((2 * L + 1) * 8 + L * 8);
	return b;
}

int64_t
kpp_rows_within(int64_t want, int64_t avail, int d, int k, int sms, bool copy_rows)
{
	/* the scratch grows with the rows: bisect for the largest sample that fits */
	if (kpp_scratch_bytes(want, d, k, sms, copy_rows) <= avail)
		return want;
	int64_t		lo = 0, hi = want;	/* lo fits (or is 0), hi does not */
	while (hi - lo > 1)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		(kpp_scratch_bytes(mid, d, k, sms, copy_rows) <= avail ? lo : hi) = mid;
	}
	return lo;
}

/*
 * What buffers.cu allocates for Hamerly, in its order: the lower bounds (n
 * fp64), the rows to label (n int32), the centroids the bounds refer to
 * (k x d fp64), drifts and half-distances (2k fp64), the lists' counts,
 * float centroids (k x d), the rows left to fp64 (n int32).
 */
int64_t
hamerly_bytes(int64_t n, int d, int k)
{
	const int64_t kd = (int64_t) k * d;
	return counted(n * 8) + counted(n * 4) + counted(kd * 8) + counted((int64_t) k * 16) + counted(16) +
		counted(kd * 4) + counted(n * 4);
}

/*
 * What buffers.cu adds for Yinyang (Hamerly's lower bounds hold the rows'
 * upper bounds then), in its order: the group bounds (n x t fp64), the
 * centroids' order and positions (2k int32), the listed rows' sort (two
 * key buffers, a second list, the radix sort's scratch).
 */
int64_t
yinyang_bytes(int64_t n, int k)
{
	return counted(n * yinyang_groups(k) * 8) + counted((int64_t) k * 8) + 3 * counted(n * 4) +
		counted(yinyang_sort_bytes(n));
}

int64_t
yinyang_sort_bytes(int64_t n)
{
	return n + (1LL << 20);		/* cub's DoubleBuffer radix sort of n int pairs: its tiles' digit counts */
}

int
yinyang_groups(int k)
{
	return (k + YY_GROUP - 1) / YY_GROUP;
}

/*
 * Elkan (elkan.cu), in buffers.cu's order: k float lower bounds per row, the
 * centroids they refer to (k x d fp64), drifts and half-distances (2k fp64),
 * the distance count, the k x k inter-centroid lower bounds (float).
 */
int64_t
elkan_bytes(int64_t n, int d, int k)
{
	const int64_t kd = (int64_t) k * d, kk = (int64_t) k * k;
	return counted(n * k * 4) + counted(kd * 8) + counted((int64_t) k * 16) + counted(16) + counted(kk * 4);
}

/*
 * Sort (sort.cu), in buffers.cu's order: the distance count, the k x k
 * inter-centroid lower bounds and their centroid numbers, each twice (the
 * segmented sort's double buffer), the rows' offsets, and the sort's
 * scratch, counted as SORT_SCRATCH (buffers.cu checks CUB's own size
 * against it).
 */
int64_t
sort_bytes(int k)
{
	const int64_t kk = (int64_t) k * k;
	return counted(16) + 4 * counted(kk * 4) + counted(((int64_t) k + 1) * 4) + sort_scratch_bytes(k);
}

int64_t
sort_scratch_bytes(int k)
{
	return counted((int64_t) k * 64 + (1LL << 20));
}

int64_t
tiled_list_row_bytes(int k)
{
	return k <= TILED_MASK_MAX_K ? 12 : 4;
}

size_t
priv_bytes(int d, int k)
{
	return (size_t) ((((int64_t) k * d + k) * 8 + 15) / 16 * 16);
}

/*
 * Private shared-memory sums fit when, next to other_smem (e.g. the fused
 * kernel's centroid tile), they leave two blocks per SM: half the SM's shared
 * memory less the 1 KB the runtime reserves per block and the static shared
 * arrays (H100: 228 KB per SM -> ~110 KB per block). Larger k x (d+1) stays
 * on global atomics: with that many addresses there is little contention.
 */
bool
priv_fits(const Settings &s, const DeviceLimits &dev, int d, int k, size_t other_smem)
{
	if (s.global_sums)
		return false;
	int64_t		per_block = std::min<int64_t>(dev.smem_per_sm / 2 - 1024 - 256, dev.smem_optin);
	return (int64_t) (priv_bytes(d, k) + other_smem) <= per_block;
}

/* Chunk count, launch geometry, and the device bytes of the pass for these chunk rows. */
static void
finish_plan(Plan &p, int64_t n, int d, int k, const Settings &s, const DeviceLimits &dev)
{
	if (p.tile_rows > 0 && p.chunk_rows > p.tile_rows)
		p.chunk_rows = p.chunk_rows / p.tile_rows * p.tile_rows;
	p.nchunks = (n + p.chunk_rows - 1) / p.chunk_rows;
	if (p.path == PATH_TILED)
		p.grid = 2 * dev.sms;	/* the sorted update's blocks (inertia slots) */
	else if (p.path == PATH_GEMM)
	{
		int64_t		g = (p.tile_rows + ARGMIN_ROWS_PER_BLOCK - 1) / ARGMIN_ROWS_PER_BLOCK;
		p.grid = (int) std::max<int64_t>(1, std::min<int64_t>(g, (int64_t) s.gemm_blocks_per_sm * dev.sms));
	}
	else
	{
		const int64_t rows_per_block = (int64_t) PASS_THREADS * fused_shape(p.path, d).ppt;
		int64_t		g = (p.chunk_rows + rows_per_block - 1) / rows_per_block;
		p.grid = (int) std::max<int64_t>(1, std::min<int64_t>(g, 2LL * dev.sms));
	}
	const int64_t launches_per_chunk = p.path == PATH_GEMM ? (p.chunk_rows + p.tile_rows - 1) / p.tile_rows : 1;
	p.nslots = p.nchunks * launches_per_chunk * p.grid;

	/* what buffers.cu allocates, in its order */
	const int64_t kd = (int64_t) k * d;
	int64_t		b = counted(n * 4) + counted(kd * 4) + counted((int64_t) k * 4) + counted((int64_t) d * 4) +
		counted(kd * 8) + counted((kd + k + 3) * 8) + counted(p.nslots * 8) + counted(p.chunk_rows * 8) +
		counted((int64_t) d * 4) + counted((int64_t) d * 8);	/* the columns' max |x| and sums' scales */
	if (p.path == PATH_GEMM)
		b += counted(p.tile_rows * k * 4) + (p.product == PRODUCT_3XTF32 ? counted(kd * 4) : 0);
	/* the label test's state: GEMM column ranges and row norms, TILED's list of rows to decide */
	const int64_t norms = p.path == PATH_GEMM ? counted((p.resident ? n : p.chunk_rows) * 4) : 0;
	const int64_t list = p.path == PATH_TILED ? counted(p.chunk_rows * tiled_list_row_bytes(k)) : 0;
	if (p.path == PATH_TILED)
		b += counted(p.nchunks * 4);
	if (p.path == PATH_GEMM)
		b += counted((int64_t) d * 8);
	const int64_t x_bytes = n * (int64_t) d * 4;
	const int64_t chunks = 2 * p.x_copies * counted(p.chunk_rows * d * 4);
	p.pass_bytes = b + norms + list + (p.resident ? p.x_copies * counted(x_bytes) : chunks) +
		(p.hamerly ? hamerly_bytes(n, d, k) : 0) + (p.yinyang ? yinyang_bytes(n, k) : 0) +
		(p.elkan ? elkan_bytes(n, d, k) : 0) + (p.sort ? sort_bytes(k) : 0);
	p.loan_bytes = p.resident ? 0 : chunks + counted(p.chunk_rows * 8) + norms + list +
		(p.path == PATH_GEMM ? counted(p.tile_rows * k * 4) : 0);
}

/* The plan for this budget; false when it cannot hold a pass. */
static bool
try_plan(int64_t n, int d, int k, const Settings &s, const DeviceLimits &dev, int64_t budget, Plan &p)
{
	p = Plan();
	p.budget = budget;
	p.path = pick_path(d, k, s.force_path);
	p.product = pick_product(p.path, d, k, s.product);
	p.x_copies = p.product == PRODUCT_3XTF32 ? 2 : 1;
	p.kpp_rows = kpp_sample_rows(n, k);

	const int64_t kd = (int64_t) k * d;
	int64_t		fixed = n * 4 + kd * 4 + k * 4 + (int64_t) d * 4 + kd * 8 + (kd + k + 3) * 8 + 64;
	if (p.path == PATH_GEMM)
	{
		/* tile of -2 x.c' kept near 16 MB so it stays in L2 between GEMM and argmin */
		int64_t		tr = s.gemm_tile_bytes / (4LL * k);
		tr = std::max<int64_t>(1024, std::min<int64_t>(tr, 1LL << 20));
		p.tile_rows = std::min<int64_t>(tr, n);
		fixed += p.tile_rows * k * 4 + (p.product == PRODUCT_3XTF32 ? kd * 4 : 0);
	}
	/* bound one launch's work (~1 TFLOP, tens of ms) so interrupts are seen quickly */
	const double flops_row = (double) k * (2.0 * d + 2.0);
	const int64_t batch = (int64_t) std::max(65536.0, 1.0e12 / flops_row);

	/*
	 * resident: the data, and k-means++'s sample beside it; Hamerly's bounds
	 * too when asked for (a resident plan without them runs Lloyd's passes,
	 * which give the same labels)
	 */
	p.resident = true;
	p.chunk_rows = std::min(batch, n);
	const bool	kpp_copies = !(p.kpp_rows == n && p.product != PRODUCT_3XTF32);
	const bool	yinyang = s.method == PGKM_CUDA_METHOD_YINYANG;	/* Hamerly's pass with group bounds */
	for (bool bounds : {true, false})
	{
		/* Hamerly's lists and Yinyang's sort hold int32 row numbers */
		p.hamerly = bounds && (s.method == PGKM_CUDA_METHOD_HAMERLY || yinyang) && d <= TILED_MAX_D &&
			n <= INT32_MAX;
		p.yinyang = p.hamerly && yinyang;
		p.elkan = bounds && s.method == PGKM_CUDA_METHOD_ELKAN && d <= TILED_MAX_D && n * k <= INT64_MAX / 8;
		p.sort = bounds && s.method == PGKM_CUDA_METHOD_SORT && d <= TILED_MAX_D &&
			(int64_t) k * k <= SORT_MAX_PAIRS;
		if (bounds && !p.hamerly && !p.elkan && !p.sort)
			continue;
		finish_plan(p, n, d, k, s, dev);
		if (p.pass_bytes + kpp_scratch_bytes(p.kpp_rows, d, k, dev.sms, kpp_copies) <= budget)
			return true;
	}
	p.hamerly = p.yinyang = p.elkan = p.sort = false;

	/*
	 * Streamed: two chunk buffers (copy of chunk c + 1 beside the pass over
	 * chunk c), the chunk's dist2 and (GEMM) a tile as large as the chunk at
	 * most; 256 KB left for the partials, then checked exactly below.
	 */
	p.resident = false;
	const int64_t tile_fixed = p.tile_rows * k * 4;
	const int64_t left = budget - (fixed - tile_fixed) - (256LL << 10);
	/* dist2, and the label test's GEMM norms or TILED list */
	const int64_t per_row_out = 8 + (p.path == PATH_GEMM ? 4 : p.path == PATH_TILED ? tiled_list_row_bytes(k) : 0);
	const int64_t per_row = 2LL * p.x_copies * d * 4 + per_row_out;
	int64_t		rows = left > 0 ? left / (per_row + (p.tile_rows > 0 ? 4LL * k : 0)) : 0;
	if (p.tile_rows > 0 && rows > 0)
	{
		p.tile_rows = std::min(p.tile_rows, rows);
		rows = (left - p.tile_rows * 4LL * k) / per_row;
		rows = rows / p.tile_rows * p.tile_rows;
	}
	for (;;)
	{
		if (rows < 1)
			return false;
		p.chunk_rows = std::min({rows, batch, n});
		finish_plan(p, n, d, k, s, dev);
		if (p.pass_bytes <= budget)
			return true;
		/* the partials outgrew the 256 KB: fewer rows per chunk (at least 1/16 fewer, so this ends soon) */
		const int64_t step = p.tile_rows > 0 ? p.tile_rows : 1;
		rows = std::min(rows, p.chunk_rows);
		rows -= std::max({step, (p.pass_bytes - budget + per_row - 1) / per_row, rows / 16});
		rows = rows / step * step;
	}
}

Plan
make_plan(int64_t n, int d, int k, const Settings &s, const DeviceLimits &dev, int64_t budget)
{
	Plan		p;
	if (try_plan(n, d, k, s, dev, budget, p))
		return p;
	/* the smallest budget that holds a pass, for the message */
	int64_t		lo = std::max<int64_t>(budget, 0), hi = std::max<int64_t>(2 * lo, 1 << 20);
	while (!try_plan(n, d, k, s, dev, hi, p))
		lo = hi, hi *= 2;
	while (hi - lo > 1)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		(try_plan(n, d, k, s, dev, mid, p) ? hi : lo) = mid;
	}
	fail(PGKM_ERR_NOMEM, "GPU memory budget of %lld bytes is too small for n=%lld, d=%d, k=%d: streaming needs at "
		 "least %lld; raise the GPU memory limit", (long long) budget, (long long) n, d, k, (long long) hi);
}

}							/* namespace pgkm_cuda */
