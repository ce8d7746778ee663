/*
 * gpu_plugin.cpp: loading the CUDA plugin and driving it as a Device.
 *
 * The plugin is dlopen()ed with RTLD_NOW | RTLD_LOCAL (so a missing CUDA
 * runtime fails at load time, not mid-run, and its symbols never leak into
 * the backend) once per process and path, then its ABI version and struct
 * size are checked before anything is called. Failures are not cached, so a
 * plugin installed later is picked up by the next call.
 */
#include "device.h"
#include "errors.h"
#include "gpu_auto_policy.h"
#include "gpu_plugin.h"
#include "internal_hooks.h"
#include "pgkm_cuda_api.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

namespace pgkm
{

struct CudaPlugin
{
	std::string path;
	void	   *handle = nullptr;
	const pgkm_cuda_api *api = nullptr;
	std::string probe_info;		/* from a successful probe */
};

static std::mutex plugin_mu;

/*
 * The NVIDIA driver library checked for before the plugin is loaded. The
 * plugin links cuBLAS, which maps ~140 MB into the backend for good; on a
 * machine with no driver that would be paid by every backend that merely asks
 * whether a GPU exists. An empty name skips the check (unit tests' stand-in).
 */
static std::string &
driver_library()
{
	static std::string name = "libcuda.so.1";	/* function-local: safe from static-init order */
	return name;
}

extern "C" const char *
pgkm_internal_set_driver_library(const char *soname)
{
	static std::string previous;
	std::lock_guard<std::mutex> lk(plugin_mu);
	previous = driver_library();
	driver_library() = soname ? soname : "";
	return previous.c_str();
}

const CudaPlugin *
load_cuda_plugin(const char *path, std::string *why)
{
	if (!path || !*path)
	{
		*why = "no GPU engine plugin path is configured";
		return nullptr;
	}
	std::lock_guard<std::mutex> lk(plugin_mu);
	static std::map<std::string, CudaPlugin *> loaded;	/* never freed: lives as long as the process */
	auto		it = loaded.find(path);
	if (it != loaded.end())
		return it->second;

	if (access(path, R_OK) != 0)
	{
		*why = std::string("cannot load GPU engine plugin \"") + path + "\": " + std::strerror(errno);
		return nullptr;
	}
	const std::string &driver = driver_library();
	if (!driver.empty() && !dlopen(driver.c_str(), RTLD_LAZY | RTLD_LOCAL))
	{
		*why = "no NVIDIA driver (" + driver + " cannot be loaded)";
		return nullptr;
	}
	void	   *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
	{
		const char *e = dlerror();
		*why = std::string("cannot load GPU engine plugin \"") + path + "\": " + (e ? e : "unknown error");
		return nullptr;
	}
	using get_fn = const pgkm_cuda_api *(*) (void);
	auto		get = (get_fn) dlsym(h, PGKM_CUDA_ENTRY_SYMBOL);
	if (!get)
	{
		*why = std::string("GPU engine plugin \"") + path + "\" does not export " PGKM_CUDA_ENTRY_SYMBOL;
		dlclose(h);
		return nullptr;
	}
	const pgkm_cuda_api *api = get();
	if (!api)
	{
		*why = std::string("GPU engine plugin \"") + path + "\" returned no interface";
		dlclose(h);
		return nullptr;
	}
	if (api->abi_version != PGKM_CUDA_ABI_VERSION || api->struct_size != sizeof(pgkm_cuda_api))
	{
		*why = std::string("GPU engine plugin \"") + path + "\" has ABI version " +
			std::to_string(api->abi_version) + " (struct size " + std::to_string(api->struct_size) +
			"), expected " + std::to_string(PGKM_CUDA_ABI_VERSION) + " (" +
			std::to_string(sizeof(pgkm_cuda_api)) + ")";
		dlclose(h);
		return nullptr;
	}
	const bool	kernel_all = api->kernel_plan && api->kernel_create && api->kernel_build && api->kernel_rows &&
		api->kernel_pass && api->kernel_destroy;
	const bool	kernel_none = !api->kernel_plan && !api->kernel_create && !api->kernel_build && !api->kernel_rows &&
		!api->kernel_pass && !api->kernel_destroy;
	if (!api->probe || !api->create || !api->init_kmeanspp || !api->set_centroids ||
		!api->iterate || !api->assign || !api->destroy || !api->set_method || !(kernel_all || kernel_none))
	{
		*why = std::string("GPU engine plugin \"") + path + "\" has a NULL entry point";
		dlclose(h);
		return nullptr;
	}
	char		info[512] = "";
	if (api->probe(info, sizeof(info)) != 0)
	{
		info[sizeof(info) - 1] = '\0';
		*why = std::string("no usable GPU: ") + (info[0] ? info : "the plugin's probe failed");
		/* keep the library loaded (unloading CUDA runtimes is unsafe); retry the probe next time */
		return nullptr;
	}
	info[sizeof(info) - 1] = '\0';
	auto	   *p = new CudaPlugin;
	p->path = path;
	p->handle = h;
	p->api = api;
	p->probe_info = info;
	loaded[path] = p;
	return p;
}

std::string
cuda_plugin_probe_info(const CudaPlugin *p)
{
	return p->probe_info;
}

bool
cuda_plugin_has_kernel(const CudaPlugin *p)
{
	return p->api->kernel_create != nullptr;
}

const pgkm_cuda_api *
cuda_plugin_api(const CudaPlugin *p)
{
	return p->api;
}

/* Turns a plugin status into the engine's exception. */
static void
check(int rc, const char *what, const char *err)
{
	if (rc == 0)
		return;
	if (rc == PGKM_INTERRUPTED)
		throw Interrupted();
	int			st = (rc == PGKM_ERR_NOMEM || rc == PGKM_ERR_INVALID || rc == PGKM_ERR_GPU ||
					  rc == PGKM_ERR_GPU_UNAVAILABLE) ? rc : PGKM_ERR_GPU;
	throw EngineError(st, std::string("GPU ") + what + ": " + (err && *err ? err : "failed"));
}

class GpuDevice : public Device
{
public:
	GpuDevice(const CudaPlugin *p, const float *x, int64_t n, int32_t d, int32_t k,
			   const pgkm_options *opt, pgkm_interrupt_fn interrupt, void *ctx)
		: p_(p), x_(x), n_(n), d_(d), k_(k), method_(opt->method)
	{
		/* the measurement and test switches stay 0: the production behaviour */
		cfg_.memory_limit = opt->gpu_memory_limit;
		cfg_.deterministic = opt->deterministic;
		cfg_.device_ordinal = -1;
		cfg_.interrupt = interrupt;
		cfg_.interrupt_ctx = ctx;
		open(k);
	}
	~GpuDevice() override
	{
		if (h_)
			p_->api->destroy(h_);
	}

