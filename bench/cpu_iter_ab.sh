#!/bin/bash
# cpu_iter_ab.sh: two builds of bench/cpu_engine_bench side by side, the
# Lloyd iteration at small d (issue 13; bench/RESULTS.md, "The CPU Lloyd
# iteration at small d").
#
#   bench/cpu_iter_ab.sh BEFORE AFTER bits                 # same output, 1 and 2 threads
#   bench/cpu_iter_ab.sh BEFORE AFTER time THREADS ROUNDS  # ms per iteration
#
# bits: every shape below at 1 and 2 threads; the whole output line but the
# times (inertia to the last bit, iterations, FNV hashes of labels,
# centroids, distances and per-cluster inertia, the fp64 share) must match.
# time: the builds alternated ROUNDS times per shape; per build the minimum
# of the bench's median wall seconds per iteration and of the CPU time per
# iteration, (task-clock of 22 iterations - of 2) / 20, from perf stat.
set -euo pipefail
A=$1 B=$2 MODE=$3
strip() { sed 's/init_s=[^ ]* iter_s=[^ ]* //'; }
if [ "$MODE" = bits ]; then
  bad=0 runs=0
  while read -r n d k iters init data; do
    for t in 1 2; do
      a=$("$A" "$n" "$d" "$k" "$t" "$iters" 1 "$init" "$data" | strip)
      b=$("$B" "$n" "$d" "$k" "$t" "$iters" 1 "$init" "$data" | strip)
      runs=$((runs + 1))
      if [ "$a" != "$b" ]; then echo "DIFF n=$n d=$d k=$k threads=$t"; echo "  $a"; echo "  $b"; bad=$((bad + 1)); fi
    done
  done <<'SHAPES'
1000000 2 8 30 given blobs
1000000 16 64 15 given blobs
245760 32 32 30 given blobs
100003 1 5 40 pp blobs
100003 3 7 40 pp uniform
100003 7 9 40 pp blobs
100003 9 3 40 pp blobs
50001 17 70 30 pp uniform
50001 33 100 30 pp blobs
50001 2 1 5 pp blobs
50001 5 1 5 pp blobs
60007 2 130 30 pp uniform
60007 4 300 20 pp blobs
70001 6 8 40 pp uniform
30001 12 20 40 pp blobs
SHAPES
  echo "compared $runs runs, $bad differ"
  exit $((bad > 0))
fi
T=${4:-1} R=${5:-5}
tc() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
for s in "1000000 2 8" "1000000 16 64" "245760 32 32"; do
  declare -A w=() c=()
  for _ in $(seq "$R"); do
    for b in "$A" "$B"; do
      # shellcheck disable=SC2086
      v=$("$b" $s "$T" 22 1 given | grep -o 'iter_s=[0-9.]*' | cut -d= -f2)
      # shellcheck disable=SC2086
      hi=$(tc "$b" $s "$T" 22 1 given); lo=$(tc "$b" $s "$T" 2 1 given)
      cc=$(awk "BEGIN{print ($hi - $lo) / 20}")
      if [ -z "${w[$b]:-}" ] || awk "BEGIN{exit !($v < ${w[$b]})}"; then w[$b]=$v; fi
      if [ -z "${c[$b]:-}" ] || awk "BEGIN{exit !($cc < ${c[$b]})}"; then c[$b]=$cc; fi
    done
  done
  printf '%s threads=%s: before wall %.2f cpu %.2f ms, after wall %.2f cpu %.2f ms\n' "$s" "$T" \
    "$(awk "BEGIN{print ${w[$A]} * 1000}")" "${c[$A]}" "$(awk "BEGIN{print ${w[$B]} * 1000}")" "${c[$B]}"
  unset w c
done
