#!/bin/bash
# tests/gpu/device_run.sh: on a bare CUDA host, build the engine, the plugin, the
# GPU tests and the GPU benchmark; run the tests, compute-sanitizer on small
# cases, and the benchmarks. Logs go to $OUT (default ./gpu-out).
#   usage: bash tests/gpu/device_run.sh [tests|bench|all] [bench args...]
#   e.g. `all --sweep`: tests, then the sums-mode and fused/GEMM sweeps (gpu_bench --sweep).
#   Time caps (s): TESTS_TIMEOUT (300), SAN_TIMEOUT (240 per tool), BENCH_TIMEOUT (400); SKIP_SAN=1 skips the sanitizer.
# Needs .gpuhost/deps.tar.xz (OpenBLAS, CBLAS and GoogleTest from the dev box)
# when the host has none of its own.
set -uo pipefail
what=${1:-all}; shift || true
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build-gpu
extra=()
if [ -f .gpuhost/deps.tar.xz ] && ! ldconfig -p | grep -q libopenblas; then
  tar -C /opt -xJf .gpuhost/deps.tar.xz
  export LD_LIBRARY_PATH=/opt/gpudeps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  extra=(-DOPENBLAS_LIB=/opt/gpudeps/lib/libopenblas.so.0 -DCBLAS_INCLUDE=/opt/gpudeps/include -DGTEST_ROOT=/opt/gpudeps)
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -2; nproc; } 2>&1 | tee "$OUT/machine.txt"
t0=$(date +%s)
cmake -S . -B $B -DPGKM_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real "${extra[@]}" >"$OUT/build.log" 2>&1 &&
cmake --build $B -j"$(nproc)" --target pg_kmeans_cuda gpu_engine_tests pgkm_engine >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
# the benchmark binary: engine + cuBLAS + cudart
g++ -O2 -std=c++17 -Isrc/engine -Icuda -I/usr/local/cuda/include bench/gpu_bench.cpp -o $B/gpu_bench \
  $B/libpgkm_engine.a $(grep -o '/[^ ]*libopenblas[^ ]*' $B/engine_link.mk | head -1) \
  -L/usr/local/cuda/lib64 -lcublas -lcudart -lpthread -ldl >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
PLUGIN=$PWD/$B/cuda/pg_kmeans_cuda.so
export PGKM_CUDA_PLUGIN=$PLUGIN
rc=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout ${TESTS_TIMEOUT:-300} $B/tests/gpu/gpu_engine_tests 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED) |FAILED|Failure|error" ; rc=${PIPESTATUS[0]}
  echo "gpu tests rc=$rc"
  if [ "${SKIP_SAN:-0}" = 1 ]; then
    echo "compute-sanitizer: skipped (SKIP_SAN=1)"
  elif command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      # racecheck is too slow for cuBLAS's kernels in the 3xTF32 test (> 120 s); memcheck runs it
      filter='GpuPlugin.OneIteration*:GpuPlugin.KmeansppFinds*:GpuPlugin.ProbeDescribes*'
      [ $tool = memcheck ] && filter="$filter:GpuPlugin.ThreeTf32*"
      timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/gpu_engine_tests \
        --gtest_filter="$filter" >"$OUT/sanitizer_$tool.log" 2>&1
      src=$?; echo "compute-sanitizer $tool rc=$src"; tail -3 "$OUT/sanitizer_$tool.log"
      [ $src -ne 0 ] && rc=1
    done
  else
    echo "compute-sanitizer: not found"
  fi
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout ${BENCH_TIMEOUT:-400} $B/gpu_bench "$PLUGIN" "$@" 2>&1 | tee "$OUT/gpu_bench.log"
fi
exit $rc
