#!/usr/bin/env python3
"""run_triangle_bench.py: the pruned assignment methods against Lloyd on Wu & Hong's
data (groups A-F of seed 003, section 4), CPU engine alone, plus scikit-learn 1.2's
KMeans(algorithm='elkan'|'lloyd') on the same data, initial centroids and threads.

    cmake -S . -B build -DPGKM_CUDA=OFF -DPGKM_BUILD_BENCH=ON && cmake --build build -j
    /usr/bin/python3 bench/run_triangle_bench.py --groups A,B --repeats 3
    /usr/bin/python3 bench/run_triangle_bench.py --tables bench/results_triangle*.json

Writes bench/results_triangle.json (every run) and prints one markdown table per group
(min and median seconds over the repeats; speed-up = lloyd's median / the method's).
scikit-learn runs on the same values as float64 (the label contract is the fp64
argmin), tol=0 like the engine (stop when no label changes), one repeat per repeat of
ours. Needs numpy, scikit-learn and threadpoolctl (Debian: python3-sklearn).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGMA2_AB = [0.0125, 0.05, 0.1, 0.2, 0.3]  # of Wu & Hong's 24 values 0.0125..0.3 (subsampled)
GROUPS = {
    'A': [(245760, 32, s) for s in SIGMA2_AB],
    'B': [(245760, 1024, s) for s in SIGMA2_AB],
    'G': [(245760, 256, s) for s in SIGMA2_AB],  # not Wu & Hong's: the k >= 256 target between A and B
    'C': [(245760, k, 0.15) for k in (64, 256, 1024)],
    'D': [(245760, k, 0.20) for k in (64, 256, 1024)],
    'E': [(245760, k, 0.25) for k in (64, 256, 1024)],
    'F': [(n, 32, 0.15) for n in (61440, 245760, 983040)],
}
METHODS = 'yinyang,lloyd,elkan,hamerly,sort,auto'


def sklearn_runs(prefix, n, d, k, threads, repeats, algorithms):
    import numpy as np
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits
    x = np.fromfile(prefix + '.x.f32', dtype=np.float32).reshape(n, d).astype(np.float64)
    init = np.fromfile(prefix + '.init.f64', dtype=np.float64).reshape(k, d)
    ours = np.fromfile(prefix + '.labels.i32', dtype=np.int32)
    out = []
    for alg in algorithms:
        for rep in range(repeats):
            km = KMeans(n_clusters=k, init=init, n_init=1, max_iter=1000, tol=0, algorithm=alg)
            with threadpool_limits(limits=threads):
                t0, c0 = time.perf_counter(), time.process_time()
                km.fit(x)
                dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            out.append({'n': n, 'd': d, 'k': k, 'method': 'sklearn-' + alg, 'repeat': rep,
                        'iterations': int(km.n_iter_), 'total_s': dt,
                        'iter_s': dt, 'cpu_s': cpu, 'inertia': float(km.inertia_),
                        'same_labels_as_ours': float((km.labels_ == ours).mean())})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--groups', default='A,B,C,D,E,F')
    ap.add_argument('--methods', default=METHODS)
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--sklearn', default='elkan,lloyd', help="'' to skip")
    ap.add_argument('--sklearn-repeats', type=int, default=None, help='default: --repeats')
    ap.add_argument('--sigma2', help='groups A, B and G: comma-separated sigma^2 values')
    ap.add_argument('--ks', help='groups C-E: comma-separated k values')
    ap.add_argument('--tables', nargs='*', help='only print the tables of these result files')
    ap.add_argument('--bench', default=os.path.join(ROOT, 'build/bench/triangle_bench'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'bench/results_triangle.json'))
    a = ap.parse_args()
    if a.tables:
        results = []
        for path in a.tables:
            with open(path) as f:
                results += json.load(f)
        print_tables(results)
        return
    if a.sigma2:
        for g in 'ABG':
            GROUPS[g] = [(n, k, float(s2)) for (n, k, _) in GROUPS[g][:1] for s2 in a.sigma2.split(',')]
    if a.ks:
        for g in 'CDE':
            s2 = GROUPS[g][0][2]
            GROUPS[g] = [(245760, int(k), s2) for k in a.ks.split(',')]
    results = []
    tmp = tempfile.mkdtemp(prefix='pgkm-tri-')
    for g in a.groups.split(','):
        for (n, k, s2) in GROUPS[g]:
            d = 32
            prefix = os.path.join(tmp, 'data')
            cmd = [a.bench, str(n), str(d), str(k), str(s2), str(a.threads), a.methods,
                   str(a.repeats), str(a.seed), prefix]
            t0 = time.time()
            load = os.getloadavg()[0]
            proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
            rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{')]
            if a.sklearn:
                rows += sklearn_runs(prefix, n, d, k, a.threads, a.sklearn_repeats or a.repeats,
                                     a.sklearn.split(','))
            for r in rows:
                r.update({'group': g, 'sigma2': s2, 'load_before': load})
            results += rows
            print(f'# group {g} n={n} k={k} sigma2={s2}: {time.time() - t0:.0f} s, load {load:.2f}',
                  file=sys.stderr, flush=True)
            with open(a.out, 'w') as f:
                json.dump(results, f, indent=0)
    print_tables(results)


def print_tables(results):
    by = {}
    for r in results:
        by.setdefault((r['group'], r['n'], r['k'], r['sigma2']), {}).setdefault(r['method'], []).append(r)
    for key in sorted(by, key=lambda t: (t[0], t[1], t[2], t[3])):
        g, n, k, s2 = key
        runs = by[key]
        lloyd = statistics.median(r['total_s'] for r in runs['lloyd']) if 'lloyd' in runs else None
        lloyd_it = (statistics.median(r['iter_s'] / r['iterations'] for r in runs['lloyd'])
                    if 'lloyd' in runs else None)
        print(f'\n**{g}: n = {n}, k = {k}, sigma^2 = {s2}**\n')
        lloyd_cpu = statistics.median(r['cpu_s'] for r in runs['lloyd']) if 'lloyd' in runs else None
        print('| method | iterations | skipped | ms/iteration (median) | total s min | total s median '
              '| CPU s median | speed-up vs lloyd (total, wall) | (total, CPU) | (per iteration, wall) '
              '| inertia | what ran / labels |')
        print('|---|---|---|---|---|---|---|---|---|---|---|---|')
        for m, rs in runs.items():
            tot = [r['total_s'] for r in rs]
            per = statistics.median(r['iter_s'] / max(r['iterations'], 1) for r in rs)
            med = statistics.median(tot)
            cpu = statistics.median(r.get('cpu_s', float('nan')) for r in rs)
            sk = f"{rs[0]['skipped'] * 100:.1f}%" if 'skipped' in rs[0] else ''
            su = f'{lloyd / med:.2f}x' if lloyd else ''
            suc = f'{lloyd_cpu / cpu:.2f}x' if lloyd_cpu and cpu == cpu else ''
            sui = f'{lloyd_it / per:.2f}x' if lloyd_it and 'skipped' in rs[0] else ''
            what = rs[0].get('method_used', '')
            if 'same_labels_as_ours' in rs[0]:
                what = f"{rs[0]['same_labels_as_ours'] * 100:.2f}% of labels as ours"
            elif 'labels_hash' in rs[0]:
                what += f" ({rs[0]['labels_hash'][:6]})"
            print(f'| {m} | {rs[0]["iterations"]} | {sk} | {per * 1000:.1f} | {min(tot):.2f} | {med:.2f} '
                  f'| {cpu:.2f} | {su} | {suc} | {sui} | {rs[0].get("inertia", float("nan")):.10g} | {what} |')


if __name__ == '__main__':
    main()
