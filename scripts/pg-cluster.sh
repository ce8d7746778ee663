#!/bin/bash
# pg-cluster.sh: a private PostgreSQL 15 cluster in a local folder.
#
#   eval "$(scripts/pg-cluster.sh start DIR [PORT])"   # prints export PGHOST=... lines
#   scripts/pg-cluster.sh stop DIR
#   scripts/pg-cluster.sh status DIR
#
# The server runs as the unprivileged `postgres` user (initdb refuses root;
# the user is created when missing), keeps its data in DIR/data, listens only
# on a unix socket in DIR (no TCP) and trusts local connections. It is tuned
# for tests (fsync off). Everything except the export lines goes to stderr.
set -euo pipefail

CMD=${1:-}
DIR=${2:-}
PORT=${3:-55601}
PGUSER_OS=${PGKM_OS_USER:-postgres}

if [ -z "$CMD" ] || [ -z "$DIR" ]; then
  sed -n '2,11p' "$0" >&2; exit 2
fi
PG_CONFIG=${PG_CONFIG:-pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

# Run a command as the server user, from / (the caller's folder may be closed to it).
as_pg() {
  if [ "$(id -un)" = "$PGUSER_OS" ]; then "$@"; else (cd / && runuser -u "$PGUSER_OS" -- "$@"); fi
}

ensure_user() {
  id "$PGUSER_OS" >/dev/null 2>&1 && return
  if [ "$(id -u)" != 0 ]; then echo "pg-cluster: user $PGUSER_OS missing and not root" >&2; exit 1; fi
  useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/bash "$PGUSER_OS"
  echo "pg-cluster: created system user $PGUSER_OS" >&2
}

# The server user must be able to reach DIR: check every parent directory.
check_path() {
  if ! as_pg test -x "$DIR" -a -w "$DIR"; then
    echo "pg-cluster: user $PGUSER_OS cannot use $DIR (a parent directory is not" \
         "traversable, e.g. a 0700 home directory); pick a folder under /tmp or /work" >&2
    exit 1
  fi
}

case $CMD in
start)
  ensure_user
  [ "$(id -u)" = 0 ] && chown "$PGUSER_OS": "$DIR"
  check_path
  if [ ! -f "$DIR/data/PG_VERSION" ]; then
    as_pg "$PGBIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
        --no-sync >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
  fi
  if as_pg "$PGBIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
    echo "pg-cluster: already running in $DIR" >&2
    PORT=$(sed -n '4p' "$DIR/data/postmaster.pid")
  else
    as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-p $PORT -k $DIR -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=40 -c shared_buffers=256MB" \
      start >&2 || { tail -20 "$DIR/server.log" >&2; exit 1; }
  fi
  echo "export PGHOST=$DIR PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres"
  ;;
stop)
  if [ -f "$DIR/data/postmaster.pid" ]; then
    as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -m fast -w stop >&2
  else
    echo "pg-cluster: no server running in $DIR" >&2
  fi
  ;;
status)
  as_pg "$PGBIN/pg_ctl" -D "$DIR/data" status ;;
*)
  echo "pg-cluster: unknown command '$CMD' (start|stop|status)" >&2; exit 2 ;;
esac
