#!/bin/bash
# run_init_ab.sh: greedy k-means++ init time, two builds side by side (bench/RESULTS.md,
# "Greedy k-means++ over groups of rows"). Each shape runs the BEFORE build, then the
# AFTER build, at 1 and 2 threads, through bench/init_bench.py; the "centres" column
# (a hash of the initial centers) is equal for both builds when the change keeps the start.
# INITS (default pp) lists init_bench.py's inits (e.g. pp,random: random's init time is the
# statistics pass and the run's creation, which every init step includes).
#
#   [INITS=pp,random] bash bench/run_init_ab.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [SEEDS]
#
# Each build dir needs bench/init_bench (cmake --build DIR --target init_bench).
set -euo pipefail
before=$1 after=$2 seeds=${3:-0,1}
here=$(cd "$(dirname "$0")" && pwd)
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| build | threads | n x d, k | init | seed | init s | Lloyd ms/it | init in its | potential | inertia after 10 its | centres |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
shapes=$(cd "$here" && /usr/bin/python3 -c 'import init_bench; print(" ".join(",".join(map(str, s)) for s in init_bench.SHAPES))')
for t in 1 2; do
	for sh in $shapes; do
		for b in "$before" "$after"; do
			/usr/bin/python3 "$here/init_bench.py" --threads "$t" --seeds "$seeds" --iters 10 --no-sklearn --inits "${INITS:-pp}" \
				--shape "$sh" --build-dir "$b" | grep '^| [0-9]' | sed "s#^#| $(basename "$b") | $t #"
		done
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
