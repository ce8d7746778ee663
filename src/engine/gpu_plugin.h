/*
 * gpu_plugin.h: loading the CUDA plugin (pg_kmeans_cuda.so). The GPU device
 * that drives a loaded plugin is made with make_gpu_device (device.h).
 */
#ifndef PGKM_GPU_PLUGIN_H
#define PGKM_GPU_PLUGIN_H

#include <string>

struct pgkm_cuda_api;

namespace pgkm
{

struct CudaPlugin;

/*
 * Load (cached per path, once per process) and probe. On failure returns
 * nullptr and the reason in *why.
 */
const CudaPlugin *load_cuda_plugin(const char *path, std::string *why);

/* The device description of a successful probe. */
std::string cuda_plugin_probe_info(const CudaPlugin *p);

/* Does the plugin run kernel k-means (its kernel_* entry points are set)? */
bool		cuda_plugin_has_kernel(const CudaPlugin *p);

/* Its entry points (pgkm_cuda_api.h), for the devices that drive it. */
const pgkm_cuda_api *cuda_plugin_api(const CudaPlugin *p);

}							/* namespace pgkm */

#endif							/* PGKM_GPU_PLUGIN_H */
