#!/bin/bash
# demo.sh: set up pg_kmeans and show it working (run as root on Debian 12).
#
#   scripts/demo.sh
#
# Installs the Debian packages, builds and installs the extension, starts a
# private PostgreSQL cluster in ./.pgdata (owned by the unprivileged
# `postgres` user, unix socket only, port $PGKM_DEMO_PORT or 55601), loads
# 100,000 sample points and runs kmeans_centroids, kmeans, kmeans_fit and
# kmeans_predict. The cluster keeps running; the script prints how to connect
# and how to stop it. Knobs: see scripts/common.sh.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$ROOT"
PORT=${PGKM_DEMO_PORT:-55601}
PGDIR=${PGKM_DEMO_PGDIR:-$ROOT/.pgdata}

step() { echo "== $*" >&2; }

if [ "${SKIP_DEPS:-0}" != 1 ]; then
  step "Debian packages"; scripts/install-deps.sh
fi
step "build (make -j$JOBS)"
{ reconfigure_if_changed && make -s -j"$JOBS" "${MAKE_VARS[@]}"; } >"$ROOT/.demo-build.log" 2>&1 || { tail -40 "$ROOT/.demo-build.log"; exit 1; }
step "install"
make -s install "${MAKE_VARS[@]}" >>"$ROOT/.demo-build.log" 2>&1 || { tail -40 "$ROOT/.demo-build.log"; exit 1; }
# The server runs as `postgres`, which cannot enter a checkout under a 0700
# home directory (e.g. /root); fall back to a folder it can reach.
if [ -z "${PGKM_DEMO_PGDIR:-}" ] && id postgres >/dev/null 2>&1 &&
   ! runuser -u postgres -- test -x "$ROOT"; then
  PGDIR=/var/tmp/pg_kmeans-demo
  echo "note: user postgres cannot reach $ROOT; the cluster goes to $PGDIR" >&2
fi
step "private cluster in $PGDIR (port $PORT)"
EXPORTS=$(scripts/pg-cluster.sh start "$PGDIR" "$PORT")
eval "$EXPORTS"
step "sample data and clustering"
psql -X -q -f scripts/demo.sql
cat <<MSG

The cluster is still running. To use it:
  $EXPORTS
  psql
Stop it with:  scripts/pg-cluster.sh stop $PGDIR
MSG
