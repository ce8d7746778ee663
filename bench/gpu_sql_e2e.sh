#!/bin/bash
# bench/gpu_sql_e2e.sh: kmeans() end to end through SQL on the GPU host, with the
# time split into scan / setup (buffers, upload to the GPU, init) / iterations /
# output, next to the time PostgreSQL takes to scan the same columns.
#
# Needs a running server with pg_kmeans installed (tests/gpu/run_gpu_suite.sh
# leaves one up: `. /opt/pg/env`). Tables are generated in parallel sessions.
#   usage: bash bench/gpu_sql_e2e.sh [rows_16col=10000000] [rows_768=1000000]
#   (rows_768 = 0 skips the array table; DEVICES="gpu" skips the CPU runs)
# Prints one line per measurement; the phase split comes from the INFO line
# "pg_kmeans timing" (pg_kmeans.progress = on).
set -uo pipefail
N16=${1:-10000000}
N768=${2:-1000000}
DEVICES=${DEVICES:-gpu cpu}
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
JOBS=$(nproc)
PSQL="psql -X -q -v ON_ERROR_STOP=1"

# Generate rows [lo, hi) of a table in JOBS parallel sessions.
gen() {
  local table=$1 rows=$2 select=$3
  local per=$(( (rows + JOBS - 1) / JOBS ))
  for j in $(seq 0 $((JOBS - 1))); do
    local lo=$(( j * per + 1 )) hi=$(( (j + 1) * per ))
    [ $hi -gt $rows ] && hi=$rows
    [ $lo -gt $hi ] && continue
    $PSQL -c "SELECT setseed($j / 1000.0); INSERT INTO $table $select FROM generate_series($lo, $hi) i" >/dev/null &
  done
  wait
}

t0=$(date +%s)
cols=$(for c in $(seq 1 16); do printf 'x%d real,' $c; done); cols=${cols%,}
$PSQL -c "CREATE EXTENSION IF NOT EXISTS pg_kmeans"
$PSQL -c "DROP TABLE IF EXISTS e2e16, e2e16_1m, e2e768; CREATE UNLOGGED TABLE e2e16 (id int, $cols);
          CREATE UNLOGGED TABLE e2e768 (id int, v real[]);
          ALTER TABLE e2e768 ALTER COLUMN v SET STORAGE PLAIN"
# 16 Gaussian-ish blobs: centre (i % 16) * 10 on every axis plus noise
sel16="SELECT i"; for c in $(seq 1 16); do sel16="$sel16, ((i % 16) * 10 + random() * 4 - 2)::real"; done
gen e2e16 "$N16" "$sel16"
[ "$N768" -gt 0 ] && gen e2e768 "$N768" "SELECT i, (SELECT array_agg(((i % 16) + random() + 0 * g)::real) FROM generate_series(1, 768) g)"
$PSQL -c "CREATE UNLOGGED TABLE e2e16_1m AS SELECT * FROM e2e16 WHERE id <= $(( N16 / 10 ))"
for t in e2e16 e2e16_1m e2e768; do $PSQL -c "VACUUM ANALYZE $t"; done
echo "data generated in $(( $(date +%s) - t0 )) s"
$PSQL -c "SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) FROM pg_class WHERE relname LIKE 'e2e%' ORDER BY 1"

sum16=$(for c in $(seq 1 16); do printf 'x%d+' $c; done); sum16=${sum16%+}
arr16=$(for c in $(seq 1 16); do printf "'x%d'," $c; done); arr16="ARRAY[${arr16%,}]"

# One statement timed twice in one session (\timing ms): the first run pays the
# session's one-time costs (CUDA context, plugin load), the second is warm.
timed() {
  local sql=$1
  $PSQL -c "SET jit = off" -c "SET pg_kmeans.progress = on" -c '\timing on' \
        -c '\echo cold' -c "$sql" -c '\echo warm' -c "$sql" 2>&1 |
    grep -E '^(cold|warm)$|^Time:|pg_kmeans timing|DETAIL:  scan|pg_kmeans done|device' | sed 's/^/    /'
}

for t in e2e16_1m e2e16; do
  echo "== $t: scan baseline (sum over all 16 columns)"
  timed "SELECT sum($sum16) FROM $t"
  for dev in $DEVICES; do
    echo "== $t: kmeans(k=64, max_iter=20, tol=0, init=random, device=$dev) returning every row"
    timed "SELECT count(*), sum(distance) FROM kmeans('$t', $arr16, 64, max_iter => 20, tol => 0, init => 'random', device => '$dev')"
  done
done
[ "$N768" -gt 0 ] || exit 0
# (an aggregate over every element, sum() over unnest(v), took 75 s warm on the
# H100 host: SQL-level per-element work is no fair floor, so the baseline is
# the deform of each row's array)
echo "== e2e768: scan baseline (detoast/deform only: sum of v[768])"
timed "SELECT sum(v[768]) FROM e2e768"
for dev in $DEVICES; do
  echo "== e2e768: kmeans(k=64, max_iter=20, tol=0, init=random, device=$dev)"
  timed "SELECT count(*), sum(distance) FROM kmeans('e2e768', ARRAY['v'], 64, max_iter => 20, tol => 0, init => 'random', device => '$dev')"
done
