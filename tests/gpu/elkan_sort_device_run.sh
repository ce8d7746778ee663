#!/bin/bash
# tests/gpu/elkan_sort_device_run.sh: on a CUDA host, in one call: build
# (device_run.sh build), the plan tests, the Elkan and sort GPU tests, the
# Hamerly GPU tests as a guard, compute-sanitizer memcheck and racecheck on
# the small Elkan/sort cases; after the Elkan/sort tests (BENCH=1)
# `gpu_bench --hamerly` with lloyd, hamerly, elkan and sort at 245,760 x 32,
# k = 32 and 1024, sigma^2 0.0125 and 0.3. Logs to $OUT (default
# ./gpu-out); the last lines are a summary. Time caps (s): ES_TESTS (90),
# HAM_TESTS (45), ES_SAN (45 per tool), ES_BENCH (45).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
source tests/gpu/host_env.sh || exit 1
B=build-gpu
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$OUT/summary.txt"; }
OUT="$OUT" bash tests/gpu/device_run.sh build >"$OUT/summary.txt" 2>&1 || { cat "$OUT/summary.txt"; exit 1; }
stamp "build done"
export PGKM_CUDA_PLUGIN=$PWD/$B/cuda/pg_kmeans_cuda.so
T=$B/tests/gpu/gpu_engine_tests
ES='Methods/ElkanSortGpu.*:Paths/ElkanSortNearTies.*'
HAM='HamerlyGpu.*:Paths/HamerlyNearTies.*'
rc=0
$B/tests/gpu/gpu_plan_tests >"$OUT/plan_tests.log" 2>&1 || rc=1
stamp "plan tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/plan_tests.log" | tr '\n' ' ')"
timeout "${ES_TESTS:-90}" $T --gtest_filter="$ES" >"$OUT/elkan_sort_tests.log" 2>&1 || rc=1
stamp "elkan/sort tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/elkan_sort_tests.log" | tr '\n' ' ')"
grep -E "^\[ (elkan|sort) \]|^\[  FAILED  \]" "$OUT/elkan_sort_tests.log" | tee -a "$OUT/summary.txt"
grep -E "Failure|Expected|Which is|actual" "$OUT/elkan_sort_tests.log" | head -30 | tee -a "$OUT/summary.txt"
if [ "${BENCH:-0}" = 1 ]; then
  PGKM_BENCH_METHODS=lloyd,hamerly,elkan,sort PGKM_BENCH_HAMERLY_CASES=0,2,5,7 \
    timeout "${ES_BENCH:-45}" $B/bench/gpu_bench "$PGKM_CUDA_PLUGIN" --hamerly >"$OUT/elkan_sort_bench.log" 2>&1 || rc=1
  stamp "bench done"
  grep -E "^== |speed-up|^   (lloyd|hamerly|elkan|sort) " "$OUT/elkan_sort_bench.log" | tee -a "$OUT/summary.txt"
fi
timeout "${HAM_TESTS:-45}" $T --gtest_filter="$HAM" >"$OUT/hamerly_tests.log" 2>&1 || rc=1
stamp "hamerly tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/hamerly_tests.log" | tr '\n' ' ')"
grep -E "^\[  FAILED  \]" "$OUT/hamerly_tests.log" | tee -a "$OUT/summary.txt"
for tool in memcheck racecheck; do
  # the edge shapes and the GEMM path's shifted rows (/3, /8) under memcheck only
  # racecheck on the ABI cases alone (the edge shapes' many runs outlast its cap)
  SAN='Methods/ElkanSortGpu.AbiReportsPrunedPasses/*'
  [ $tool = memcheck ] && SAN="$SAN:Methods/ElkanSortGpu.TiesDuplicatesAndEdgeShapes/*:Paths/ElkanSortNearTies.SameRunAsLloyd/3:Paths/ElkanSortNearTies.SameRunAsLloyd/8"
  timeout "${ES_SAN:-45}" compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="$SAN" \
    >"$OUT/sanitizer_$tool.log" 2>&1
  src=$?; [ $src -ne 0 ] && rc=1
  stamp "$tool rc=$src: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)  \]' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
done
stamp "status $rc"
exit $rc
