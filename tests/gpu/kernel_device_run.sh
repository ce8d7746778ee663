#!/bin/bash
# tests/gpu/kernel_device_run.sh: kernel k-means on a CUDA host: the kernel
# plan tests, the GPU kernel tests, compute-sanitizer (memcheck, racecheck)
# on the small ones, and the kernel benchmark (gpu_bench --kernel). From a
# clean checkout with .gpuhost/ beside it (scripts/gpu-host-bundle.sh) it
# builds build-gpu/ (device_run.sh build) and runs those binaries; with
# PREBUILT=DIR it runs DIR's instead (the plugin as pg_kmeans_cuda.plugin,
# gpu_plan_tests, gpu_engine_tests, gpu_bench, from a PGKM_CUDA=ON build with
# the same toolkit), building when they do not start. Logs go to $OUT
# (default ./gpu-out).
#   usage: bash tests/gpu/kernel_device_run.sh [tests|san|bench|ncu]... [-- gpu_bench args]
#   e.g. `tests bench -- --kernel popcorn`; default: tests san bench, bench = --kernel all;
#   ncu: Nsight Compute on one launch of the streamed mapping kernel.
#   Time caps (s): TESTS_TIMEOUT (150), SAN_TIMEOUT (90 per tool), BENCH_TIMEOUT (300).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; export OUT; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
steps=(); bench_args=(--kernel all)
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then shift; bench_args=("$@"); break; fi
  steps+=("$1"); shift
done
[ ${#steps[@]} -eq 0 ] && steps=(tests san bench)
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv; nproc; } 2>&1 | tee "$OUT/machine.txt"
P=${PREBUILT:-}
if [ -n "$P" ] && "$P/gpu_plan_tests" --gtest_list_tests >/dev/null 2>&1; then
  PLAN=$P/gpu_plan_tests; ENGINE=$P/gpu_engine_tests; BENCH=$P/gpu_bench; export PGKM_CUDA_PLUGIN=$P/pg_kmeans_cuda.plugin
else
  [ -n "$P" ] && echo "binaries in $P missing or not runnable here: building"
  bash tests/gpu/device_run.sh build || exit 1
  B=$PWD/build-gpu
  PLAN=$B/tests/gpu/gpu_plan_tests; ENGINE=$B/tests/gpu/gpu_engine_tests; BENCH=$B/bench/gpu_bench
  export PGKM_CUDA_PLUGIN=$B/cuda/pg_kmeans_cuda.so
fi
rc=0
for step in "${steps[@]}"; do
  t0=$(date +%s)
  case $step in
    tests)
      "$PLAN" >"$OUT/plan_tests.log" 2>&1 || rc=1
      echo "plan tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/plan_tests.log" | tr '\n' ' ')"
      timeout "${TESTS_TIMEOUT:-150}" "$ENGINE" --gtest_filter="${TESTS_FILTER:-*Kernel*}" \
        >"$OUT/kernel_tests.log" 2>&1
      trc=$?
      grep -E "^\[  (PASSED|FAILED) |FAILED|Failure|rror|measured|Expected|Which is|differ|tests ran" \
        "$OUT/kernel_tests.log" | head -80
      echo "kernel tests rc=$trc"; [ "$trc" -ne 0 ] && rc=1 ;;
    san)
      filter='KernelGpu.RowsAreTheRowsOfK:KernelGpu.EmptyClustersTakeNoPart:KernelGpu.OneCluster:KernelGpu.ChunkSizeChangesOnlyTheRounding:Kernels/KernelGpuVsCpu.SamePassAndLoopFromTheSameLabels/rbf_stored_syrk:KernelGpuRuns.EmptyClustersAndOneCluster'
      for tool in memcheck racecheck; do
        timeout "${SAN_TIMEOUT:-90}" compute-sanitizer --tool $tool --error-exitcode 9 "$ENGINE" \
          --gtest_filter="$filter" >"$OUT/sanitizer_$tool.log" 2>&1
        src=$?; echo "compute-sanitizer $tool rc=$src: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
        [ $src -ne 0 ] && rc=1
      done ;;
    bench)
      timeout "${BENCH_TIMEOUT:-300}" "$BENCH" "$PGKM_CUDA_PLUGIN" "${bench_args[@]}" 2>&1 | tee "$OUT/kernel_bench.log" ;;
    ncu)
      # one streamed mapping launch (full-size tiles, n = 20,000), clocks left as they are
      timeout 90 ncu --clock-control none -k regex:map_accumulate -s 4 -c 1 --section SpeedOfLight \
        --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
        "$ENGINE" --gtest_filter=KernelGpuModes.InterruptStopsTheBuildAndThePass >"$OUT/ncu_map.log" 2>&1
      echo "ncu rc=$?"; grep -vE "^\[|^Running|^Note|^$" "$OUT/ncu_map.log" | grep -E "Throughput|Occupancy|Stall|Pipe|Issue|Duration|Registers|Warp Cycles|Eligible|Active Warps|Executed Ipc|    [A-Z]" | head -60 ;;
  esac
  echo "[$step: $(( $(date +%s) - t0 )) s]"
done
exit $rc
