/*
 * gpu_kernel_device.cpp: the GPU KernelDevice, a thin adapter over the CUDA
 * plugin's kernel entry points (the device code is cuda/kernel_*.cu). The
 * plugin keeps K (stored, or recomputed in tiles) and does the passes; this
 * class turns its statuses into the engine's exceptions and its plan into
 * matrix() and detail().
 */
#include "gpu_kernel_device.h"
#include "errors.h"
#include "gpu_plugin.h"
#include "util.h"

#include <cstring>
#include <vector>

namespace pgkm
{

static pgkm_cuda_kernel_config
kernel_config(const KernelParams &p, const GpuKernelOptions &o, pgkm_interrupt_fn interrupt, void *ctx)
{
	pgkm_cuda_kernel_config c;
	memset(&c, 0, sizeof(c));
	c.memory_limit = o.memory_limit;
	c.device_ordinal = -1;
	c.interrupt = interrupt;
	c.interrupt_ctx = ctx;
	c.kernel = p.kind;
	c.degree = p.degree;
	c.gamma = p.gamma;
	c.coef0 = p.coef0;
	c.matrix = o.matrix;
	c.precision = o.precision;
	c.build = o.build;
	c.product = o.product;
	c.chunk_rows = o.chunk_rows;
	c.tile_mb = o.tile_mb;
	return c;
}

/* Turns a plugin status into the engine's exception. */
static void
check(int rc, const char *what, const char *err, const KernelParams &p)
{
	if (rc == 0)
		return;
	if (rc == PGKM_INTERRUPTED)
		throw Interrupted();
	const std::string msg = err && *err ? err : "failed";
	if (rc == PGKM_ERR_INVALID && msg.rfind("the kernel overflows float32", 0) == 0)
		throw_kernel_overflow(p);
	int			st = (rc == PGKM_ERR_NOMEM || rc == PGKM_ERR_INVALID || rc == PGKM_ERR_GPU ||
					  rc == PGKM_ERR_GPU_UNAVAILABLE) ? rc : PGKM_ERR_GPU;
	throw EngineError(st, std::string("GPU ") + what + ": " + msg);
}

bool
gpu_kernel_plan(const CudaPlugin *plugin, int64_t n, int32_t d, int32_t kmax, const KernelParams &p,
				const GpuKernelOptions &o, pgkm_cuda_kernel_plan *plan, int *status, std::string *why)
{
	const pgkm_cuda_api *api = cuda_plugin_api(plugin);
	if (!api->kernel_plan)
	{
		*status = PGKM_ERR_GPU_UNAVAILABLE;
		*why = "the GPU engine plugin does not run kernel k-means";
		return false;
	}
	pgkm_cuda_kernel_config c = kernel_config(p, o, nullptr, nullptr);
	char		err[512] = "";
	*status = api->kernel_plan(n, d, kmax, &c, plan, err, sizeof(err));
	err[sizeof(err) - 1] = '\0';
	*why = err;
	return *status == 0;
}

class GpuKernelDevice : public KernelDevice
{
public:
	GpuKernelDevice(const CudaPlugin *plugin, const float *x, int64_t n, int32_t d, const double *mean,
					const KernelParams &p, const GpuKernelOptions &o, int32_t kmax, pgkm_interrupt_fn interrupt,
					void *ctx)
		: api_(cuda_plugin_api(plugin)), info_(cuda_plugin_probe_info(plugin)), n_(n), p_(p), diag_(n)
	{
		if (!api_->kernel_create)
			throw EngineError(PGKM_ERR_GPU_UNAVAILABLE, "the GPU engine plugin does not run kernel k-means");
		cfg_ = kernel_config(p, o, interrupt, ctx);
		memset(&plan_, 0, sizeof(plan_));
		err_[0] = '\0';
		check(api_->kernel_create(x, n, d, kmax, mean, &cfg_, diag_.data(), &plan_, &h_, err_, sizeof(err_)),
			  "kernel setup", err_, p_);
	}
	~GpuKernelDevice() override
	{
		if (h_)
			api_->kernel_destroy(h_);
	}

