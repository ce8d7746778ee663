#!/bin/bash
# cpu_ab_device.sh: two trees of the CPU engine side by side on the GPU host's
# 16 cores (CPU only): greedy k-means++ and Lloyd iterations
# (bench/init_bench.py) and the bounded methods to convergence
# (triangle_bench), the two builds alternated in each round.
#
#   here:     bash bench/cpu_ab_device.sh pack REV   # .tmp/ab/before.tar.gz: git archive of REV
#   GPU host: [THREADS="16 4"] [ROUNDS=2] [PYTHON=python3] bash bench/cpu_ab_device.sh run
#             (carry .gpuhost and .tmp/ab; the working tree is "after")
#   GPU host: [THREADS="16 1"] [SHAPES="n,d,k ..."] [ROUNDS=1] [STEPS="0 1 2"] bash bench/cpu_ab_device.sh phases
#             (this tree, and the before tree when packed: greedy k-means++'s time per step phase,
#             init_bench's kpp_phase_ms, with its steps timed (0), on the pool (1) or on the calling
#             thread (2): pgkm_internal_set_kpp_step_choice; thread count 0 = the default)
#   GPU host: [THREADS="1 2 4 8 16"] [SHAPES="n,d,k ..."] [ROUNDS=2] bash bench/cpu_ab_device.sh iters
#             (this tree, and the before tree when packed: Lloyd's iteration time per phase
#             (assignment pass, update, rest), init_bench's iter_phase_ms)
#   GPU host: [THREADS=16,2,1] bash bench/cpu_ab_device.sh libs [cpu_libs_bench.py arguments]
#             (bench/run_cpu_libs_bench.sh offline from .devsend/wheels, with the before tree's
#             engine as method "base", alternated with ours)
#   GPU host: [THREADS="16 2"] [SHAPES="k,sigma2 ..."] [ROUNDS=2] [METHODS=lloyd,yinyang,auto]
#             bash bench/cpu_ab_device.sh tri
#             (both trees: the bounded methods to convergence on Wu & Hong's data, n = 245,760, d = 32)
#   GPU host: [THREADS=16,2] [ROUNDS=3] [SWEEP_SET=full] bash bench/cpu_ab_device.sh sweep
#             (this tree: 'auto' against 'lloyd' with the SQL defaults, bench/auto_default_sweep.py)
#   GPU host: bash bench/cpu_ab_device.sh pool
#             (bench/pool_bench.cpp against both trees' thread_pool.cpp: one parallel_for's cost)
#
# Lines are init_bench.py's and triangle_bench's, each prefixed with the build
# and the thread count. OpenBLAS comes from .gpuhost/deps.tar.xz
# (scripts/gpu-host-bundle.sh) when the host has none.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
case "${1:-}" in
  pack)
    mkdir -p .tmp/ab
    git archive --format=tar.gz -o .tmp/ab/before.tar.gz "${2:?REV}"
    git rev-parse "$2" > .tmp/ab/before.rev
    echo "packed $(cat .tmp/ab/before.rev) into .tmp/ab/before.tar.gz"
    exit 0 ;;
  run|phases|iters|tri|pool|libs|sweep) ;;
  *) echo "usage: $0 pack REV | run | phases | iters | tri | pool | libs | sweep" >&2; exit 2 ;;
esac

