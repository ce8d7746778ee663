# shellcheck shell=bash
# tests/gpu/host_env.sh: sourced by the GPU host scripts (device_run.sh,
# run_gpu_suite.sh) from the repository root. Puts CUDA on PATH and, when
# .gpuhost/deps.tar.xz is there (scripts/gpu-host-bundle.sh), unpacks
# OpenBLAS, CBLAS and GoogleTest to /opt/gpudeps and sets GPU_CMAKE_DEPS (the
# CMake arguments that find them) and LD_LIBRARY_PATH. Returns non-zero with
# a message when the host has no OpenBLAS and no bundle.
export PATH=/usr/local/cuda/bin:$PATH
GPUHOST=${GPUHOST:-$PWD/.gpuhost}
GPU_CMAKE_DEPS=()
if [ -f "$GPUHOST/deps.tar.xz" ]; then
  [ -f /opt/gpudeps/lib/libopenblas.so.0 ] || tar -C /opt -xJf "$GPUHOST/deps.tar.xz" || return 1
  export LD_LIBRARY_PATH=/opt/gpudeps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  GPU_CMAKE_DEPS=(-DOPENBLAS_LIB=/opt/gpudeps/lib/libopenblas.so.0 -DCBLAS_INCLUDE=/opt/gpudeps/include
                  -DGTEST_ROOT=/opt/gpudeps)
elif ! ldconfig -p | grep -q libopenblas; then
  echo "no OpenBLAS on this host and no $GPUHOST/deps.tar.xz: run scripts/gpu-host-bundle.sh on the"
  echo "development machine and send .gpuhost/ along with the working tree"
  return 1
fi