	void		build() override
	{
		err_[0] = '\0';
		check(api_->kernel_build(h_, &build_s_, err_, sizeof(err_)), "kernel matrix", err_, p_);
	}
	const double *diag() const override { return diag_.data(); }
	void		rows(const int64_t *idx, int32_t count, float *out) override
	{
		err_[0] = '\0';
		check(api_->kernel_rows(h_, idx, count, out, err_, sizeof(err_)), "kernel rows", err_, p_);
	}
	void		pass(const int32_t *labels, const int64_t *sizes, int32_t k, KernelPass *out) override
	{
		pgkm_cuda_kernel_pass o;
		memset(&o, 0, sizeof(o));
		o.labels = out->labels;
		o.dist2 = out->dist2;
		o.norms = out->norms;
		o.cross = out->cross;
		err_[0] = '\0';
		check(api_->kernel_pass(h_, labels, sizes, k, &o, err_, sizeof(err_)), "kernel pass", err_, p_);
		out->kernel_sum = o.kernel_sum;
		pass_s_ = o.device_s;
	}
	const char *matrix() const override
	{
		return plan_.matrix == PGKM_CUDA_KMATRIX_STORED ? "stored" : "recomputed";
	}
	double		build_seconds() const override { return build_s_; }
	std::string detail() const override
	{
		const char *product = plan_.product == PGKM_CUDA_PRODUCT_3XTF32 ? "3xTF32" : "fp32";
		if (plan_.matrix != PGKM_CUDA_KMATRIX_STORED)
			return info_ + fmt(", K recomputed in tiles every pass (%s products)", product);
		const char *prec = plan_.precision == PGKM_CUDA_KPREC_BF16 ? "bfloat16" :
			plan_.precision == PGKM_CUDA_KPREC_FP16 ? "float16" : "float32";
		const double bytes = (double) n_ * n_ * (plan_.precision == PGKM_CUDA_KPREC_FP32 ? 4 : 2);
		return info_ + fmt(", K stored (%s, %.0f MB, %s %s product, built in %.2f s)", prec, bytes / 1e6,
						   plan_.build == PGKM_CUDA_KBUILD_GEMM ? "GEMM" : "SYRK", product, build_s_);
	}
	const char *name() const override { return "gpu"; }
	double		pass_seconds() const { return pass_s_; }

private:
	const pgkm_cuda_api *api_;
	std::string info_;
	int64_t		n_;
	KernelParams p_;
	std::vector<double> diag_;
	pgkm_cuda_kernel_config cfg_;
	pgkm_cuda_kernel_plan plan_;
	void	   *h_ = nullptr;
	double		build_s_ = 0, pass_s_ = -1;
	char		err_[512];
};

std::unique_ptr<KernelDevice>
make_gpu_kernel_device(const CudaPlugin *plugin, const float *x, int64_t n, int32_t d, const double *mean,
					   const KernelParams &p, const GpuKernelOptions &o, int32_t kmax, pgkm_interrupt_fn interrupt,
					   void *interrupt_ctx)
{
	return std::unique_ptr<KernelDevice>(
		new GpuKernelDevice(plugin, x, n, d, mean, p, o, kmax, interrupt, interrupt_ctx));
}

GpuKernelOptions
gpu_kernel_options(const pgkm_options &opt)
{
	GpuKernelOptions o;
	o.matrix = opt.kernel_matrix == PGKM_KMATRIX_STORED ? PGKM_CUDA_KMATRIX_STORED :
		opt.kernel_matrix == PGKM_KMATRIX_RECOMPUTED ? PGKM_CUDA_KMATRIX_STREAMED : PGKM_CUDA_KMATRIX_AUTO;
	o.memory_limit = opt.gpu_memory_limit;
	return o;
}

const CudaPlugin *
kernel_gpu_plugin(int64_t n, int32_t d, const KernelParams &p, const pgkm_options &opt, std::string *fallback)
{
	std::string why;
	int			status = PGKM_ERR_GPU_UNAVAILABLE;
	const CudaPlugin *plugin = load_cuda_plugin(opt.gpu_plugin_path, &why);
	if (plugin && !cuda_plugin_has_kernel(plugin))
	{
		plugin = nullptr;
		why = "the GPU engine plugin does not run kernel k-means";
	}
	pgkm_cuda_kernel_plan plan;
	if (plugin && gpu_kernel_plan(plugin, n, d, opt.k, p, gpu_kernel_options(opt), &plan, &status, &why))
		return plugin;
	if (plugin)
		why = "GPU kernel plan: " + why;	/* "GPU": the glue's mark of a device budget */
	if (opt.device == PGKM_DEVICE_GPU)
		throw EngineError(status == PGKM_ERR_NOMEM || status == PGKM_ERR_INVALID ? status
						  : PGKM_ERR_GPU_UNAVAILABLE, why);
	*fallback = why;
	return nullptr;
}

std::unique_ptr<KernelDevice>
open_gpu_kernel_device(const CudaPlugin *plugin, const float *x, int64_t n, int32_t d, const double *mean,
					   const KernelParams &p, const pgkm_options &opt, pgkm_interrupt_fn interrupt,
					   void *interrupt_ctx, std::string *fallback)
{
	try
	{
		return make_gpu_kernel_device(plugin, x, n, d, mean, p, gpu_kernel_options(opt), opt.k, interrupt,
									  interrupt_ctx);
	}
	catch (const EngineError &e)
	{
		if (opt.device == PGKM_DEVICE_GPU || e.status == PGKM_ERR_INVALID)
			throw;
		*fallback = e.what();
		return nullptr;
	}
}

double
gpu_kernel_pass_seconds(const KernelDevice *dev)
{
	auto	   *g = dynamic_cast<const GpuKernelDevice *>(dev);
	return g ? g->pass_seconds() : -1;
}

}							/* namespace pgkm */
