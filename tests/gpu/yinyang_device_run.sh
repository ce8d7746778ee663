#!/bin/bash
# tests/gpu/yinyang_device_run.sh: on a CUDA host, in one call: build the
# plugin, the GPU tests and gpu_bench (device_run.sh build); run the plan
# tests, the Yinyang and Hamerly GPU tests, `gpu_bench --hamerly` (lloyd,
# hamerly and yinyang side by side), and compute-sanitizer memcheck and
# racecheck on the small Yinyang cases. Logs go to $OUT (default ./gpu-out);
# the last lines are a summary. Time caps (s): YY_TESTS (120), HAM_TESTS (90),
# YY_BENCH (150; YY_CASES: gpu_bench_hamerly.cpp's case numbers, all when
# unset), YY_SAN (70 per tool).
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
rc=0
$B/tests/gpu/gpu_plan_tests >"$OUT/plan_tests.log" 2>&1 || rc=1
stamp "plan tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/plan_tests.log" | tr '\n' ' ')"
timeout "${YY_TESTS:-120}" $T --gtest_filter='YinyangGpu.*:Paths/YinyangNearTies.*' >"$OUT/yinyang_tests.log" 2>&1 || rc=1
stamp "yinyang tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/yinyang_tests.log" | tr '\n' ' ')"
grep -E "^\[ yinyang \]|^\[  FAILED  \]|Failure" "$OUT/yinyang_tests.log" | head -20 | tee -a "$OUT/summary.txt"
timeout "${HAM_TESTS:-90}" $T --gtest_filter='HamerlyGpu.*:Paths/HamerlyNearTies.*' >"$OUT/hamerly_tests.log" 2>&1 || rc=1
stamp "hamerly tests: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/hamerly_tests.log" | tr '\n' ' ')"
grep -E "^\[  FAILED  \]" "$OUT/hamerly_tests.log" | tee -a "$OUT/summary.txt"
PGKM_BENCH_HAMERLY_CASES="${YY_CASES:-}" timeout "${YY_BENCH:-150}" $B/bench/gpu_bench "$PGKM_CUDA_PLUGIN" --hamerly \
  >"$OUT/yinyang_bench.log" 2>&1 || rc=1
stamp "bench done"
grep -E "^== |speed-up|^   (lloyd|hamerly|yinyang)" "$OUT/yinyang_bench.log" | tee -a "$OUT/summary.txt"
for tool in memcheck racecheck; do
  # racecheck is slow on every kernel of the three runs per case: the smallest cases only
  SAN='YinyangGpu.CentredLevelEdgeShapes'
  [ $tool = memcheck ] && SAN="$SAN:YinyangGpu.TiesDuplicatesAndEdgeShapes:Paths/YinyangNearTies.SameRunAsLloyd/0"
  timeout "${YY_SAN:-70}" compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="$SAN" \
    >"$OUT/sanitizer_$tool.log" 2>&1
  src=$?; [ $src -ne 0 ] && rc=1
  stamp "$tool rc=$src: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)  \]' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
done
stamp "status $rc"
exit $rc
