#!/usr/bin/python3
"""init_bench.py: the CPU engine's initialisation in Lloyd iterations, beside
scikit-learn's k-means++ on the same rows.

For each shape (n x d, k) and seed, on the rows bench/cpu_libs_bench.py
writes (Gaussian blobs: 32 centres uniform in [-10, 10]^d, sigma 2):
  ours     build/bench/init_bench: init time, then --iters Lloyd iterations
           (method lloyd, tol 0); "its" = init time / median iteration time
  sklearn  sklearn.cluster.kmeans_plusplus (greedy, 2 + ln k trials) timed at
           the same threads, then our Lloyd from its centers (same iterations)
Quality, each in fp64 over all rows: the potential (sum of D^2) of the
initial centers and the inertia after the Lloyd iterations; "centres" is a
hash of the initial centers' bytes (equal hashes: the same start, bit for bit).

Uses the system's NumPy and scikit-learn (python3-sklearn):
  /usr/bin/python3 bench/init_bench.py --threads 2 --seeds 0,1,2
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cpu_libs_bench import inertia_fp64, load, make_data, one_thread_blas_here  # noqa: E402

SHAPES = [(1000000, 2, 8), (1000000, 16, 64), (200000, 128, 256), (100000, 768, 100), (245760, 32, 32),
          (245760, 32, 1024)]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--seeds', default='0,1,2')
    p.add_argument('--iters', type=int, default=30, help='Lloyd iterations after the init')
    p.add_argument('--inits', default='pp', help='our inits, comma-separated: pp, par (k-means||), par:ROUNDS:FACTOR, random')
    p.add_argument('--shape', action='append', default=[], help='n,d,k (repeatable; default: the issue\'s)')
    p.add_argument('--no-sklearn', action='store_true')
    p.add_argument('--seed', type=int, default=7, help='data files (as cpu_libs_bench.py)')
    p.add_argument('--data-dir', default='/tmp/pgkm-cpu-libs-bench')
    p.add_argument('--build-dir', default=os.path.join(os.path.dirname(HERE), 'build'))
    p.add_argument('--json', default=None)
    p.add_argument('--worker', default=None, help=argparse.SUPPRESS)
    return p.parse_args()


def ours(a, xf, n, d, k, init, seed, given=None):
    tmp = os.path.join(a.data_dir, 'init_bench_%d' % os.getpid())
    env = dict(os.environ)
    if init.startswith('par:'):		# par:rounds:factor
        env['PGKM_BENCH_KPAR'] = ','.join(init.split(':')[1:])
    cmd = [os.path.join(a.build_dir, 'bench', 'init_bench'), xf, str(n), str(d), str(k),
           str(a.threads), str(a.iters), init.split(':')[0], str(seed), given or '-', tmp + '.c0', tmp + '.c1']
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    o = json.loads(r.stdout)
    import numpy as np
    o['c0'] = np.fromfile(tmp + '.c0', dtype=np.float64).reshape(o['k'], d)
    o['c1'] = np.fromfile(tmp + '.c1', dtype=np.float64).reshape(o['k'], d)
    return o


def sklearn_worker(a):
    """In its own process (threads fixed before NumPy loads): sklearn's k-means++."""
    spec = json.loads(a.worker)
    import numpy as np
    from sklearn.cluster import kmeans_plusplus
    from threadpoolctl import threadpool_limits
    x = load(spec['x'], spec['n'], spec['d'])
    with threadpool_limits(limits=a.threads):
        t0 = time.perf_counter()
        c, _ = kmeans_plusplus(x, spec['k'], random_state=spec['seed'])
        s = time.perf_counter() - t0
    c.astype(np.float64).tofile(spec['out'])
    print(json.dumps(dict(init_s=s)))


def sklearn_pp(a, xf, n, d, k, seed):
    out = os.path.join(a.data_dir, 'init_bench_sk_%d.f64' % os.getpid())
    spec = dict(x=xf, n=n, d=d, k=k, seed=seed, out=out)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads),
               MKL_NUM_THREADS=str(a.threads))
    r = subprocess.run([sys.executable, os.path.abspath(__file__), '--threads', str(a.threads),
                        '--worker', json.dumps(spec)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout.strip().splitlines()[-1])['init_s'], out


def main():
    a = parse_args()
    if a.worker:
        return sklearn_worker(a)
    one_thread_blas_here()
    import numpy as np
    shapes = [tuple(int(v) for v in s.split(',')) for s in a.shape] or SHAPES
    seeds = [int(s) for s in a.seeds.split(',')]
    print('Load average at start: %.2f %.2f %.2f' % os.getloadavg())
    print('| n x d, k | init | seed | init s | Lloyd ms/it | init in its | potential | inertia after %d its | centres |'
          % a.iters)
    print('|---|---|---|---|---|---|---|---|---|')
    rows = []
    for (n, d, k) in shapes:
        xf, _ = make_data(a, n, d, k)
        x = load(xf, n, d)
        for seed in seeds:
            it_ms = None
            for init in a.inits.split(','):
                o = ours(a, xf, n, d, k, init, seed)
                it_ms = float(np.median(o['iter_s'])) * 1e3
                row = dict(n=n, d=d, k=k, init=init, seed=seed, init_s=o['init_s'], iter_ms=it_ms,
                           its=o['init_s'] * 1e3 / it_ms, potential=inertia_fp64(x, o['c0']),
                           inertia=o['inertia'], centres=hashlib.sha1(o['c0'].tobytes()).hexdigest()[:12])
                rows.append(row)
                print('| %d x %d, k = %d | %s | %d | %.3f | %.1f | %.2f | %.7g | %.7g | %s |' % (
                    n, d, k, init, seed, row['init_s'], it_ms, row['its'], row['potential'],
                    row['inertia'], row['centres']), flush=True)
            if a.no_sklearn:
                continue
            s, cf = sklearn_pp(a, xf, n, d, k, seed)
            o = ours(a, xf, n, d, k, 'given', seed, given=cf)
            c0 = np.fromfile(cf, dtype=np.float64).reshape(k, d)
            row = dict(n=n, d=d, k=k, init='sklearn', seed=seed, init_s=s, iter_ms=it_ms,
                       its=s * 1e3 / it_ms, potential=inertia_fp64(x, c0), inertia=o['inertia'])
            rows.append(row)
            print('| %d x %d, k = %d | sklearn k-means++ | %d | %.3f | (ours) | %.2f | %.7g | %.7g |' % (
                n, d, k, seed, s, row['its'], row['potential'], row['inertia']), flush=True)
    print('Load average at end: %.2f %.2f %.2f' % os.getloadavg())
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
