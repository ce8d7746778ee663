#!/usr/bin/python3
"""init_quality.py: k-means++ on a sample against greedy k-means++ on every row and
scikit-learn's k-means++, on the same rows and seeds (bench/RESULTS.md, "k-means++
on a sample").

For each data kind, shape and seed, each start is followed by our Lloyd to
convergence (tol 1e-4 as scikit-learn's default, at most --max-iter iterations):
  SAMPLE:per,min  build/bench/init_bench pp with PGKM_BENCH_KPP_SAMPLE=per,min
                  (the sample: max(min, per k) rows, at most n)
  full            init_bench ppfull (greedy k-means++ on every row)
  sklearn         sklearn.cluster.kmeans_plusplus on every row (fp64), then our Lloyd
Data kinds: blobs (bench/cpu_libs_bench.py's: 32 centres in [-10, 10]^d, sigma 2),
wuhong (Wu & Hong's generator, tests/common/blobs.h: k centres in [0, 1]^d,
N(0, --sigma2) per feature, row i around centre i % k), uniform ([0, 1]^d).
Prints one row per run (init time in Lloyd iterations, fp64 potential of the
start over all rows, final inertia, iterations), then per (kind, shape, start)
the mean over seeds of potential and inertia relative to full's mean, and
full's own seed-to-seed spread (max/min - 1) as the noise.

  /usr/bin/python3 bench/init_quality.py --kinds blobs --seeds 0,1,2 --samples 32,4096 64,16384
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import init_bench  # noqa: E402
from cpu_libs_bench import inertia_fp64, load, make_data  # noqa: E402


def data_file(a, kind, n, d, k):
    import numpy as np
    if kind == 'blobs':
        return make_data(a, n, d, k)[0]
    name = os.path.join(a.data_dir, '%s_%d_%d_%d_%g.f32' % (kind, n, d, k, a.sigma2))
    if os.path.exists(name):
        return name
    rng = np.random.default_rng(3 + d + k)
    if kind == 'uniform':
        x = rng.uniform(0, 1, size=(n, d)).astype(np.float32)
    else:
        c = rng.uniform(0, 1, size=(k, d))
        x = (c[np.arange(n) % k] + rng.normal(0, a.sigma2 ** 0.5, size=(n, d))).astype(np.float32)
    x.tofile(name + '.tmp')
    os.replace(name + '.tmp', name)
    return name


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--kinds', default='blobs,wuhong,uniform')
    p.add_argument('--shape', action='append', default=[], help='n,d,k (default: init_bench.SHAPES)')
    p.add_argument('--seeds', default='0,1,2')
    p.add_argument('--samples', nargs='*', default=['32,4096', '64,16384', '256,65536'])
    p.add_argument('--no-sklearn', action='store_true')
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--max-iter', type=int, default=100)
    p.add_argument('--sigma2', type=float, default=0.05)
    p.add_argument('--data-dir', default='/tmp/pgkm-cpu-libs-bench')
    p.add_argument('--build-dir', default=os.path.join(os.path.dirname(HERE), 'build'))
    p.add_argument('--json', default=None)
    a = p.parse_args()
    a.seed, a.iters = 7, a.max_iter		# what init_bench.ours and make_data read
    import numpy as np
    os.environ['PGKM_BENCH_TOL'] = '1e-4'
    shapes = [tuple(int(v) for v in s.split(',')) for s in a.shape] or init_bench.SHAPES
    seeds = [int(s) for s in a.seeds.split(',')]
    starts = ['sample:' + s for s in a.samples] + ['full'] + ([] if a.no_sklearn else ['sklearn'])
    print('Load average at start: %.2f %.2f %.2f' % os.getloadavg())
    print('| data | n x d, k | start | seed | init s | init in its | potential | inertia | iterations |')
    print('|---|---|---|---|---|---|---|---|---|')
    rows = []
    for kind in a.kinds.split(','):
        for (n, d, k) in shapes:
            xf = data_file(a, kind, n, d, k)
            x = load(xf, n, d)
            for seed in seeds:
                it_ms = None
                for st in starts:
                    if st == 'sklearn':
                        s, cf = init_bench.sklearn_pp(a, xf, n, d, k, seed)
                        o = init_bench.ours(a, xf, n, d, k, 'given', seed, given=cf)
                        o['init_s'] = s
                    else:
                        if st.startswith('sample:'):
                            os.environ['PGKM_BENCH_KPP_SAMPLE'] = st.split(':')[1]
                        o = init_bench.ours(a, xf, n, d, k, 'pp' if st != 'full' else 'ppfull', seed)
                        os.environ.pop('PGKM_BENCH_KPP_SAMPLE', None)
                    it_ms = float(np.median(o['iter_s'])) * 1e3 if o['iter_s'] else it_ms
                    row = dict(kind=kind, n=n, d=d, k=k, start=st, seed=seed, init_s=o['init_s'],
                               its=o['init_s'] * 1e3 / it_ms, potential=inertia_fp64(x, o['c0']),
                               inertia=o['inertia'], iterations=o['iterations'])
                    rows.append(row)
                    print('| %s | %d x %d, k = %d | %s | %d | %.3f | %.2f | %.7g | %.7g | %d |' % (
                        kind, n, d, k, st, seed, row['init_s'], row['its'], row['potential'],
                        row['inertia'], row['iterations']), flush=True)
            summarize([r for r in rows if r['kind'] == kind and (r['n'], r['d'], r['k']) == (n, d, k)], starts)
    print('Load average at end: %.2f %.2f %.2f' % os.getloadavg())
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


def summarize(rows, starts):
    """Per start: mean potential and inertia over the seeds relative to full's mean; full's spread."""
    full = [r for r in rows if r['start'] == 'full']
    fp = statistics.mean(r['potential'] for r in full)
    fi = statistics.mean(r['inertia'] for r in full)
    spread_p = max(r['potential'] for r in full) / min(r['potential'] for r in full) - 1
    spread_i = max(r['inertia'] for r in full) / min(r['inertia'] for r in full) - 1
    r0 = rows[0]
    for st in starts:
        sel = [r for r in rows if r['start'] == st]
        print('SUMMARY | %s | %d x %d, k = %d | %s | its %.2f-%.2f | potential %+.2f %% | inertia %+.3f %% '
              '| full spread: potential %.2f %%, inertia %.3f %% |' % (
                  r0['kind'], r0['n'], r0['d'], r0['k'], st, min(r['its'] for r in sel), max(r['its'] for r in sel),
                  100 * (statistics.mean(r['potential'] for r in sel) / fp - 1),
                  100 * (statistics.mean(r['inertia'] for r in sel) / fi - 1), 100 * spread_p, 100 * spread_i),
              flush=True)


if __name__ == '__main__':
    main()
