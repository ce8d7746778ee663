#!/bin/bash
# install-deps.sh: install the Debian 12 packages that pg_kmeans needs to
# build and to run its tests. Idempotent and quiet; when everything is already
# installed it does nothing (not even apt-get update) and takes well under 1 s.
#
#   scripts/install-deps.sh             # build + tests
#   scripts/install-deps.sh --bench     # also PostGIS (bench/ compares with ST_ClusterKMeans)
#   scripts/install-deps.sh --arm       # also the aarch64 cross compiler and qemu-user (tests/arm)
#
# PostgreSQL packages are pinned to the version of postgresql-15 that is
# installed (or, on a bare machine, to its candidate): postgresql-plpython3-15
# depends on the exact server version, and an unpinned install of the dev or
# plpython package would upgrade the running server mid-run when
# bookworm-security has a newer point release (see shared/notes/toolchain.md §1).
set -euo pipefail

BENCH=0 ARM=0
for arg in "$@"; do
  case $arg in
    --bench|--postgis) BENCH=1 ;;
    --arm) ARM=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
[ "${PGKM_BENCH_DEPS:-0}" = 1 ] && BENCH=1

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -qq --no-install-recommends -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

# Unpinned packages: toolchain, libraries, Python side of the tests.
PLAIN=(g++ make cmake pkg-config libpqxx-dev libopenblas-dev googletest libgtest-dev libgmock-dev
       python3 python3-numpy python3-sklearn python3-psycopg2 python3-pytest procps)
# Packages built from the postgresql-15 source: pinned to one version.
PG_PINNED=(postgresql-15 postgresql-client-15 postgresql-server-dev-15 postgresql-plpython3-15 libpq-dev libpq5)
BENCH_PKGS=(postgresql-15-postgis-3)
ARM_PKGS=(g++-aarch64-linux-gnu qemu-user)

# Installed version of a package, or nothing (never fails: set -e + pipefail).
installed_version() { { dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$1" 2>/dev/null || true; } | sed -n 's/^ii *//p'; }

missing=()
for p in "${PLAIN[@]}" "${PG_PINNED[@]}"; do
  [ -n "$(installed_version "$p")" ] || missing+=("$p")
done
if [ "$BENCH" = 1 ]; then
  for p in "${BENCH_PKGS[@]}"; do [ -n "$(installed_version "$p")" ] || missing+=("$p"); done
fi
if [ "$ARM" = 1 ]; then
  for p in "${ARM_PKGS[@]}"; do [ -n "$(installed_version "$p")" ] || missing+=("$p"); done
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing ${missing[*]}; run as root to install them" >&2; exit 1
fi
echo "install-deps: installing ${missing[*]}"

# A fresh image has empty package lists; refresh them once (quietly).
apt-get update -qq

# The PostgreSQL version everything is pinned to.
PGV=$(installed_version postgresql-15)
if [ -z "$PGV" ]; then
  PGV=$(apt-cache policy postgresql-15 | sed -n 's/^ *Candidate: *//p')
fi
if [ -z "$PGV" ] || [ "$PGV" = "(none)" ]; then
  echo "install-deps: no postgresql-15 package available (is this Debian 12?)" >&2; exit 1
fi

targets=()
for p in "${missing[@]}"; do
  case " ${PG_PINNED[*]} " in
    *" $p "*) targets+=("$p=$PGV") ;;
    *) targets+=("$p") ;;
  esac
done
# libpqxx-dev pulls libpq-dev; pin it (and libpq5) too when they are not yet
# installed or already at the server's version, so that apt does not take the
# newer security point release and upgrade the client library alongside.
for p in libpq-dev libpq5; do
  v=$(installed_version "$p")
  if [ -z "$v" ] || [ "$v" = "$PGV" ]; then
    case " ${targets[*]} " in *" $p="*) ;; *) targets+=("$p=$PGV") ;; esac
  fi
done

apt-get install "${APT_OPTS[@]}" "${targets[@]}" >/dev/null
echo "install-deps: done (PostgreSQL packages pinned to $PGV)"
