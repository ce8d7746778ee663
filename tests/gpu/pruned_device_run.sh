#!/bin/bash
# tests/gpu/pruned_device_run.sh: on a CUDA host, in one call, the pruned GPU
# methods' checks: build (device_run.sh build), the plan tests, the Hamerly,
# Yinyang and Elkan/sort GPU tests, the rest of the GPU tests,
# compute-sanitizer memcheck on the small Yinyang, Elkan and sort cases and
# racecheck on two of them; with BENCH=1, then `gpu_bench --hamerly`
# (PGKM_BENCH_METHODS, default every method; BENCH_CASES: its case numbers).
# The method-switch and 'auto' tests (test_auto_gpu.cpp) run beside them.
# Logs go to $OUT (default ./gpu-out); the last lines are a summary. Each
# step runs under timeout, capped by what is left of DEADLINE (400 s) from
# the start. SAN_TOOLS (default "memcheck racecheck") picks the sanitizer's
# tools; SKIP_TESTS=1 runs the build and the bench alone.
#   usage (repository root): bash tests/gpu/pruned_device_run.sh
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
source tests/gpu/host_env.sh || exit 1
B=build-gpu
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$OUT/summary.txt"; }
# cap S: S seconds, or what is left before the deadline if less (at least 1)
cap() { local left=$(( ${DEADLINE:-400} - ($(date +%s) - t0) )); [ "$left" -lt "$1" ] && echo $(( left > 1 ? left : 1 )) || echo "$1"; }
passed() { grep -E '^\[  (PASSED|FAILED)  \]' "$1" | tr '\n' ' '; }
timeout "$(cap 150)" env OUT="$OUT" bash tests/gpu/device_run.sh build >"$OUT/summary.txt" 2>&1 ||
  { cat "$OUT/summary.txt"; echo "build failed or timed out"; exit 1; }
stamp "build done"
export PGKM_CUDA_PLUGIN=$PWD/$B/cuda/pg_kmeans_cuda.so
T=$B/tests/gpu/gpu_engine_tests
HAM='HamerlyGpu.*:Paths/HamerlyNearTies.*'
YY='YinyangGpu.*:Paths/YinyangNearTies.*'
ES='Methods/ElkanSortGpu.*:Paths/ElkanSortNearTies.*'
AUTO='AutoGpu.*'
rc=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
timeout "$(cap 15)" $B/tests/gpu/gpu_plan_tests >"$OUT/plan_tests.log" 2>&1 || rc=1
stamp "plan tests: $(passed "$OUT/plan_tests.log")"
run_tests() {  # run_tests NAME CAP FILTER
  timeout "$(cap "$2")" $T --gtest_filter="$3" >"$OUT/$1_tests.log" 2>&1 || rc=1
  stamp "$1 tests: $(passed "$OUT/$1_tests.log")"
  grep -E "^\[ (hamerly|yinyang|elkan|sort|auto) \]|^\[  FAILED  \]" "$OUT/$1_tests.log" | tee -a "$OUT/summary.txt"
  grep -E "Failure" -A4 "$OUT/$1_tests.log" | head -20 | tee -a "$OUT/summary.txt"
}
run_tests hamerly 30 "$HAM"
run_tests yinyang 30 "$YY"
run_tests elkan_sort 30 "$ES"
run_tests auto 120 "$AUTO"
run_tests other_gpu 90 "-$HAM:$YY:$ES:$AUTO"
for tool in ${SAN_TOOLS:-memcheck racecheck}; do
  # racecheck is slow on every kernel of a case's three engine runs: two small cases only
  SAN='YinyangGpu.CentredLevelEdgeShapes:HamerlyGpu.CentredLevelEdgeShapes:Methods/ElkanSortGpu.AbiReportsPrunedPasses/*'
  [ $tool = memcheck ] && SAN="$SAN:YinyangGpu.TiesDuplicatesAndEdgeShapes:Paths/YinyangNearTies.SameRunAsLloyd/0"
  [ $tool = memcheck ] && SAN="$SAN:Methods/ElkanSortGpu.TiesDuplicatesAndEdgeShapes/*:Paths/ElkanSortNearTies.SameRunAsLloyd/3"
  [ $tool = memcheck ] && SAN="$SAN:AutoGpu.SetMethodContract:HamerlyGpu.TiesDuplicatesAndEdgeShapes"
  timeout "$(cap $([ $tool = memcheck ] && echo 50 || echo 45))" compute-sanitizer --tool $tool --error-exitcode 9 \
    $T --gtest_filter="$SAN" >"$OUT/sanitizer_$tool.log" 2>&1
  src=$?; [ $src -ne 0 ] && rc=1
  stamp "$tool rc=$src: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)  \]' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
done
fi
if [ "${BENCH:-0}" = 1 ]; then
  PGKM_BENCH_METHODS="${PGKM_BENCH_METHODS:-lloyd,hamerly,yinyang,auto,elkan,sort}" PGKM_BENCH_HAMERLY_CASES="${BENCH_CASES:-}" \
    timeout "$(cap 300)" $B/bench/gpu_bench "$PGKM_CUDA_PLUGIN" --hamerly >"$OUT/pruned_bench.log" 2>&1 || rc=1
  stamp "bench done"
  grep -E "^== |speed-up|^   (lloyd|hamerly|yinyang|auto|elkan|sort) " "$OUT/pruned_bench.log" | tee -a "$OUT/summary.txt"
fi
stamp "status $rc"
exit $rc
