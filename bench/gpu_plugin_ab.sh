#!/bin/bash
# gpu_plugin_ab.sh: builds of the CUDA plugin alternated under one gpu_bench
# (its engine table: per-iteration GPU time, path, inertia/n) on the same
# data and start, ROUNDS rounds. Plugins of the same ABI; built here (sm_90
# included) and carried to the GPU host, or built there.
#   usage: bash bench/gpu_plugin_ab.sh GPU_BENCH ROUNDS n:d:k[,...] LABEL=PLUGIN.so [LABEL=PLUGIN.so ...]
set -euo pipefail
bench=${1:?GPU_BENCH} rounds=${2:?ROUNDS} shapes=${3:?n:d:k,...}
shift 3
[ $# -ge 1 ] || { echo "usage: $0 GPU_BENCH ROUNDS n:d:k[,...] LABEL=PLUGIN.so ..." >&2; exit 2; }
for r in $(seq "$rounds"); do
  for b in "$@"; do
    echo "# ${b%%=*}, round $r (${b#*=})"
    "$bench" "${b#*=}" --shapes "$shapes" --cpu-iters 0 | sed -n '/^ *n  *d/,$p'
  done
done
