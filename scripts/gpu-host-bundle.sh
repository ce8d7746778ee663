#!/bin/bash
# gpu-host-bundle.sh: build, on this (Debian 12) machine, everything a bare
# CUDA host needs to run tests/gpu/run_gpu_suite.sh, into OUTDIR (default
# .gpuhost/, git-ignored; send it along with the working tree):
#   pg.tar.xz    PostgreSQL 15 with pg_config, PGXS, pg_regress and server
#                headers (../shared/gpu-host/make-pg-bundle.sh)
#   pg-up.sh     starts that server on the host (../shared/gpu-host)
#   deps.tar.xz  one prefix, gpudeps/{lib,include}: OpenBLAS (pthread build)
#                with libgfortran and libquadmath, its cblas.h, GoogleTest and
#                GoogleMock archives and headers, from this machine's packages
# The suite needs nothing else from outside (no psycopg2: it talks to the
# server with psql). GPU_HOST_DIR overrides ../shared/gpu-host.
#   usage: scripts/gpu-host-bundle.sh [OUTDIR]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(realpath -m "${1:-$ROOT/.gpuhost}")
SHARED=${GPU_HOST_DIR:-$ROOT/../shared/gpu-host}
ARCH=x86_64-linux-gnu
BLAS_LIB=/usr/lib/$ARCH/openblas-pthread
BLAS_INC=/usr/include/$ARCH/openblas-pthread

need() {  # need PATH PACKAGE
  [ -e "$1" ] || { echo "missing $1: apt-get install $2" >&2; exit 1; }
}
need "$SHARED/make-pg-bundle.sh" "(../shared/gpu-host, or set GPU_HOST_DIR)"
need /usr/lib/postgresql/15/bin/postgres postgresql-15
need /usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress postgresql-server-dev-15
need "$BLAS_LIB/libopenblas.so.0" libopenblas0-pthread
need "$BLAS_INC/cblas.h" libopenblas-pthread-dev
need /usr/lib/$ARCH/libgfortran.so.5 libgfortran5
need /usr/lib/$ARCH/libquadmath.so.0 libquadmath0
need /usr/lib/$ARCH/libgtest.a libgtest-dev
need /usr/lib/$ARCH/libgmock.a libgmock-dev

mkdir -p "$OUT"
bash "$SHARED/make-pg-bundle.sh" "$OUT"
cp "$SHARED/pg-up.sh" "$OUT/pg-up.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
p=$work/gpudeps
mkdir -p "$p/lib" "$p/include"
cp -L "$BLAS_LIB/libopenblas.so.0" /usr/lib/$ARCH/libgfortran.so.5 /usr/lib/$ARCH/libquadmath.so.0 "$p/lib/"
ln -s libopenblas.so.0 "$p/lib/libopenblas.so"
cp -L "$BLAS_INC"/*.h "$p/include/"
cp -L /usr/lib/$ARCH/libgtest.a /usr/lib/$ARCH/libgtest_main.a /usr/lib/$ARCH/libgmock.a /usr/lib/$ARCH/libgmock_main.a "$p/lib/"
cp -rL /usr/include/gtest /usr/include/gmock "$p/include/"
tar -C "$work" -cJf "$OUT/deps.tar.xz" gpudeps

case "$OUT/" in
  "$ROOT"/*) git -C "$ROOT" check-ignore -q "$OUT" || echo "note: $OUT is not git-ignored" ;;
esac
ls -la "$OUT"
echo "on the GPU host, from the repository root with $(basename "$OUT")/ beside it: bash tests/gpu/run_gpu_suite.sh"