	int32_t		kmeanspp(uint64_t seed, int32_t k, double *centroids, double *potential) override
	{
		if (k != k_)
			open(k);
		int32_t		found = 0;
		err_[0] = '\0';
		check(p_->api->init_kmeanspp(h_, seed, centroids, &found, err_, sizeof(err_)),
			  "k-means++", err_);
		if (found < 1 || found > k)
			throw EngineError(PGKM_ERR_GPU, "GPU k-means++ returned an invalid center count");
		if (found < k)
		{
			/* the handle was sized for k clusters: reopen with the distinct count */
			open(found);
			set_centroids(centroids, found);
		}
		if (potential)
			*potential = std::numeric_limits<double>::quiet_NaN();
		return found;
	}
	void		set_centroids(const double *centroids, int32_t k) override
	{
		if (k != k_)
			open(k);
		err_[0] = '\0';
		check(p_->api->set_centroids(h_, centroids, err_, sizeof(err_)), "set centroids", err_);
	}
	void		iterate(IterStats *st, double *centroids, int64_t *sizes) override
	{
		pgkm_cuda_iter it;
		memset(&it, 0, sizeof(it));
		it.distances = -1;
		err_[0] = '\0';
		if (method_ == PGKM_METHOD_AUTO)
			ask_method(cuda_method(policy_.next()));
		const auto	t0 = std::chrono::steady_clock::now();
		check(p_->api->iterate(h_, &it, centroids, sizes, err_, sizeof(err_)), "iteration", err_);
		const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		st->inertia = it.inertia;
		st->moved = it.moved;
		pass_distances_ = it.distances;
		pass_method_ = engine_method(it.method);
		if (method_ == PGKM_METHOD_AUTO)
			policy_.record(pass_method_, seconds, it.moved);
	}
	int64_t		last_pass_distances(int32_t *method) const override
	{
		*method = pass_method_;
		return pass_distances_;
	}
	void		assign(int32_t *labels, double *dist2, int64_t *sizes, double *inertia) override
	{
		err_[0] = '\0';
		check(p_->api->assign(h_, labels, dist2, sizes, inertia, err_, sizeof(err_)),
			  "assignment", err_);
		pass_distances_ = -1;	/* every distance, under the method of the run's passes */
	}
	std::string detail() const override { return p_->probe_info; }
	const char *name() const override { return "gpu"; }

private:
	/* The plugin's method for the engine's (the pruned ones it runs; Lloyd's passes for the rest). */
	static int32_t cuda_method(int32_t m)
	{
		return m == PGKM_METHOD_HAMERLY ? PGKM_CUDA_METHOD_HAMERLY :
			m == PGKM_METHOD_YINYANG ? PGKM_CUDA_METHOD_YINYANG :
			m == PGKM_METHOD_ELKAN ? PGKM_CUDA_METHOD_ELKAN :
			m == PGKM_METHOD_SORT ? PGKM_CUDA_METHOD_SORT : PGKM_CUDA_METHOD_LLOYD;
	}
	static int32_t engine_method(int32_t m)
	{
		return m == PGKM_CUDA_METHOD_HAMERLY ? PGKM_METHOD_HAMERLY :
			m == PGKM_CUDA_METHOD_YINYANG ? PGKM_METHOD_YINYANG :
			m == PGKM_CUDA_METHOD_ELKAN ? PGKM_METHOD_ELKAN :
			m == PGKM_CUDA_METHOD_SORT ? PGKM_METHOD_SORT : PGKM_METHOD_LLOYD;
	}

