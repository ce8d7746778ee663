#!/bin/bash
# The whole CPU comparison (bench/cpu_libs_bench.py) on one machine, from a
# checkout: builds the engine's two benchmark tools (no PostgreSQL, no CUDA,
# no BLAS needed), then runs the comparison; arguments go to the script.
#
#   bench/run_cpu_libs_bench.sh --threads 1,2                      # with internet (PyPI)
#   bench/run_cpu_libs_bench.sh --wheels DIR --threads 1,2,4,8,16  # offline: DIR from --fetch-wheels
#
# Offline, DIR holds the faiss-cpu and threadpoolctl wheels (and numpy as a
# fallback) fetched beforehand with `bench/cpu_libs_bench.py --fetch-wheels DIR`;
# NumPy and scikit-learn come from the machine's own Python.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${PGKM_BENCH_BUILD:-build-cpubench}
cmake -S . -B "$B" -DPGKM_CUDA=OFF -DPGKM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release > "$B.configure.log"
cmake --build "$B" --target engine_file_bench cpu_peak -j"$(nproc)" > "$B.build.log"
echo "git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, $(date -u +%FT%TZ)"
exec python3 bench/cpu_libs_bench.py --build-dir "$B" --venv "${PGKM_BENCH_VENV:-$PWD/$B/venv}" "$@"
