#!/usr/bin/env python3
"""auto_pairs.py: `auto` against `lloyd` in pairs, in one process per build, on a noisy machine.

    bench/auto_pairs.py K SIGMA2 PAIRS LABEL=EXE [LABEL=EXE ...]   (environment N, D: the shape)

Each build's triangle_bench runs lloyd, auto, lloyd, auto, ... (PAIRS of each, the
same data and start, 2 threads, TRIANGLE_TRACE per-pass times); two rounds, the builds
alternated. Per pair: lloyd's time / auto's over passes 2-10 ("early": where auto runs
Lloyd's own or dense passes), over passes 11 on ("late") and over the whole run
("all"); printed: the median of each over the pairs. A pair's two runs follow each
other within a second, so a slow phase of the machine slows both.
"""
import os
import re
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    k, s2, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    builds = dict(a.split('=', 1) for a in sys.argv[4:])
    n, d = os.environ.get('N', '245760'), os.environ.get('D', '32')
    res = {b: {'early': [], 'late': [], 'all': []} for b in builds}
    for _ in range(2):
        for b, exe in builds.items():
            p = subprocess.run([exe, n, d, k, s2, '2', ','.join(['lloyd', 'auto'] * pairs), '1'],
                               env=dict(os.environ, TRIANGLE_TRACE='1'), capture_output=True, text=True,
                               check=True)
            runs = []
            for line in p.stderr.splitlines():
                m = re.match(r'(\w+) it (\d+): ([\d.]+) ms', line)
                if not m:
                    continue
                if m.group(2) == '1':
                    runs.append((m.group(1), []))
                runs[-1][1].append(float(m.group(3)))
            for (ma, a), (mb, bb) in zip(runs[0::2], runs[1::2]):
                assert ma == 'lloyd' and mb == 'auto', (ma, mb)
                res[b]['early'].append(sum(a[1:10]) / sum(bb[1:10]))
                res[b]['late'].append(sum(a[10:]) / sum(bb[10:]))
                res[b]['all'].append(sum(a) / sum(bb))
    for b in builds:
        print(f'n {n} d {d} k {k} sigma2 {s2} {b}: lloyd/auto ' +
              ' '.join(f'{key} {statistics.median(v):.3f}' for key, v in res[b].items()) +
              f' ({len(res[b]["all"])} pairs)')


if __name__ == '__main__':
    main()