# shellcheck source=tests/gpu/host_env.sh
source tests/gpu/host_env.sh
build() {
  cmake -S "$1" -B "$1/build-cpuab" -DPGKM_CUDA=OFF -DPGKM_BUILD_TESTS=OFF -DPGKM_BUILD_BENCH=ON \
    -DCMAKE_BUILD_TYPE=Release "${GPU_CMAKE_DEPS[@]}" > /dev/null
  cmake --build "$1/build-cpuab" -j"$(nproc)" --target init_bench triangle_bench engine_file_bench cpu_peak \
    > /dev/null
}
BEFORE_SRC=/tmp/ab-before
unpack_before() {
  rm -rf "$BEFORE_SRC" && mkdir -p "$BEFORE_SRC" && tar -C "$BEFORE_SRC" -xzf .tmp/ab/before.tar.gz
}
build_both() {
  build "$BEFORE_SRC" & build "$ROOT"; wait
  echo "# before = $(cat .tmp/ab/before.rev 2>/dev/null || echo '?'), after = this working tree"
}
# this tree, and the before tree when packed; sets builds to the names of those built
build_packed() {
  builds=after
  if [ -f .tmp/ab/before.tar.gz ]; then
    unpack_before
    build_both
    builds="before after"
  else
    build "$ROOT"
  fi
}
# init_bench.py writes the data files (/tmp/pgkm-cpu-libs-bench) of its shapes
write_data() {
  "${PYTHON:-python3}" bench/init_bench.py --threads 1 --seeds 0 --iters 1 --no-sklearn --inits random \
    --build-dir "$ROOT/build-cpuab" > /dev/null
}
# triangle_bench of both trees, alternated: threads, methods, then k,sigma2 shapes
bounded_to_convergence() {
  local t=$1 methods=$2 shape r b dir
  shift 2
  for shape in "$@"; do
    for r in $(seq "${ROUNDS:-2}"); do
      for b in before after; do
        dir=$ROOT; [ $b = before ] && dir=$BEFORE_SRC
        "$dir/build-cpuab/bench/triangle_bench" 245760 32 ${shape/,/ } "$t" "$methods" 1 | sed "s#^#$b $t #"
      done
    done
  done
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
if [ "$1" = phases ]; then
  build_packed
  write_data	# then init_bench alone, its JSON cut to the init's numbers
  data=/tmp/pgkm-cpu-libs-bench
  echo "build threads shape init step_choice init_s median_iter_ms kpp_phase_ms(draw, center distances, plan, grouped, row pass, take, sums, update, sample, start) grouped_steps undecided_steps serial_steps"
  for t in ${THREADS:-16 1}; do
    for sh in ${SHAPES:-1000000,2,8 1000000,16,64 200000,128,256 100000,768,100 245760,32,32 245760,32,1024}; do
      sh=${sh//,/ }
      set -- $sh
      for r in $(seq "${ROUNDS:-1}"); do
        for choice in ${STEPS:-0}; do
          for b in $builds; do
            dir=$ROOT; [ $b = before ] && dir=$BEFORE_SRC
            for init in random pp; do
              PGKM_BENCH_KPP_STEPS=$choice "$dir/build-cpuab/bench/init_bench" "$data/n$1_d$2.f32" "$1" "$2" "$3" "$t" 10 $init 0 |
                "${PYTHON:-python3}" -c "
import json, sys
o = json.load(sys.stdin); it = sorted(o['iter_s'])
print('$b', $t, '$1x$2,k=$3', '$init', $choice, o['init_s'], round(it[len(it) // 2] * 1e3, 3), o['kpp_phase_ms'], o['kpp_grouped_steps'], o['kpp_undecided_steps'], o.get('kpp_serial_steps'))"
            done
          done
        done
      done
    done
  done
  exit 0
fi
if [ "$1" = sweep ]; then
  build "$ROOT"
  exec "${PYTHON:-python3}" bench/auto_default_sweep.py --threads "${THREADS:-16,2}" --rounds "${ROUNDS:-3}" \
    --set "${SWEEP_SET:-full}" --exe "$ROOT/build-cpuab/bench/engine_file_bench"
fi
if [ "$1" = iters ]; then
  build_packed
  write_data
  data=/tmp/pgkm-cpu-libs-bench
  echo "build threads shape round median_ms_per_it phase_ms_per_it(assign pass, update, rest)"
  for t in ${THREADS:-1 2 4 8 16}; do
    for sh in ${SHAPES:-1000000,2,8 1000000,16,64 200000,128,256 100000,768,100 245760,32,32}; do
      sh=${sh//,/ }
      set -- $sh
      for r in $(seq "${ROUNDS:-2}"); do
        for b in $builds; do
          dir=$ROOT; [ $b = before ] && dir=$BEFORE_SRC
          "$dir/build-cpuab/bench/init_bench" "$data/n$1_d$2.f32" "$1" "$2" "$3" "$t" 20 random 0 |
            "${PYTHON:-python3}" -c "
import json, sys
o = json.load(sys.stdin); it = sorted(o['iter_s']); n = len(it)
ph = o.get('iter_phase_ms', [float('nan')] * 3)
print('$b', $t, '$1x$2,k=$3', $r, '%.3f' % (it[n // 2] * 1e3), ' '.join('%.3f' % (p / n) for p in ph), o['inertia'])"
        done
      done
    done
  done
  exit 0
fi
unpack_before
if [ "$1" = tri ]; then
  build_both
  for t in ${THREADS:-16 2}; do
    # shellcheck disable=SC2086
    bounded_to_convergence "$t" "${METHODS:-lloyd,yinyang,auto}" \
      ${SHAPES:-1024,0.0125 256,0.0125 1024,0.05 256,0.05 32,0.3}
  done
  exit 0
fi
if [ "$1" = pool ]; then
  for b in before after; do
    src=$ROOT; [ $b = before ] && src=$BEFORE_SRC
    g++ -O2 -std=c++17 -I"$src/src/engine" bench/pool_bench.cpp "$src/src/engine/thread_pool.cpp" \
      -o "/tmp/pool_bench_$b" -lpthread
  done
  for r in 1 2; do
    for b in before after; do
      echo "# $b, round $r"
      "/tmp/pool_bench_$b" 20000 5 2 4 8 16
    done
  done
  exit 0
fi
if [ "$1" = libs ]; then
  build "$BEFORE_SRC"
  shift
  exec bash bench/run_cpu_libs_bench.sh --wheels .devsend/wheels --threads "${THREADS:-16,2,1}" \
    --base-build-dir "$BEFORE_SRC/build-cpuab" "$@"
fi
build_both
echo "| build | threads | n x d, k | init | seed | init s | Lloyd ms/it | init in its | potential | inertia after 10 its | centres |"
for t in ${THREADS:-16 4}; do
  for r in $(seq "${ROUNDS:-2}"); do
    echo "# threads $t round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
    for b in before after; do
      dir=$ROOT; [ $b = before ] && dir=$BEFORE_SRC
      "${PYTHON:-python3}" bench/init_bench.py --threads "$t" --seeds 0 --iters 10 --no-sklearn --inits random,pp \
        --build-dir "$dir/build-cpuab" | grep '^| [0-9]' | sed "s#^#| $b | $t #"
    done
  done
done
# the bounded methods: Wu & Hong's data, to convergence, at the most threads given
bounded_to_convergence "$(echo "${THREADS:-16 4}" | awk '{print $1}')" lloyd,auto 1024,0.05 256,0.05 32,0.3
