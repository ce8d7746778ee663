#!/bin/bash
# run_kernel_bench.sh: the CPU kernel k-means engine on Popcorn's six data
# set shapes (synthetic stand-ins; see bench/kernel_bench.cpp), k = 10, 50,
# 100, exactly 30 passes each, polynomial kernel gamma 1, coef0 1, degree 2.
#
#   bench/run_kernel_bench.sh [threads] [max_n] > bench/kernel_bench_cpu.log
#
# Shapes whose n exceeds max_n (default 20000: K = 1.6 GB) are subsampled to
# max_n rows, and the line says so; K is n^2 float32 and the build is n^2 d
# flops, so the full shapes need 10-25 GB of K on the CPU. Each line is
# preceded by the load average, since the box may be shared.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${KERNEL_BENCH:-$ROOT/build/bench/kernel_bench}
THREADS=${1:-0}
MAX_N=${2:-20000}
# name n d (Popcorn's Table: the six data sets)
SHAPES="Acoustic 78823 50
CIFAR-10 50000 3072
Ledgar 70000 19996
Letter 10500 26
MNIST 60000 780
SCOTUS 6400 126405"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), threads=$THREADS max_n=$MAX_N"
while read -r name n d; do
  run_n=$n
  note=""
  if [ "$n" -gt "$MAX_N" ]; then run_n=$MAX_N; note=" (subsampled from $n rows)"; fi
  echo "# $name$note load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$BENCH" "$name" "$run_n" "$d" "$THREADS" 30 10,50,100
done <<< "$SHAPES"
