#!/bin/bash
# bench/run_gpu_compare.sh: the engine table of two CUDA plugins on the same
# shapes and data, one after the other in one session (timings comparable:
# the same card, clocks and data), on blobs and on U[0,1)^d.
#   usage: bench/run_gpu_compare.sh GPU_BENCH PLUGIN_A PLUGIN_B SHAPES [gpu_bench args...]
#   e.g.   bench/run_gpu_compare.sh build-gpu/bench/gpu_bench main.so build-gpu/cuda/pg_kmeans_cuda.so \
#            10000000:2:1024,10000000:16:1024 --cpu-iters 0
set -uo pipefail
bench=$1 a=$2 b=$3 shapes=$4; shift 4
for data in "" --uniform; do
  for p in "$a" "$b"; do
    echo "== $p ${data:-(blobs)}"
    "$bench" "$p" --shapes "$shapes" $data "$@" | grep -v "^(floor" | sed '/^$/d'
  done
done
