#!/bin/bash
# tests/gpu/sql_gpu_checks.sh: GPU behaviour through SQL on the GPU host.
#   1. 8 sessions cluster on the one GPU at once: all succeed, identical answers
#      (deterministic sums), and identical to a single session's answer.
#   2. statement_timeout during a long GPU run: the error arrives within a
#      second of the timeout, the same session works afterwards, and the
#      backend's GPU memory is back to what it held after a finished run.
#   3. pg_cancel_backend from another session during a GPU run: same checks.
#   4. the default init (k-means++) on data 4x pg_kmeans.gpu_memory_limit: the
#      run streams and gives the resident answer; a budget too small to stream
#      fails with a detail that says to raise the limit.
#   5. method => 'auto' on the GPU: kmeans_fit gives 'lloyd''s model (inertia,
#      iterations, sizes) and records what it ran, Lloyd's passes first.
# Needs the server from tests/gpu/run_gpu_suite.sh and the tables from
# bench/gpu_sql_e2e.sh (e2e16_1m, e2e16). Prints "N passed, M failed".
set -uo pipefail
PSQL="psql -X -q -A -t -v ON_ERROR_STOP=1"
pass=0; fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
cols=$(for c in $(seq 1 16); do printf "'x%d'," $c; done); cols="ARRAY[${cols%,}]"
q_small="SELECT count(*) || ' ' || round(sum(distance)::numeric, 3) FROM kmeans('e2e16_1m', $cols, 64, max_iter => 30, tol => 0, seed => 7, device => 'gpu')"
# uniform data converges slowly: a long run (4M rows, k = 4096) whose deadline falls in the iterations
q_long="SELECT count(*) FROM kmeans('unif16', $cols, 4096, max_iter => 100000, tol => 0, init => 'random', device => 'gpu')"
sel=$(for c in $(seq 1 16); do printf 'random()::real AS x%d,' $c; done)
$PSQL -c "DROP TABLE IF EXISTS unif16; CREATE UNLOGGED TABLE unif16 AS SELECT ${sel%,} FROM generate_series(1, 4000000)" >/dev/null

# MiB of GPU memory held by one backend process (0 if none).
gpu_mem() {
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
    awk -F', ' -v p="$1" '$1 == p { print $2; found = 1 } END { if (!found) print 0 }'
}

$PSQL -c "CREATE EXTENSION IF NOT EXISTS pg_kmeans" >/dev/null
# 1. eight sessions at once
ref=$($PSQL -c "$q_small")
for i in $(seq 1 8); do $PSQL -c "$q_small" >/tmp/conc_$i.out 2>&1 & done
wait
same=0
for i in $(seq 1 8); do [ "$(cat /tmp/conc_$i.out)" = "$ref" ] && same=$((same + 1)); done
if [ $same -eq 8 ]; then ok "8 concurrent GPU sessions, all equal to the single-session answer ($ref)"
else bad "8 concurrent GPU sessions: $same of 8 match '$ref'"; head -3 /tmp/conc_*.out; fi

# 2. statement_timeout in one session, then the same session works again
TIMEOUT_S=1
cat >/tmp/timeout.sql <<SQL
SELECT pg_backend_pid();
$q_small;
SELECT 'mem_after_run';
\! sleep 2
SET statement_timeout = '${TIMEOUT_S}s';
\set ON_ERROR_STOP 0
SELECT extract(epoch FROM clock_timestamp());
$q_long;
SELECT extract(epoch FROM clock_timestamp());
RESET statement_timeout;
$q_small;
SQL
$PSQL -f /tmp/timeout.sql >/tmp/timeout.out 2>&1 &
psql_pid=$!
for _ in $(seq 1 120); do grep -q mem_after_run /tmp/timeout.out && break; sleep 0.25; done
pid=$(head -1 /tmp/timeout.out)
mem_run=$(gpu_mem "$pid")
wait $psql_pid
mem_end=$(gpu_mem "$pid")
cat /tmp/timeout.out | sed 's/^/    /'
t_start=$(sed -n 4p /tmp/timeout.out); t_end=$(grep -A1 'statement timeout' /tmp/timeout.out | tail -1)
if grep -q 'canceling statement due to statement timeout' /tmp/timeout.out; then
  lat=$(python3 -c "print(round($t_end - $t_start - $TIMEOUT_S, 3))" 2>/dev/null || echo "?")
  if python3 -c "import sys; sys.exit(0 if $lat < 1.0 else 1)" 2>/dev/null; then ok "statement_timeout stopped a GPU run ${lat}s after the deadline"
  else bad "statement_timeout latency ${lat}s"; fi
