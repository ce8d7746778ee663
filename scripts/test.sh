#!/bin/bash
# test.sh: set up and run every pg_kmeans test (run as root on Debian 12).
#
#   scripts/test.sh
#
# Phases: Debian packages, build (CUDA plugin too when nvcc exists), make
# install, engine unit tests (ctest), the bit-exact ones again built for
# aarch64 under qemu-user, a private PostgreSQL cluster, pg_regress
# (make installcheck), libpqxx integration tests, the Python comparison with
# scikit-learn; the cluster is stopped at the end. The last line is
#   pg_kmeans tests: N passed, M failed
# and the exit status is non-zero when anything failed. Logs: $BUILD_DIR/test-logs/.
# Knobs: see scripts/common.sh; PGKM_TEST_PORT (55611), PGKM_TEST_PGDIR
# (/tmp/pgkm-test-PORT), PGKM_TEST_ONLY="unit arm regress integration python".
set -uo pipefail
source "$(dirname "$0")/common.sh"
cd "$ROOT"

PORT=${PGKM_TEST_PORT:-55611}
PGDIR=${PGKM_TEST_PGDIR:-/tmp/pgkm-test-$PORT}
ONLY=${PGKM_TEST_ONLY:-unit arm regress integration python}
LOGS=$ROOT/$BUILD_DIR/test-logs
PASSED=0; FAILED=0
SUMMARY=()
FAILURES=()

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }

# record PHASE SECONDS PASSED FAILED [NOTE]
record() {
  PASSED=$((PASSED + $3)); FAILED=$((FAILED + $4))
  SUMMARY+=("$(printf '%-12s %7ss  %4d passed %4d failed  %s' "$1" "$2" "$3" "$4" "${5:-}")")
  [ "$4" -gt 0 ] && FAILURES+=("$1")
  return 0
}

# Run a setup step; a failure counts as one failed test and ends the run.
setup_step() {
  local name=$1; shift
  local t0; t0=$(now)
  echo "== $name"
  if "$@" >"$LOGS/$name.log" 2>&1; then
    record "$name" "$(elapsed "$t0")" 0 0
  else
    tail -n 60 "$LOGS/$name.log"
    record "$name" "$(elapsed "$t0")" 0 1 "see $LOGS/$name.log"
    finish
  fi
}

# Run a test phase, show its output, count results with the parser given.
test_phase() {
  local name=$1 parser=$2; shift 2
  case " $ONLY " in *" $name "*) ;; *) return 0 ;; esac
  local t0 rc p f; t0=$(now)
  echo "== $name"
  "$@" 2>&1 | tee "$LOGS/$name.log"
  rc=${PIPESTATUS[0]}
  read -r p f < <($parser "$LOGS/$name.log")
  # A non-zero exit with no failed test counted (crash, no tests found) is a failure.
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; echo "$name: no tests ran" | tee -a "$LOGS/$name.log"; fi
  record "$name" "$(elapsed "$t0")" "$p" "$f" "exit $rc"
}

