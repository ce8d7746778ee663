#!/bin/bash
# tests/arm/qemu_check.sh: the CPU engine on 64-bit ARM, without ARM hardware.
# Cross-compiles the engine and its unit tests for aarch64 (Debian's
# g++-aarch64-linux-gnu; GoogleTest built from /usr/src/googletest with the
# same compiler) and runs them under qemu-user. On aarch64 the engine's SIMD
# kernels, written with GCC vector extensions, compile to NEON; the x86
# target clones fall back to their portable versions.
#
#   bash tests/arm/qemu_check.sh [gtest filter]      # build in build-arm/, then run
#
# Installs its Debian packages with apt-get when missing. scripts/test.sh
# runs the bit-exact tests this way (its "arm" phase); the whole set takes
# about 6 minutes of emulation on 2 cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${PGKM_ARM_BUILD:-$ROOT/build-arm}
need=()
command -v aarch64-linux-gnu-g++ > /dev/null || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 > /dev/null || need+=(qemu-user)
[ -d /usr/src/googletest ] || need+=(googletest)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}"
fi
mkdir -p "$B"
cat > "$B/aarch64.cmake" <<'TOOLCHAIN'
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
TOOLCHAIN
GT=$B/gtest
if [ ! -f "$GT/lib/libgtest.a" ]; then
  cmake -S /usr/src/googletest -B "$B/gtest-build" -DCMAKE_TOOLCHAIN_FILE="$B/aarch64.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$GT" -DBUILD_GMOCK=OFF > "$B/gtest.log"
  cmake --build "$B/gtest-build" -j"$(nproc)" --target install >> "$B/gtest.log"
fi
# GTest from the cross build; no libpqxx (integration tests need a server anyway)
cmake -S "$ROOT" -B "$B/engine" -DCMAKE_TOOLCHAIN_FILE="$B/aarch64.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DPGKM_CUDA=OFF -DPGKM_BUILD_BENCH=OFF -DGTEST_INCLUDE_DIR="$GT/include" \
  -DGTEST_LIBRARY="$GT/lib/libgtest.a" -DGTEST_MAIN_LIBRARY="$GT/lib/libgtest_main.a" \
  -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON > "$B/configure.log"
cmake --build "$B/engine" -j"$(nproc)" --target engine_tests > "$B/build.log"
aarch64-linux-gnu-readelf -h "$B/engine/tests/engine_tests" | grep -E 'Class|Machine'
# the emulated C library's path as the host sees it (qemu-user does not map every call into -L)
PGKM_TEST_SYSROOT=/usr/aarch64-linux-gnu exec qemu-aarch64 -L /usr/aarch64-linux-gnu \
  "$B/engine/tests/engine_tests" --gtest_filter="${1:-*}"
