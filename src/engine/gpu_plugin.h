/*
 * gpu_plugin.h: loading the CUDA plugin (pg_kmeans_cuda.so). The GPU device
 * that drives a loaded plugin is made with make_gpu_device (device.h).
 */
#ifndef PGKM_GPU_PLUGIN_H
#define PGKM_GPU_PLUGIN_H

#include <string>

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

}							/* namespace pgkm */

#endif							/* PGKM_GPU_PLUGIN_H */
