/*
 * kernel_plan.cpp: settings, mode choice and device memory plan of a kernel
 * k-means run (kernel_plan.h). Every device allocation kernel_buffers.cu
 * makes is counted here, byte for byte, so a plan that fits never fails later.
 */
#include "kernel_plan.h"

#include "failure.h"

#include <algorithm>
#include <cmath>

namespace pgkm_cuda
{

KernelSettings
kernel_settings_from_config(const pgkm_cuda_kernel_config *cfg)
{
	if (!cfg)
		fail(PGKM_ERR_INVALID, "a kernel run needs its config");
	KernelSettings s;
	s.device_ordinal = cfg->device_ordinal;
	s.memory_limit = cfg->memory_limit;
	if (cfg->kernel < PGKM_KERNEL_LINEAR || cfg->kernel > PGKM_KERNEL_SIGMOID)
		fail(PGKM_ERR_INVALID, "unknown kernel %d", cfg->kernel);
	s.kernel = cfg->kernel;
	if (!(cfg->gamma > 0) || !std::isfinite(cfg->gamma) || !std::isfinite(cfg->coef0))
		fail(PGKM_ERR_INVALID, "gamma must be finite and > 0, coef0 finite (got %g, %g)", cfg->gamma, cfg->coef0);
	s.gamma = cfg->gamma;
	s.coef0 = cfg->coef0;
	if (cfg->kernel == PGKM_KERNEL_POLYNOMIAL && cfg->degree < 1)
		fail(PGKM_ERR_INVALID, "degree must be at least 1 (got %d)", cfg->degree);
	s.degree = cfg->degree;
	if (cfg->matrix < PGKM_CUDA_KMATRIX_AUTO || cfg->matrix > PGKM_CUDA_KMATRIX_STREAMED)
		fail(PGKM_ERR_INVALID, "unknown kernel matrix mode %d", cfg->matrix);
	s.matrix = (pgkm_cuda_kmatrix) cfg->matrix;
	if (cfg->precision < PGKM_CUDA_KPREC_FP32 || cfg->precision > PGKM_CUDA_KPREC_FP16)
		fail(PGKM_ERR_INVALID, "unknown kernel matrix precision %d", cfg->precision);
	s.precision = (pgkm_cuda_kprecision) cfg->precision;
	if (cfg->build < PGKM_CUDA_KBUILD_AUTO || cfg->build > PGKM_CUDA_KBUILD_SYRK)
		fail(PGKM_ERR_INVALID, "unknown kernel build %d", cfg->build);
	s.build = (pgkm_cuda_kbuild) cfg->build;
	if (cfg->product < PGKM_CUDA_PRODUCT_AUTO || cfg->product > PGKM_CUDA_PRODUCT_3XTF32)
		fail(PGKM_ERR_INVALID, "kernel product must be auto, fp32 or 3xTF32 (got %d)", cfg->product);
	s.product = (pgkm_cuda_product) cfg->product;
	if (cfg->chunk_rows != 0 && (cfg->chunk_rows < 8 || cfg->chunk_rows > 65536))
		fail(PGKM_ERR_INVALID, "kernel chunk rows must be 8..65536 (got %d)", cfg->chunk_rows);
	s.chunk_rows = cfg->chunk_rows;
	if (cfg->tile_mb < 0 || cfg->tile_mb > 1024)
		fail(PGKM_ERR_INVALID, "kernel tile must be 1..1024 MB (got %d)", cfg->tile_mb);
	if (cfg->tile_mb > 0)
		s.tile_bytes = (int64_t) cfg->tile_mb << 20;
	return s;
}

bool
kernel_build_syrk(int64_t n, int d, pgkm_cuda_kbuild want)
{
	if (want != PGKM_CUDA_KBUILD_AUTO)
		return want == PGKM_CUDA_KBUILD_SYRK;
	return (double) n / d <= KBUILD_GEMM_MIN_RATIO;
}

static int64_t
round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

int64_t
KernelBytes::total() const
{
	return mean + x + xc + xlo + xs + stats + labels + perm + chunks + S + partial + rowsum + norms + clusters +
		out_labels + dist2 + w + flag + rows + K + panel + tile;
}

KernelBytes
kernel_bytes(const KernelPlan &p)
{
	KernelBytes b {};
	const int64_t n = p.n;
	b.mean = (int64_t) p.d * 12;
	b.x = n * p.d * 4;
	b.xc = n * p.xw * 4;
	b.xlo = p.stored && p.tf32x3 ? n * p.dp * 4 : 0;
	b.xs = p.stored ? 0 : n * p.xw * 4;
	b.stats = 3 * n * 8;
	b.labels = n * 4;
	b.perm = n * 4;
	b.chunks = p.max_chunks * 16;
	b.S = (int64_t) p.kmax * n * 8;
	b.partial = p.max_chunks * p.partial_cols * 8;
	b.rowsum = n * 8;
	b.norms = (int64_t) p.kmax * 8;
	b.clusters = (int64_t) p.kmax * 32;	/* KCluster */
	b.out_labels = n * 4;
	b.dist2 = n * 8;
	b.w = n * 8;
	b.flag = 64;
	b.rows = p.kpp_rows * n * 4;
	b.K = p.stored ? n * p.ld * p.elem_bytes : 0;
	b.panel = p.stored ? p.panel_rows * p.ld * 4 : 0;
	b.tile = p.stored ? 0 : p.tile_rows * p.tile_cols * 4;
	return b;
}

/* Columns one pass block covers: 32 lanes x KPASS_LOADS 16-byte loads. */
static int64_t
strip_cols(int elem_bytes)
{
	return 32LL * KPASS_LOADS * (16 / elem_bytes);
}

/* The plan of one mode; panel rows (stored) or tile rows (streamed) as large as the budget allows. */
static KernelPlan
mode_plan(int64_t n, int d, int kmax, const KernelSettings &s, bool stored, int64_t budget)
{
	KernelPlan	p;
	p.n = n;
	p.d = d;
	p.dp = (int) round_up(d, 8);
	p.kmax = kmax;
	p.stored = stored;
	p.precision = stored ? s.precision : PGKM_CUDA_KPREC_FP32;
	p.elem_bytes = p.precision == PGKM_CUDA_KPREC_FP32 ? 4 : 2;
	p.syrk = kernel_build_syrk(n, d, s.build);
	p.tf32x3 = s.product == PGKM_CUDA_PRODUCT_3XTF32 ||
		(s.product == PGKM_CUDA_PRODUCT_AUTO && d >= (stored ? KBUILD_3XTF32_MIN_D : KSTREAM_3XTF32_MIN_D));
	/* rows padded to whole strips of the pass, so its loads need no bounds test */
	p.ld = round_up(n, strip_cols(p.elem_bytes));
	p.xw = !stored && p.tf32x3 ? 3 * p.dp : p.dp;
	p.chunk_rows = s.chunk_rows > 0 ? s.chunk_rows : stored ? 2048 : 256;
	p.max_chunks = (n + p.chunk_rows - 1) / p.chunk_rows + kmax;
	p.kpp_rows = 2 + (int64_t) std::log((double) kmax);
	p.budget = budget;
	if (stored)
	{
		p.partial_cols = round_up(n, strip_cols(p.elem_bytes));
		/* a panel's product at most ~2 TFLOP (tens of ms, so interrupts are seen) and 1 GB */
		int64_t		by_flops = (int64_t) (2e12 / (2.0 * (double) n * d));
		int64_t		by_bytes = (1LL << 30) / (4 * p.ld);
		p.panel_rows = std::min<int64_t>({by_flops, by_bytes, 8192, round_up(n, KMAP_TILE)});
		/* SYRK: at least 8 panels, so that the triangle saves most of the square's flops */
		if (p.syrk)
			p.panel_rows = std::min<int64_t>(p.panel_rows, n / 8);
		p.panel_rows = std::max<int64_t>(KMAP_TILE, p.panel_rows / KMAP_TILE * KMAP_TILE);
		/* a tight budget gets a thinner panel */
		KernelBytes b = kernel_bytes(p);
		int64_t		rest = b.total() - b.panel;
		if (rest + b.panel > budget && budget > rest)
			p.panel_rows = std::max<int64_t>(KMAP_TILE, (budget - rest) / (4 * p.ld) / KMAP_TILE * KMAP_TILE);
	}
	else
	{
		p.tile_cols = std::min<int64_t>(1024, round_up(n, strip_cols(4)));
		p.partial_cols = p.tile_cols;
		int64_t		rows = s.tile_bytes / (4 * p.tile_cols);
		p.tile_rows = std::max<int64_t>(256, std::min<int64_t>(rows, round_up(n, 8)));
		KernelBytes b = kernel_bytes(p);
		int64_t		rest = b.total() - b.tile;
		if (rest + b.tile > budget && budget > rest)
			p.tile_rows = std::max<int64_t>(256, (budget - rest) / (4 * p.tile_cols) / 8 * 8);
	}
	p.device_bytes = kernel_bytes(p).total();
	return p;
}

static const char *
precision_name(pgkm_cuda_kprecision p)
{
	return p == PGKM_CUDA_KPREC_BF16 ? "bfloat16" : p == PGKM_CUDA_KPREC_FP16 ? "float16" : "float32";
}

KernelPlan
make_kernel_plan(int64_t n, int d, int kmax, const KernelSettings &s, const DeviceLimits &dev, int64_t budget)
{
	(void) dev;
	if (n < 1 || d < 1 || kmax < 1 || kmax > n)
		fail(PGKM_ERR_INVALID, "invalid shape for a GPU kernel run");
	KernelPlan	st = mode_plan(n, d, kmax, s, true, budget);
	KernelPlan	sr = mode_plan(n, d, kmax, s, false, budget);
	st.stored_bytes = sr.stored_bytes = st.device_bytes;
	st.streamed_bytes = sr.streamed_bytes = sr.device_bytes;
	const double gb = 1e9;
	if (s.matrix != PGKM_CUDA_KMATRIX_STREAMED && st.device_bytes <= budget)
		return st;
	if (s.matrix == PGKM_CUDA_KMATRIX_STORED)
		fail(PGKM_ERR_NOMEM,
			 "kernel k-means of %lld rows needs %.2f GB of GPU memory with K stored (%s, n^2), "
			 "more than the GPU budget of %.2f GB; recompute K instead (kernel_matrix recomputed: %.2f GB) "
			 "or raise the GPU memory limit", (long long) n, st.device_bytes / gb, precision_name(s.precision),
			 budget / gb, sr.device_bytes / gb);
	if (sr.device_bytes <= budget)
		return sr;
	fail(PGKM_ERR_NOMEM,
		 "kernel k-means of %lld rows (d = %d, k = %d) needs %.2f GB of GPU memory with K stored (%s) and "
		 "%.2f GB with K recomputed in tiles, more than the GPU budget of %.2f GB; raise the GPU memory "
		 "limit, cluster fewer rows, or run on the CPU", (long long) n, d, kmax, st.device_bytes / gb,
		 precision_name(s.precision), sr.device_bytes / gb, budget / gb);
}

}							/* namespace pgkm_cuda */
