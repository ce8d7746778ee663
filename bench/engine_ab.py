#!/usr/bin/env python3
"""engine_ab.py: two or more builds of engine_file_bench, alternated on the same rows and start.

    bench/engine_ab.py ROUNDS THREADS ITERS n,d,k [n,d,k ...] -- LABEL=EXE [LABEL=EXE ...]

The rows and the start come from bench/cpu_libs_bench.py's data folder
(DATA: --data-dir there, /tmp/pgkm-cpu-libs-bench by default; environment
PGKM_BENCH_DATA). Each round runs every build once per shape, in the order
given; per build it prints the min and median over rounds of the wall and
the process CPU time per iteration (the first iteration left out), the
inertia and the share of rows left to fp64. On a shared machine the CPU
time is the steadier of the two (other processes' time is not in it).
"""
import json
import os
import statistics
import subprocess
import sys


def main():
    args = sys.argv[1:]
    if '--' not in args or len(args) < 6:
        sys.exit(__doc__)
    rounds, threads, iters = int(args[0]), int(args[1]), int(args[2])
    if iters < 2:
        sys.exit('engine_ab.py: ITERS must be at least 2 (the first iteration is not timed)')
    cut = args.index('--')
    shapes = args[3:cut]
    builds = [b.split('=', 1) for b in args[cut + 1:]]
    data = os.environ.get('PGKM_BENCH_DATA', '/tmp/pgkm-cpu-libs-bench')
    for shape in shapes:
        n, d, k = shape.split(',')
        times = {label: [] for label, _ in builds}
        last = {}
        for _ in range(rounds):
            for label, exe in builds:
                cmd = [exe, f'{data}/n{n}_d{d}.f32', n, d, k, str(threads), str(iters), '0', 'given',
                       f'{data}/n{n}_d{d}_k{k}_s7.f64']
                o = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                wall = o['iter_s'][1:]
                cpu = o.get('iter_cpu_s', [float('nan')] * len(o['iter_s']))[1:]  # older builds: wall only
                times[label].append((1e3 * sum(wall) / len(wall), 1e3 * sum(cpu) / len(cpu)))
                last[label] = (o['inertia'], o.get('rows_rechecked'))
        for label, _ in builds:
            w = [t[0] for t in times[label]]
            c = [t[1] for t in times[label]]
            print(f'{n} x {d}, k = {k}, {threads} thr, {label:10s} wall min {min(w):7.1f} med '
                  f'{statistics.median(w):7.1f}  cpu min {min(c):7.1f} med {statistics.median(c):7.1f} '
                  f'ms/it  inertia {last[label][0]!r}  rows to fp64 {last[label][1]}', flush=True)


if __name__ == '__main__':
    main()
