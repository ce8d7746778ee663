#!/bin/bash
# tests/gpu/run_gpu_suite.sh: the whole GPU suite on a bare CUDA host (H100),
# from a clean checkout plus .gpuhost/ (made on the development machine by
# scripts/gpu-host-bundle.sh: PostgreSQL, OpenBLAS/CBLAS/GoogleTest). Run from
# the repository root; logs go to $OUT (default ./gpu-out).
#   usage: bash tests/gpu/run_gpu_suite.sh [--no-bench | --bench-only]
# Steps: build engine + plugin + GPU tests + benchmark (CUDA on, sm_90); plan
# tests, GPU tests and compute-sanitizer (memcheck, racecheck) on small cases;
# PostgreSQL from the bundle; make install; pg_regress (make installcheck)
# with the GPU as default device ('auto'), skipping gpu_unavailable; SQL end
# to end (bench/gpu_sql_e2e.sh, GPU; E2E_DEVICES="gpu cpu" adds the CPU
# engine) and the SQL GPU checks (8 sessions, statement_timeout, cancel,
# k-means++ on data 4x the GPU budget); benchmarks: engine alone per shape
# (time/floor, CPU engine at 1M rows), the assignment paths side by side, the
# seed papers' setups, PyTorch + scikit-learn side by side; last, the inertia,
# iteration counts and times compared with the committed H100 run
# (tests/gpu/compare_suite.py against bench/gpu_suite_h100.log).
# About 10 minutes on the H100 host (16 cores), most of it benchmarks; where
# one command may run at most 10 minutes, run it as `--no-bench` (~4 min), then
# `--bench-only` (~6 min; builds first if build-gpu/ is gone) and compare all
# the logs with tests/gpu/compare_suite.py.
# SKIP_ENGINE_TESTS=1 skips build + GPU tests (device_run.sh); E2E=0 skips the
# SQL end to end and the SQL GPU checks.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; export OUT; mkdir -p "$OUT"
GPUHOST=${GPUHOST:-$PWD/.gpuhost}
for f in pg.tar.xz pg-up.sh deps.tar.xz; do
  [ -f "$GPUHOST/$f" ] || { echo "missing $GPUHOST/$f: run scripts/gpu-host-bundle.sh on the development machine"; exit 1; }
done
status=0
t_start=$(date +%s)
stamp() { echo "[suite] $1 done at $(( $(date +%s) - t_start )) s (status $status)"; }
mode=${1:-all}
if [ "$mode" = --bench-only ]; then
  [ -x build-gpu/bench/gpu_bench ] || bash tests/gpu/device_run.sh build || exit 1
elif [ "${SKIP_ENGINE_TESTS:-0}" != 1 ]; then
  bash tests/gpu/device_run.sh tests 2>&1 | tee "$OUT/suite_gpu_tests.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
source tests/gpu/host_env.sh || exit 1
stamp "build + GPU plan and engine tests + compute-sanitizer"

# PostgreSQL from the bundle, extension built and installed with the plugin
if [ "$mode" = --bench-only ]; then
  :
elif bash "$GPUHOST/pg-up.sh" "$GPUHOST/pg.tar.xz" >"$OUT/pg-up.log" 2>&1; then
  . /opt/pg/env
  make PG_CONFIG=$PG_CONFIG BUILD_DIR=build-pg PGKM_CUDA=ON \
       CMAKE_EXTRA="-DPGKM_BUILD_TESTS=OFF ${GPU_CMAKE_DEPS[*]}" -j"$(nproc)" >"$OUT/pg-build.log" 2>&1 &&
  make PG_CONFIG=$PG_CONFIG BUILD_DIR=build-pg install >>"$OUT/pg-build.log" 2>&1 || { tail -30 "$OUT/pg-build.log"; status=1; }
  # the backend must find OpenBLAS if it came from the deps bundle
  [ -d /opt/gpudeps/lib ] && cp -L /opt/gpudeps/lib/lib*.so* /opt/pg/lib/ 2>/dev/null
  # device => 'auto' is kmeans()'s default, so the suite runs on the GPU here; the
  # plugin is found at $pkglibdir/pg_kmeans_cuda.so (installed above)
  # the Makefile's REGRESS (its schedule), less gpu_unavailable
  tests=$(make -s PG_CONFIG=$PG_CONFIG print-regress | tr ' ' '\n' | grep -vx gpu_unavailable | tr '\n' ' ')
  # the expected files name the bootstrap superuser "postgres" (Debian's); the
  # bundle's is "pg": run the suite as a "postgres" superuser as on Debian
  psql -X -q -c "DO \$\$BEGIN CREATE ROLE postgres SUPERUSER LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END\$\$"
  PGUSER=postgres make PG_CONFIG=$PG_CONFIG BUILD_DIR=build-pg installcheck REGRESS="$tests" >"$OUT/installcheck.log" 2>&1 || status=1
  tail -15 "$OUT/installcheck.log"
  [ -f regression.diffs ] && cp regression.diffs "$OUT/"
  stamp "PostgreSQL + extension build + pg_regress"
  if [ "${E2E:-1}" = 1 ]; then
    DEVICES=${E2E_DEVICES:-gpu} timeout ${E2E_TIMEOUT:-300} bash bench/gpu_sql_e2e.sh 2>&1 | tee "$OUT/sql_e2e.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    stamp "SQL end to end"
    timeout ${CHECKS_TIMEOUT:-150} bash tests/gpu/sql_gpu_checks.sh 2>&1 | tee "$OUT/sql_gpu_checks.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    stamp "SQL GPU checks"
  fi
else
  cat "$OUT/pg-up.log"; status=1
fi

if [ "$mode" != --no-bench ]; then
  P="$PWD/build-gpu/cuda/pg_kmeans_cuda.so"
  { timeout 330 build-gpu/bench/gpu_bench "$P" --cpu-iters 1
    timeout 200 build-gpu/bench/gpu_bench "$P" --paths --sweep-n 4000000
    timeout 120 build-gpu/bench/gpu_bench "$P" --papers; } 2>&1 | tee "$OUT/gpu_bench.log"
  stamp "engine, paths and papers benchmarks"
  PYTHONUNBUFFERED=1 timeout 420 python3 bench/gpu_torch_bench.py "$P" 2>&1 | tee "$OUT/torch_bench.log"
  stamp "PyTorch and scikit-learn side by side"
  python3 tests/gpu/compare_suite.py bench/gpu_suite_h100.log "$OUT/gpu_bench.log" "$OUT/torch_bench.log" \
    "$OUT/sql_e2e.log" 2>&1 | tee "$OUT/compare_suite.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
echo "suite status: $status ($(( $(date +%s) - t_start )) s)"
exit $status