else bad "no statement_timeout error"; fi
[ "$(tail -1 /tmp/timeout.out)" = "$ref" ] && ok "the same session clusters again after the timeout" || bad "session after timeout: $(tail -1 /tmp/timeout.out)"
[ "$mem_run" = "$mem_end" ] && ok "backend GPU memory after the timeout = after a finished run (${mem_end} MiB, the CUDA context)" \
  || bad "backend GPU memory after a run ${mem_run} MiB, after the timeout ${mem_end} MiB"

# 3. pg_cancel_backend from another session
$PSQL -c "SELECT 'app:' || pg_backend_pid()" -c "$q_long" >/tmp/cancel.out 2>&1 &
bg=$!
sleep 1.2
t0=$(date +%s.%N)
$PSQL -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%max_iter => 100000%' AND pid <> pg_backend_pid()" >/dev/null
wait $bg
t1=$(date +%s.%N)
lat=$(python3 -c "print(round($t1 - $t0, 3))")
if grep -q 'canceling statement due to user request' /tmp/cancel.out && python3 -c "import sys; sys.exit(0 if $lat < 1.0 else 1)"; then
  ok "pg_cancel_backend stopped a GPU run in ${lat}s"
else bad "cancel: ${lat}s, $(tail -2 /tmp/cancel.out)"; fi
[ "$($PSQL -c 'SELECT 1')" = 1 ] && ok "server accepts queries after the cancel" || bad "server after cancel"

# 4. k-means++ with the data 4x the GPU budget: e2e16_1m is 1M rows x 16 real
#    (64 MB of floats), 16 MB streams it; the answer is the resident one ($ref)
st=$($PSQL -c "SET pg_kmeans.gpu_memory_limit = '16MB'" -c "$q_small" 2>&1)
if [ "$st" = "$ref" ]; then ok "k-means++ on data 4x the GPU budget (64 MB through 16 MB) gives the resident answer ($st)"
else bad "k-means++ on data 4x the GPU budget: '$st', resident '$ref'"; fi
err=$($PSQL -c "SET pg_kmeans.gpu_memory_limit = '2MB'" -c "$q_small" 2>&1)
echo "$err" | sed 's/^/    /'
if grep -q "raise the GPU memory limit" <<<"$err" && grep -q "HINT:  Raise pg_kmeans.gpu_memory_limit" <<<"$err"; then
  ok "a GPU budget too small to stream (2 MB) says to raise the limit, in the detail and the hint"
else bad "a GPU budget too small to stream: detail or hint does not say to raise the limit"; fi

# 5. 'auto' on the GPU against 'lloyd': 1M x 16, k = 256 (Hamerly is auto's candidate)
fit() {
  $PSQL -c "SELECT iterations || ' ' || inertia || ' ' || md5(sizes::text) || ' ' || method_used
            FROM kmeans_fit('gpu_checks_$1', 'e2e16_1m', $cols, 256, method => '$1', init => 'random',
                            seed => 7, tol => 0, max_iter => 80, device => 'gpu')"
}
lloyd_fit=$(fit lloyd 2>&1); auto_fit=$(fit auto 2>&1)
echo "    lloyd: $lloyd_fit"; echo "    auto:  $auto_fit"
used=$(cut -d' ' -f4- <<<"$auto_fit")
if [ "$(cut -d' ' -f1-3 <<<"$auto_fit")" = "$(cut -d' ' -f1-3 <<<"$lloyd_fit")" ] &&
   { [ "$used" = lloyd ] || [ "${used#lloyd, then }" != "$used" ]; }; then
  ok "method => 'auto' on the GPU: lloyd's model (iterations, inertia, sizes), method_used '$used'"
else bad "method => 'auto' on the GPU: '$auto_fit' against lloyd's '$lloyd_fit'"; fi
$PSQL -c "SELECT kmeans_drop_model('gpu_checks_lloyd'), kmeans_drop_model('gpu_checks_auto')" >/dev/null

echo "sql gpu checks: $pass passed, $fail failed"
[ $fail -eq 0 ]
