/*
 * gpu_pin_cost.cu: what pinning the caller's rows costs against a pageable
 * upload, for a run that uploads its rows once (resident) or streams them on
 * every pass. Not part of the build:
 *   nvcc -O2 -arch=sm_90 bench/gpu_pin_cost.cu -o gpu_pin_cost && ./gpu_pin_cost
 */
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); exit(1); } } while (0)

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
  CK(cudaFree(0));
  for (size_t mb : {8, 31, 128, 512}) {
    size_t bytes = mb << 20;
    for (int rep = 0; rep < 3; rep++) {
      std::vector<char> host(bytes); memset(host.data(), 1, bytes);
      void *d; CK(cudaMalloc(&d, bytes));
      double t0 = now();
      CK(cudaHostRegister(host.data(), bytes, cudaHostRegisterDefault));
      double t1 = now();
      CK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
      double t2 = now();
      CK(cudaHostUnregister(host.data()));
      double t3 = now();
      CK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
      double t4 = now();
      printf("%4zu MB: register %.2f ms, pinned copy %.2f, unregister %.2f; pageable copy %.2f ms\n", mb,
             (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t4 - t3) * 1e3);
      CK(cudaFree(d));
    }
  }
}
