# common.sh: shared settings for demo.sh and test.sh (sourced, not run).
# Environment knobs (all optional):
#   BUILD_DIR    CMake build folder (default build)
#   PGKM_CUDA    AUTO|ON|OFF: build the CUDA plugin when nvcc exists (default AUTO)
#   CMAKE_EXTRA  extra CMake arguments (e.g. -DCMAKE_CUDA_ARCHITECTURES=80-real;90-real;
#                CMakeLists.txt builds sm_90 only by default)
#   SKIP_DEPS=1  do not run scripts/install-deps.sh
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-build}
PGKM_CUDA=${PGKM_CUDA:-AUTO}
CMAKE_EXTRA=${CMAKE_EXTRA:-}
JOBS=$(nproc)
# nvcc lives outside PATH on a stock CUDA install; let CMake's detection see it.
if [ "$PGKM_CUDA" != OFF ] && ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=$PATH:/usr/local/cuda/bin
fi
MAKE_VARS=(BUILD_DIR="$BUILD_DIR" PGKM_CUDA="$PGKM_CUDA" CMAKE_EXTRA="$CMAKE_EXTRA")

# `make` configures CMake only when the build folder is new; re-run the
# configure step when PGKM_CUDA differs from what the folder was made with.
reconfigure_if_changed() {
  local cache=$BUILD_DIR/CMakeCache.txt cached
  [ -f "$cache" ] || return 0
  cached=$(sed -n 's/^PGKM_CUDA:STRING=//p' "$cache")
  if [ "$cached" != "$PGKM_CUDA" ]; then
    echo "build folder $BUILD_DIR was configured with PGKM_CUDA=$cached; reconfiguring with $PGKM_CUDA"
    cmake -S "$ROOT" -B "$BUILD_DIR" -DPGKM_CUDA="$PGKM_CUDA" $CMAKE_EXTRA >/dev/null
    touch "$BUILD_DIR/engine_link.mk"
  fi
}
