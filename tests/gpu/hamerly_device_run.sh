#!/bin/bash
# tests/gpu/hamerly_device_run.sh: on a CUDA host, in one call: build the
# plugin, the GPU tests and gpu_bench (build-gpu/); run the plan tests, the
# Hamerly GPU tests, `gpu_bench --hamerly`, the rest of the GPU tests, and
# compute-sanitizer memcheck and racecheck on the small Hamerly cases. Logs go to $OUT
# (default ./gpu-out); the last lines are a summary. Time caps (s): HAM_TESTS
# (150), HAM_BENCH (120), REST_TESTS (150), HAM_SAN (90 per tool).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
source tests/gpu/host_env.sh || exit 1
B=build-gpu
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$OUT/summary.txt"; }
# the machine's line and the build (device_run.sh's: build.log in $OUT)
OUT="$OUT" bash tests/gpu/device_run.sh build >"$OUT/summary.txt" 2>&1 || { cat "$OUT/summary.txt"; exit 1; }
stamp "build done"
export PGKM_CUDA_PLUGIN=$PWD/$B/cuda/pg_kmeans_cuda.so
T=$B/tests/gpu/gpu_engine_tests
HAM='HamerlyGpu.*:Paths/HamerlyNearTies.*'
rc=0
$B/tests/gpu/gpu_plan_tests >"$OUT/plan_tests.log" 2>&1 || rc=1
stamp "plan tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/plan_tests.log" | tr '\n' ' ')"
timeout "${HAM_TESTS:-150}" $T --gtest_filter="$HAM" >"$OUT/hamerly_tests.log" 2>&1 || rc=1
stamp "hamerly tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/hamerly_tests.log" | tr '\n' ' ')"
grep -E "^\[ hamerly \]" "$OUT/hamerly_tests.log" | tee -a "$OUT/summary.txt"
timeout "${HAM_BENCH:-120}" $B/bench/gpu_bench "$PGKM_CUDA_PLUGIN" --hamerly >"$OUT/hamerly_bench.log" 2>&1 || rc=1
stamp "bench done"
grep -E "^== |speed-up|^   (lloyd|hamerly)" "$OUT/hamerly_bench.log" | tee -a "$OUT/summary.txt"
timeout "${REST_TESTS:-150}" $T --gtest_filter="-$HAM" >"$OUT/other_gpu_tests.log" 2>&1 || rc=1
stamp "other gpu tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/other_gpu_tests.log" | tr '\n' ' ')"
grep -E "^\[  FAILED  \]" "$OUT/hamerly_tests.log" "$OUT/other_gpu_tests.log" | tee -a "$OUT/summary.txt"
for tool in memcheck racecheck; do
  # racecheck is slow on cuBLAS's kernels: the GEMM case (/3) under memcheck only
  SAN='HamerlyGpu.AbiReportsPrunedPasses:HamerlyGpu.TiesDuplicatesAndEdgeShapes:HamerlyGpu.CentredLevelEdgeShapes'
  [ $tool = memcheck ] && SAN="$SAN:Paths/HamerlyNearTies.SameRunAsLloyd/3"
  timeout "${HAM_SAN:-90}" compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="$SAN" \
    >"$OUT/sanitizer_$tool.log" 2>&1
  src=$?; [ $src -ne 0 ] && rc=1
  stamp "$tool rc=$src: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)  \]' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
done
stamp "status $rc"
exit $rc