	/* A run for k centroids; AUTO's holds the state of the bounded method it will try. */
	void		open(int32_t k)
	{
		if (h_)
		{
			p_->api->destroy(h_);
			h_ = nullptr;
		}
		const int32_t method = method_ == PGKM_METHOD_AUTO ? gpu_auto_candidate(d_, k) : method_;
		cfg_.method = cuda_method(method);
		err_[0] = '\0';
		check(p_->api->create(x_, n_, d_, k, &cfg_, &h_, err_, sizeof(err_)), "setup", err_);
		k_ = k;
		asked_ = cfg_.method;
		if (method_ == PGKM_METHOD_AUTO)
			policy_ = GpuAutoPolicy(method);
	}

	void		ask_method(int32_t method)
	{
		if (method == asked_)
			return;
		int32_t		runs = 0;
		err_[0] = '\0';
		check(p_->api->set_method(h_, method, &runs, err_, sizeof(err_)), "method switch", err_);
		asked_ = method;
	}

	const CudaPlugin *p_;
	const float *x_;
	int64_t		n_;
	int32_t		d_;
	int32_t		k_;
	int32_t		method_;		/* the pgkm_method asked for */
	GpuAutoPolicy policy_;		/* AUTO: the method of each pass */
	int32_t		asked_ = PGKM_CUDA_METHOD_LLOYD;	/* the plugin's method for the next pass */
	pgkm_cuda_config cfg_ {};
	void	   *h_ = nullptr;
	char		err_[512];
	int64_t		pass_distances_ = -1;
	int32_t		pass_method_ = PGKM_METHOD_LLOYD;
};

std::unique_ptr<Device>
make_gpu_device(const CudaPlugin *plugin, const float *x, int64_t n, int32_t d, int32_t k,
				const pgkm_options *opt, pgkm_interrupt_fn interrupt, void *ctx)
{
	return std::unique_ptr<Device>(new GpuDevice(plugin, x, n, d, k, opt, interrupt, ctx));
}

}							/* namespace pgkm */
