#!/bin/bash
# run_cpu_bench.sh: benchmark pg_kmeans' CPU engine against scikit-learn
# (PL/Python) and PostGIS ST_ClusterKMeans on the same tables, through SQL.
#
#   bench/run_cpu_bench.sh                      # full run: n=100k,1M  d=2,16  k=8,64
#   bench/run_cpu_bench.sh --sizes 100000 --repeats 1   # quick look
#
# As root on a fresh Debian 12 machine it installs what it needs
# (scripts/install-deps.sh --bench: PostGIS, postgresql-plpython3-15 pinned to
# the server's version, python3-sklearn, python3-psycopg2), builds and installs
# pg_kmeans (CPU only, build dir build-bench), starts a private cluster in
# $BENCH_DIR on port $BENCH_PORT as the postgres user, runs bench/cpu_bench.py
# and writes bench/results_cpu.json and the CPU section of bench/RESULTS.md.
# Arguments are passed to bench/cpu_bench.py (see --help there).
#
# Environment:
#   BENCH_DIR=/tmp/pgkm-bench BENCH_PORT=55701   private cluster location
#   BENCH_USE_PGENV=1     use the server named by PGHOST/PGPORT/PGUSER/PGDATABASE
#                         instead (it needs postgis, plpython3u and pg_kmeans)
#   BENCH_BUILD=0         skip make / make install of pg_kmeans
#   BENCH_KEEP_SERVER=1   leave the private server running afterwards
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BENCH_DIR=${BENCH_DIR:-/tmp/pgkm-bench}
BENCH_PORT=${BENCH_PORT:-55701}
BUILD_DIR=${BENCH_BUILD_DIR:-build-bench}
CMDLINE="bench/run_cpu_bench.sh${*:+ $*}"

say() { echo "run_cpu_bench: $*" >&2; }

# 1. Packages (no-op when present).
if [ "$(id -u)" = 0 ]; then
  scripts/install-deps.sh --bench
else
  say "not root: assuming postgis, plpython3u, python3-sklearn and python3-psycopg2 are installed"
fi

# 2. pg_kmeans itself, CPU engine only (the GPU benchmark is bench/gpu_*).
if [ "${BENCH_BUILD:-1}" = 1 ]; then
  say "building pg_kmeans (BUILD_DIR=$BUILD_DIR PGKM_CUDA=OFF)"
  make -s BUILD_DIR="$BUILD_DIR" PGKM_CUDA=OFF >/dev/null
  make -s install BUILD_DIR="$BUILD_DIR" PGKM_CUDA=OFF >/dev/null
fi

# 3. A server.
STARTED=0
if [ "${BENCH_USE_PGENV:-0}" = 1 ]; then
  say "using the server of the PG* environment (PGHOST=${PGHOST:-} PGPORT=${PGPORT:-})"
else
  if ! runuser -u postgres -- "$(pg_config --bindir)/pg_ctl" -D "$BENCH_DIR/data" status >/dev/null 2>&1; then
    STARTED=1
  fi
  eval "$(scripts/pg-cluster.sh start "$BENCH_DIR" "$BENCH_PORT")"
  export PGDATABASE=pgkm_bench
  psql -X -q -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'pgkm_bench'" | grep -q 1 ||
    psql -X -q -d postgres -c 'CREATE DATABASE pgkm_bench'
fi
stop_server() {
  if [ "$STARTED" = 1 ] && [ "${BENCH_KEEP_SERVER:-0}" != 1 ]; then
    scripts/pg-cluster.sh stop "$BENCH_DIR" >/dev/null 2>&1 || true
  fi
}
trap stop_server EXIT

# 4. Extensions and helpers. pg_kmeans is recreated so that the database runs
#    the SQL script that was just installed (kmeans_models is dropped with it).
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS plpython3u;
CREATE EXTENSION IF NOT EXISTS postgis;
DROP EXTENSION IF EXISTS pg_kmeans CASCADE;
CREATE EXTENSION pg_kmeans;
SQL
psql -X -q -v ON_ERROR_STOP=1 -c 'SET client_min_messages = warning' -f bench/cpu_bench_setup.sql

# 5. The benchmark (Debian's python3: psycopg2 is installed for it, not for pyenv's).
/usr/bin/python3 bench/cpu_bench.py --command "$CMDLINE" "$@"
