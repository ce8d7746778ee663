#!/bin/bash
# tests/gpu/device_run.sh: on a CUDA host, build the engine, the plugin, the
# GPU tests and the GPU benchmark (build-gpu/); run the plan tests, the GPU
# tests, compute-sanitizer on small cases, and the benchmark. Logs go to $OUT
# (default ./gpu-out). Libraries the host lacks come from .gpuhost/ (host_env.sh).
#   usage: bash tests/gpu/device_run.sh [build|tests|bench|all] [gpu_bench args...]
#   e.g. `all --sweep`: tests, then the sums-mode and fused/GEMM sweeps.
#   Time caps (s): TESTS_TIMEOUT (300), SAN_TIMEOUT (240 per tool), BENCH_TIMEOUT (400);
#   SKIP_SAN=1 skips the sanitizer.
set -uo pipefail
what=${1:-all}; shift || true
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
source tests/gpu/host_env.sh || exit 1
B=build-gpu
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -2; nproc; } 2>&1 | tee "$OUT/machine.txt"
t0=$(date +%s)
cmake -S . -B $B -DPGKM_CUDA=ON "${GPU_CMAKE_DEPS[@]}" >"$OUT/build.log" 2>&1 &&
cmake --build $B -j"$(nproc)" --target pg_kmeans_cuda gpu_engine_tests gpu_plan_tests gpu_bench >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
PLUGIN=$PWD/$B/cuda/pg_kmeans_cuda.so
export PGKM_CUDA_PLUGIN=$PLUGIN
rc=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  $B/tests/gpu/gpu_plan_tests >"$OUT/gpu_plan_tests.log" 2>&1 || rc=1
  echo "gpu plan tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/gpu_plan_tests.log" | tr '\n' ' ')"
  timeout ${TESTS_TIMEOUT:-300} $B/tests/gpu/gpu_engine_tests 2>&1 | tee "$OUT/gpu_tests.log" |
    grep -E "^\[  (PASSED|FAILED) |FAILED|Failure|error|streamed, k-means" ; trc=${PIPESTATUS[0]}
  echo "gpu tests rc=$trc"
  [ "$trc" -ne 0 ] && rc=1
  if [ "${SKIP_SAN:-0}" = 1 ]; then
    echo "compute-sanitizer: skipped (SKIP_SAN=1)"
  elif command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      # racecheck is too slow for cuBLAS's kernels in the 3xTF32 test (> 120 s); memcheck runs it,
      # and the run that lends its pass buffers to k-means++ and takes them back
      filter='GpuPlugin.OneIteration*:GpuPlugin.KmeansppFinds*:GpuPlugin.ProbeDescribes*'
      [ $tool = memcheck ] && filter="$filter:GpuPlugin.ThreeTf32*:GpuPlugin.KmeansppBelowK*"
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
  timeout ${BENCH_TIMEOUT:-400} $B/bench/gpu_bench "$PLUGIN" "$@" 2>&1 | tee "$OUT/gpu_bench.log"
fi
exit $rc
