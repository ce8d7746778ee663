#!/usr/bin/env python3
"""triangle_ab.py: two or more builds of triangle_bench alternated on Wu & Hong's data.

    bench/triangle_ab.py ROUNDS k,sigma2 [k,sigma2 ...] -- LABEL=EXE [LABEL=EXE ...]
    bench/triangle_ab.py --table OUT.jsonl

n = 245,760, d = 32, 2 threads, methods lloyd, yinyang and auto in one process
per build (the same data and start: triangle_bench's). Each round runs every
build once per shape, the order of the builds rotated from round to round, and
appends the runs to bench/results_triangle_ab.jsonl (environment
PGKM_AB_OUT), each with its build label, round and load average before. The
table gives per shape and build the median process CPU time of each method
and the speed-up over that build's lloyd: on a shared machine the CPU time is
the steadier measure (other processes' time is not in it).
"""
import json
import os
import statistics
import subprocess
import sys

OUT = os.environ.get('PGKM_AB_OUT', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  'results_triangle_ab.jsonl'))


def table(path):
    rows = [json.loads(line) for line in open(path)]
    builds = list(dict.fromkeys(r['build'] for r in rows))
    shapes = sorted({(r['k'], r['sigma2']) for r in rows}, key=lambda s: (-s[0], s[1]))
    print('| k | sigma^2 | build | runs | lloyd CPU s | yinyang CPU s (speed-up) | auto CPU s (speed-up) '
          '| auto skipped | iterations | inertia | labels |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for shape in shapes:
        for b in builds:
            rs = [r for r in rows if (r['k'], r['sigma2']) == shape and r['build'] == b]
            if not rs:
                continue
            med = {m: statistics.median(r['cpu_s'] for r in rs if r['method'] == m)
                   for m in ('lloyd', 'yinyang', 'auto')}
            auto = [r for r in rs if r['method'] == 'auto']
            same = len({r['labels_hash'] for r in rs}) == 1 and len({r['inertia'] for r in rs}) == 1
            print(f"| {shape[0]} | {shape[1]} | {b} | {len(auto)} | {med['lloyd']:.2f} "
                  f"| {med['yinyang']:.2f} ({med['lloyd'] / med['yinyang']:.2f}x) "
                  f"| {med['auto']:.2f} ({med['lloyd'] / med['auto']:.2f}x) "
                  f"| {100 * auto[0]['skipped']:.1f}% | {'/'.join(sorted({str(r['iterations']) for r in rs}))} "
                  f"| {'/'.join(sorted({str(r['inertia']) for r in rs}))} "
                  f"| {'equal in every run' if same else 'DIFFER'} |")
    loads = [r['load_before'] for r in rows]
    print(f'\nload average before the runs: {min(loads):.2f}-{max(loads):.2f}')


def main():
    args = sys.argv[1:]
    if args[:1] == ['--table'] and len(args) == 2:
        return table(args[1])
    if '--' not in args or len(args) < 4:
        sys.exit(__doc__)
    cut = args.index('--')
    rounds, shapes = int(args[0]), [s.split(',') for s in args[1:cut]]
    builds = [b.split('=', 1) for b in args[cut + 1:]]
    with open(OUT, 'a') as out:
        for rnd in range(rounds):
            order = builds[rnd % len(builds):] + builds[:rnd % len(builds)]
            for k, s2 in shapes:
                for label, exe in order:
                    load = os.getloadavg()[0]
                    res = subprocess.run([exe, '245760', '32', k, s2, '2', 'lloyd,yinyang,auto', '1'],
                                         capture_output=True, text=True, check=True).stdout
                    for line in res.splitlines():
                        if line.startswith('{'):
                            r = json.loads(line)
                            r.update(build=label, round=rnd, load_before=load)
                            out.write(json.dumps(r) + '\n')
                    out.flush()
    table(OUT)


if __name__ == '__main__':
    main()