# Parsers print "PASSED FAILED" for one log.
count_ctest() {   # "83% tests passed, 2 tests failed out of 12"
  local line; line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -1)
  if [ -z "$line" ]; then echo "0 0"; return; fi
  local f t; f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  t=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
  echo "$((t - f)) $f"
}
count_regress() { # "All 12 tests passed." / "2 of 12 tests failed."
  local line; line=$(grep -E 'tests? (passed|failed)' "$1" | tail -1)
  if [[ $line =~ All\ ([0-9]+)\ tests?\ passed ]]; then echo "${BASH_REMATCH[1]} 0"
  elif [[ $line =~ ([0-9]+)\ of\ ([0-9]+)\ tests?\ failed ]]; then
    echo "$((BASH_REMATCH[2] - BASH_REMATCH[1])) ${BASH_REMATCH[1]}"
  else echo "0 0"; fi
}
count_gtest() {   # "[  PASSED  ] 7 tests." / "[  FAILED  ] 2 tests, listed below:"
  local p f
  p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\..*/\1/p' "$1" | tail -1)
  f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?, listed below.*/\1/p' "$1" | tail -1)
  echo "${p:-0} ${f:-0}"
}
count_pytest() {  # "==== 9 passed, 1 failed, 2 errors in 12.3s ===="
  local line p f e; line=$(grep -E '^=+ .*[0-9]+ (passed|failed|error).* in [0-9.]+s' "$1" | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
  e=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+')
  echo "${p:-0} $(( ${f:-0} + ${e:-0} ))"
}

# No test may crash a backend: any crash in the server log is a failure,
# even when every test passed (a test might have reconnected).
check_server_log() {
  local t0; t0=$(now)
  cp "$PGDIR/server.log" "$LOGS/server.log" 2>/dev/null || return 0
  if grep -E "was terminated by signal|terminating any other active server processes" "$LOGS/server.log"; then
    record server-log "$(elapsed "$t0")" 0 1 "a backend crashed: see $LOGS/server.log"
  else
    record server-log "$(elapsed "$t0")" 1 0 "no backend crash"
  fi
}

CLUSTER_UP=0
finish() {
  if [ "$CLUSTER_UP" = 1 ]; then
    check_server_log
    "$ROOT/scripts/pg-cluster.sh" stop "$PGDIR" >/dev/null 2>&1 || true
    CLUSTER_UP=0
  fi
  echo
  echo "== summary (logs in $LOGS)"
  printf '%s\n' "${SUMMARY[@]}"
  printf 'total        %7ss\n' "$(elapsed "$T_START")"
  [ ${#FAILURES[@]} -gt 0 ] && echo "failed phases: ${FAILURES[*]}"
  echo "pg_kmeans tests: $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
  exit $?
}
trap 'echo "interrupted"; FAILED=$((FAILED+1)); finish' INT TERM

T_START=$(now)
mkdir -p "$LOGS"

if [ "${SKIP_DEPS:-0}" != 1 ]; then
  DEPS_ARGS=()
  case " $ONLY " in *" arm "*) DEPS_ARGS=(--arm) ;; esac
  setup_step deps "$ROOT/scripts/install-deps.sh" "${DEPS_ARGS[@]}"
fi
build() { reconfigure_if_changed && make -j"$JOBS" "${MAKE_VARS[@]}"; }
setup_step build build
grep -E '^(ENGINE_HAVE_CUDA|CUDA_PLUGIN)' "$BUILD_DIR/engine_link.mk" | sed 's/^/   /'
setup_step install make install "${MAKE_VARS[@]}"

test_phase unit count_ctest bash -c "cd '$BUILD_DIR' && ctest --output-on-failure -j$JOBS --timeout 300"

# The unit tests that pin bit-exact arithmetic (reference runs, exact row distances, k-means++,
# pruning, thread-count independence), built for aarch64 and run under qemu-user: what x86-64
# cannot show (FMA contraction, the portable paths). The whole set: bash tests/arm/qemu_check.sh.
ARM_TESTS='Reference*:RowDistance.*:Kmeanspp.*:KmeansppSample.*:KmeansppGroups.SameCentersAsTheFloatReferenceOnBlobs'
ARM_TESTS+=':KmeansppGroups.ExactTies*:Determinism.UpdateMatches*:Invariants*:PrunedAssign*:Nearest*:Units.*'
ARM_TESTS+=':ThreadPool.*:GpuPlugin.*:Stats.*:CentroidSums.*'
test_phase arm count_gtest bash tests/arm/qemu_check.sh "$ARM_TESTS"

start_cluster() {
  # A fresh cluster every run; stop one left behind by an interrupted run first.
  if [ -f "$PGDIR/data/postmaster.pid" ]; then "$ROOT/scripts/pg-cluster.sh" stop "$PGDIR" || true; fi
  rm -rf "$PGDIR"
  local exports; exports=$("$ROOT/scripts/pg-cluster.sh" start "$PGDIR" "$PORT") || return 1
  eval "$exports"
  echo "$exports"
}
setup_step cluster start_cluster
eval "$(grep '^export ' "$LOGS/cluster.log")"
CLUSTER_UP=1

test_phase regress count_regress make installcheck "${MAKE_VARS[@]}"
if [ -f regression.diffs ] && [ -s regression.diffs ]; then
  cp regression.diffs "$LOGS/"; head -n 80 regression.diffs
fi

ITEST=$BUILD_DIR/tests/integration/integration_tests
test_phase integration count_gtest "$ITEST" --gtest_color=no

test_phase python count_pytest /usr/bin/python3 -m pytest -v -p no:cacheprovider tests/python

finish
