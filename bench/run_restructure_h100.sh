#!/bin/bash
# Issue 10 evidence: gpu_bench's engine table from 8d30887 (before the restructure)
# and 9cbee19 (after it) on one GPU, interleaved before/after/before/after,
# then --papers once each while time is left. One log in $OUT.
# Needs bundle.tar.xz beside this script: before/{gpu_bench,pg_kmeans_cuda.so}
# built from 8d30887, after/{gpu_bench,pg_kmeans_cuda.so} from 9cbee19 (commands in
# bench/RESULTS.md, "Restructure only"), gpudeps/lib/{libopenblas.so.0,libgfortran.so.5,
# libquadmath.so.0} from .gpuhost/deps.tar.xz, SHA256SUMS of the four binaries.
# Compare with bench/restructure_compare.py $OUT/gpu_restructure_h100.log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
W=/tmp/evid10; rm -rf $W; mkdir -p $W
tar -C $W -xJf "$here/bundle.tar.xz" || exit 1
export LD_LIBRARY_PATH=$W/gpudeps/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for v in PGKM_CUDA_PATH PGKM_CUDA_SUMS PGKM_CUDA_GEMM_BPS PGKM_CUDA_GEMM_TILE_MB PGKM_CUDA_TILED_MAX_K \
  PGKM_CUDA_TF32 PGKM_BENCH_FAST PGKM_CUDA_PLUGIN; do unset $v; done
OUT=${OUT:-$PWD/evid10-out}; mkdir -p "$OUT"
LOG=$OUT/gpu_restructure_h100.log
LIMIT=${LIMIT:-400}
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
gpu_state() {
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,utilization.gpu --format=csv
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv
}
{ echo "# $(date -u +%FT%TZ), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB host memory"
  gpu_state; (cd $W && sha256sum -c SHA256SUMS); } 2>&1 | tee "$LOG"
run() {	# build round args...
  local w=$1 r=$2; shift 2
  local left=$(( LIMIT - $(el) ))
  if [ $left -lt 20 ]; then echo "=== SKIP $w round $r: $left s left" | tee -a "$LOG"; return; fi
  echo "=== BEGIN $w round $r at $(el) s: gpu_bench PLUGIN $* ===" | tee -a "$LOG"
  timeout $left $W/$w/gpu_bench $W/$w/pg_kmeans_cuda.so "$@" 2>&1 | tee -a "$LOG"
  echo "=== END $w round $r at $(el) s (rc ${PIPESTATUS[0]}) ===" | tee -a "$LOG"
}
run before 1 --cpu-iters 0
run after 1 --cpu-iters 0
run before 2 --cpu-iters 0
run after 2 --cpu-iters 0
if [ $(el) -lt $(( LIMIT - 90 )) ]; then
  run before 3 --papers
  run after 3 --papers
fi
{ echo "# end at $(el) s"; gpu_state; } 2>&1 | tee -a "$LOG"
