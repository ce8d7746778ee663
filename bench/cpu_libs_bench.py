#!/usr/bin/env python3
"""cpu_libs_bench.py: the CPU engine against scikit-learn and FAISS, on the
same rows from the same initial centroids, at equal threads.

For each shape (n x d, k) it writes the rows once (Gaussian blobs, float32)
and k distinct random rows as the start, then times, alternating round by
round:
  ours     build/bench/engine_file_bench (the engine through its C API)
  sklearn  KMeans(init=C, n_init=1, algorithm='lloyd', tol=0) on float32
  faiss    faiss.Kmeans(max_points_per_centroid=n) trained from C: every row
  faiss-sub  the same with FAISS's default subsampling (256 rows per
           centroid), reported apart: it answers a different question
Per method: ms per iteration (fit time / iterations: each counts its own
bookkeeping, our final assignment included), total, ratio ours/theirs, and
the inertia of its final centroids recomputed here in fp64 over all rows
(so no speed is claimed for a different answer), next to what it reported.
Floors: 2nkd flops at the machine's measured SGEMM rate (NumPy's BLAS, at
the same threads), and one read of the rows at its measured read bandwidth
(build/bench/cpu_peak, which also reports a register-only FMA loop).

k-means++ anchors (--kpp): our init time (engine, k-means++) and
scikit-learn's kmeans_plusplus, each over our time per iteration.

The script makes its own virtual environment (--venv) with faiss-cpu,
scikit-learn, threadpoolctl and numpy from PyPI, then re-runs itself in it.
Offline (--wheels DIR): pip installs from DIR only, and the venv sees the
system's site-packages (NumPy, scikit-learn already there). --fetch-wheels DIR
downloads the wheels that a machine without internet needs.

  bench/cpu_libs_bench.py --threads 1,2                 # this machine
  bench/cpu_libs_bench.py --threads 1,2,4,8,16 --wheels /path/wheels
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PKGS = ['numpy', 'scikit-learn', 'threadpoolctl', 'faiss-cpu']

# n, d, k, mode: 'iter' = 20 iterations; 'conv' = until no label changes
SHAPES = {
    'issue': [(1000000, 2, 8, 'iter'), (1000000, 16, 64, 'iter'), (200000, 128, 256, 'iter'),
              (100000, 768, 100, 'iter'), (245760, 32, 32, 'conv')],
    'anchors': [(1000000, 2, 256, 'iter'), (1000000, 16, 256, 'iter'), (100000, 768, 256, 'iter')],
    'small': [(100000, 2, 8, 'iter'), (50000, 16, 64, 'iter'), (20000, 128, 256, 'iter')],
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--threads', default='1,2', help='comma-separated thread counts')
    p.add_argument('--sets', default='issue,anchors', help='shape sets: ' + ','.join(SHAPES))
    p.add_argument('--shape', action='append', default=[],
                   help='extra shape n,d,k[,conv] (repeatable)')
    p.add_argument('--iters', type=int, default=20)
    p.add_argument('--max-conv-iters', type=int, default=300)
    p.add_argument('--repeats', type=int, default=2, help='alternated rounds; min and median kept')
    p.add_argument('--methods', default='ours,sklearn,faiss,faiss-sub')
    p.add_argument('--kpp', default='256', help='k values whose k-means++ init is timed ("" = none)')
    p.add_argument('--seed', type=int, default=7)
    p.add_argument('--data-dir', default='/tmp/pgkm-cpu-libs-bench')
    p.add_argument('--build-dir', default=os.path.join(ROOT, 'build'))
    p.add_argument('--base-build-dir', default=None,
                   help="another build's engine_file_bench, run as method 'base' alternately with ours")
    p.add_argument('--venv', default=os.path.expanduser('~/.cache/pgkm-cpu-libs-venv'))
    p.add_argument('--wheels', default=None, help='install from this folder only (offline)')
    p.add_argument('--fetch-wheels', default=None, metavar='DIR',
                   help='download faiss-cpu + threadpoolctl wheels for --py (then exit)')
    p.add_argument('--py', default='312', help='CPython version tag for --fetch-wheels')
    p.add_argument('--json', default=None, help='write every number here')
    p.add_argument('--worker', default=None, help=argparse.SUPPRESS)
    return p.parse_args()


# ---------------------------------------------------------------- environment

def in_venv(venv):
    return os.path.realpath(sys.prefix) == os.path.realpath(venv)


def ensure_venv(a):
    """Create the venv when missing and re-exec this script inside it."""
    if in_venv(a.venv):
        return
    py = os.path.join(a.venv, 'bin', 'python')
    if not os.path.exists(py):
        cmd = [sys.executable, '-m', 'venv']
        if a.wheels:
            cmd.append('--system-site-packages')
        subprocess.check_call(cmd + [a.venv])
        if a.wheels and sys.prefix != sys.base_prefix:
            # --system-site-packages sees the base interpreter's packages only; when this
            # script runs inside another venv (NumPy and scikit-learn there), chain to it.
            import site
            out = subprocess.check_output([py, '-c', 'import site; print(site.getsitepackages()[0])'])
            with open(os.path.join(out.decode().strip(), 'parent-venv.pth'), 'w') as f:
                f.write('\n'.join(site.getsitepackages()) + '\n')
        pip = [py, '-m', 'pip', 'install', '-q']
        if a.wheels:
            pip += ['--no-index', '--find-links', a.wheels, 'faiss-cpu', 'threadpoolctl']
        else:
            pip += PKGS
        subprocess.check_call(pip)
    os.execv(py, [py] + sys.argv)


def fetch_wheels(a):
    os.makedirs(a.fetch_wheels, exist_ok=True)
    subprocess.check_call([sys.executable, '-m', 'pip', 'download', '-d', a.fetch_wheels,
                           '--only-binary=:all:', '--python-version', a.py,
                           '--platform', 'manylinux_2_28_x86_64', '--platform', 'manylinux2014_x86_64',
                           'faiss-cpu', 'threadpoolctl', 'packaging'])
    print('wheels in', a.fetch_wheels, ':', ' '.join(sorted(os.listdir(a.fetch_wheels))))


# ---------------------------------------------------------------- data

def shape_files(a, n, d, k):
    base = os.path.join(a.data_dir, 'n%d_d%d' % (n, d))
    return base + '.f32', base + '_k%d_s%d.f64' % (k, a.seed)


def make_data(a, n, d, k):
    """Blobs: 32 centres uniform in [-10, 10]^d, sigma 2 (as bench/cpu_bench.py); k random rows."""
    import numpy as np
    xf, cf = shape_files(a, n, d, k)
    os.makedirs(a.data_dir, exist_ok=True)
    if not os.path.exists(xf):
        rng = np.random.default_rng(20240601 + d)
        centres = rng.uniform(-10, 10, size=(32, d))
        x = np.empty((n, d), dtype=np.float32)
        for s in range(0, n, 65536):
            e = min(n, s + 65536)
            lab = rng.integers(0, 32, size=e - s)
            x[s:e] = centres[lab] + rng.normal(0, 2.0, size=(e - s, d))
        x.tofile(xf + '.tmp')
        os.replace(xf + '.tmp', xf)
    if not os.path.exists(cf):
        x = np.fromfile(xf, dtype=np.float32).reshape(n, d)
        rng = np.random.default_rng(a.seed)
        rows = rng.choice(n, size=k, replace=False)
        x[rows].astype(np.float64).tofile(cf)
    return xf, cf


def load(xf, n, d):
    import numpy as np
    return np.fromfile(xf, dtype=np.float32).reshape(n, d)


def inertia_fp64(x, c):
    """sum over rows of the squared distance to the nearest centroid, in fp64."""
    import numpy as np
    c = np.asarray(c, dtype=np.float64)
    cn = (c * c).sum(1)
    tot = 0.0
    for s in range(0, x.shape[0], 8192):
        xb = x[s:s + 8192].astype(np.float64)
        d2 = (xb * xb).sum(1)[:, None] - 2 * xb @ c.T + cn[None, :]
        j = d2.argmin(1)
        diff = xb - c[j]
        tot += float((diff * diff).sum())
    return tot


# ---------------------------------------------------------------- one timed run (own process)

def worker(a):
    """Runs one method once in this process and prints a JSON line."""
    spec = json.loads(a.worker)
    method, n, d, k, T = spec['method'], spec['n'], spec['d'], spec['k'], spec['threads']
    xf, cf, max_iter, conv = spec['x'], spec['c'], spec['max_iter'], spec['conv']
    import numpy as np
    from threadpoolctl import threadpool_limits
    out = {}
    if method != 'sgemm':
        x = load(xf, n, d)
        c0 = np.fromfile(cf, dtype=np.float64).reshape(k, d)
    if method == 'sklearn':
        from sklearn.cluster import KMeans
        with threadpool_limits(limits=T):
            km = KMeans(n_clusters=k, init=c0.astype(np.float32), n_init=1, max_iter=max_iter,
                        tol=0.0, algorithm='lloyd')
            t0 = time.perf_counter()
            km.fit(x)
            s = time.perf_counter() - t0
        out = dict(total_s=s, iterations=int(km.n_iter_), reported=float(km.inertia_),
                   centroids=km.cluster_centers_)
    elif method == 'sgemm':
        m = 2048
        a = np.full((m, m), 0.5, dtype=np.float32)
        b = np.full((m, m), 0.25, dtype=np.float32)
        best = 0.0
        with threadpool_limits(limits=T):
            for rep in range(4):
                t0 = time.perf_counter()
                a @ b.T
                s = time.perf_counter() - t0
                if rep:
                    best = max(best, 2.0 * m ** 3 / s / 1e9)
        out = dict(gflops=best)
    elif method == 'sklearn-kpp':
        from sklearn.cluster import kmeans_plusplus
        with threadpool_limits(limits=T):
            t0 = time.perf_counter()
            kmeans_plusplus(x, k, random_state=0)
            out = dict(total_s=time.perf_counter() - t0)
    elif method in ('faiss', 'faiss-sub'):
        import faiss
        faiss.omp_set_num_threads(T)
        with threadpool_limits(limits=T):
            kw = dict(niter=max_iter, seed=1, verbose=False)
            if method == 'faiss':
                kw['max_points_per_centroid'] = n
            km = faiss.Kmeans(d, k, **kw)
            t0 = time.perf_counter()
            km.train(x, init_centroids=c0.astype(np.float32))
            s = time.perf_counter() - t0
        obj = list(km.obj)
        out = dict(total_s=s, iterations=len(obj), reported=float(obj[-1]) if obj else None,
                   centroids=km.centroids)
    if 'centroids' in out:
        out['inertia'] = inertia_fp64(x, out.pop('centroids'))
    print(json.dumps(out))


def run_worker(a, spec):
    cmd = [sys.executable, os.path.abspath(__file__), '--worker', json.dumps(spec)]
    env = dict(os.environ, OMP_NUM_THREADS=str(spec['threads']),
               OPENBLAS_NUM_THREADS=str(spec['threads']), MKL_NUM_THREADS=str(spec['threads']))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return dict(error=r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed')
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_ours(a, spec, init='given', build_dir=None):
    import numpy as np
    n, d, k = spec['n'], spec['d'], spec['k']
    outc = spec['c'] + '.ours.f64'
    cmd = [os.path.join(build_dir or a.build_dir, 'bench', 'engine_file_bench'), spec['x'], str(n), str(d),
           str(k), str(spec['threads']), str(spec['max_iter']), '0', init, spec['c'], outc]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return dict(error=r.stderr.strip())
    o = json.loads(r.stdout)
    if init != 'given':
        return o
    res = dict(total_s=sum(o['iter_s']) + o['final_s'], iterations=o['iterations'],
               reported=o['inertia'], init_s=o['init_s'])
    res['inertia'] = inertia_fp64(load(spec['x'], n, d),
                                  np.fromfile(outc, dtype=np.float64).reshape(o['k'], d))
    return res


def timed(a, method, spec):
    if method == 'ours':
        return run_ours(a, spec)
    if method == 'base':
        return run_ours(a, spec, build_dir=a.base_build_dir)
    return run_worker(a, dict(spec, method=method))


# ---------------------------------------------------------------- the benchmark

def peaks(a, threads):
    exe = os.path.join(a.build_dir, 'bench', 'cpu_peak')
    r = subprocess.run([exe] + [str(t) for t in threads], capture_output=True, text=True, check=True)
    pk = {p['threads']: p for p in map(json.loads, r.stdout.split('\n')[:-1])}
    for t in threads:
        pk[t]['sgemm_gflops'] = run_worker(a, dict(method='sgemm', n=1, d=1, k=1, threads=t, x='',
                                                   c='', max_iter=1, conv=False))['gflops']
    return pk


def machine():
    model = ''
    flags = set()
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name') and not model:
                model = line.split(':', 1)[1].strip()
            if line.startswith('flags') and not flags:
                flags = set(line.split(':', 1)[1].split())
    isa = ' '.join(f for f in ('avx2', 'fma', 'avx512f') if f in flags)
    import numpy
    import sklearn
    try:
        import faiss
        fv = faiss.__version__
    except Exception:
        fv = 'not installed'
    return ('%d cores (nproc), %s (%s); Python %s, NumPy %s, scikit-learn %s, faiss-cpu %s'
            % (os.cpu_count(), model, isa, platform.python_version(), numpy.__version__,
               sklearn.__version__, fv))


def stat(vals):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None, None
    return vals[0], vals[len(vals) // 2] if len(vals) % 2 else 0.5 * (vals[len(vals) // 2 - 1] + vals[len(vals) // 2])


def one_thread_blas_here():
    """This process's own NumPy (data, fp64 inertias between timed runs) on one thread: OpenBLAS's idle
    threads spin for a while after each call and would take cores from the next timed run, started at
    once. Timed children set their thread counts explicitly (run_worker); ours use no BLAS."""
    for v in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        os.environ[v] = '1'


def main():
    a = parse_args()
    if a.worker:
        return worker(a)
    if a.fetch_wheels:
        return fetch_wheels(a)
    one_thread_blas_here()
    ensure_venv(a)
    threads = [int(t) for t in a.threads.split(',')]
    methods = a.methods.split(',')
    if a.base_build_dir and 'base' not in methods:
        methods.insert(1, 'base')
    shapes = []
    for s in a.sets.split(','):
        if s:
            shapes += SHAPES[s]
    for s in a.shape:
        f = s.split(',')
        shapes.append((int(f[0]), int(f[1]), int(f[2]), 'conv' if len(f) > 3 else 'iter'))
    kpp_ks = {int(v) for v in a.kpp.split(',') if v}
    pk = peaks(a, threads)
    print('Machine:', machine())
    print('Load average at start: %.2f %.2f %.2f' % os.getloadavg())
    for t in threads:
        print('Ceilings at %d threads: SGEMM %.1f GFLOP/s, FMA loop %.1f GFLOP/s (AVX-512) / %.1f (AVX2), '
              'read %.2f GB/s' % (t, pk[t]['sgemm_gflops'], pk[t]['fma512_gflops'], pk[t]['fma256_gflops'],
                                   pk[t]['read_gbs']))
    results = dict(machine=machine(), peaks=pk, rows=[])
    hdr = ('| n x d, k | thr | ours ms/it | sklearn ms/it (ratio) | faiss ms/it (ratio) | floor ms '
           '(flop / mem) | ours/floor | iters o/s/f | inertia o/s/f (fp64, all rows) | faiss-sub ms/it, inertia |')
    print()
    print(hdr)
    print('|' + '---|' * 10)
    for (n, d, k, mode) in shapes:
        xf, cf = make_data(a, n, d, k)
        for T in threads:
            spec = dict(n=n, d=d, k=k, threads=T, x=xf, c=cf, conv=mode == 'conv',
                        max_iter=a.max_conv_iters if mode == 'conv' else a.iters)
            runs = {m: [] for m in methods}
            for rep in range(a.repeats):
                for m in methods:
                    if mode == 'conv' and m.startswith('faiss'):
                        continue
                    runs[m].append(dict(timed(a, m, spec), load=os.getloadavg()[0]))
            row = dict(n=n, d=d, k=k, mode=mode, threads=T, runs=runs)
            per = {}
            for m, rs in runs.items():
                ok = [r for r in rs if 'error' not in r]
                if not ok:
                    per[m] = None
                    continue
                mn, md = stat([r['total_s'] / max(r['iterations'], 1) for r in ok])
                per[m] = dict(min_ms=mn * 1e3, median_ms=md * 1e3, iterations=ok[0]['iterations'],
                              inertia=ok[0].get('inertia'), reported=ok[0].get('reported'),
                              total_min_s=min(r['total_s'] for r in ok))
            row['summary'] = per
            flop_ms = 2.0 * n * k * d / (pk[T]['sgemm_gflops'] * 1e9) * 1e3
            mem_ms = 4.0 * n * d / (pk[T]['read_gbs'] * 1e9) * 1e3
            row['floor_ms'] = dict(flop=flop_ms, mem=mem_ms)
            results['rows'].append(row)

            def cell(m):
                p = per.get(m)
                if not p:
                    return 'n/a'
                o = per.get('ours')
                ratio = ' (%.2f)' % (o['min_ms'] / p['min_ms']) if o and m != 'ours' else ''
                return '%.1f%s' % (p['min_ms'], ratio)

            def g(m, key, f='%d'):
                p = per.get(m)
                return f % p[key] if p and p.get(key) is not None else '-'
            o = per.get('ours')
            floor = max(flop_ms, mem_ms)
            print('| %d x %d, k = %d%s | %d | %s | %s | %s | %.1f (%.1f / %.1f) | %s | %s/%s/%s | %s / %s / %s | %s, %s |' % (
                n, d, k, ' (conv)' if mode == 'conv' else '', T, cell('ours'), cell('sklearn'), cell('faiss'),
                floor, flop_ms, mem_ms, '%.1f' % (o['min_ms'] / floor) if o else '-',
                g('ours', 'iterations'), g('sklearn', 'iterations'), g('faiss', 'iterations'),
                g('ours', 'inertia', '%.7g'), g('sklearn', 'inertia', '%.7g'), g('faiss', 'inertia', '%.7g'),
                cell('faiss-sub'), g('faiss-sub', 'inertia', '%.7g')), flush=True)
            if per.get('base'):
                b, sk = per['base'], per.get('sklearn')
                print('|   base build | %d | %.1f (ours/base %.3f) | %s | | | | %s | %s | |' % (
                    T, b['min_ms'], o['min_ms'] / b['min_ms'] if o else float('nan'),
                    '%.1f (base/sklearn %.2f)' % (sk['min_ms'], b['min_ms'] / sk['min_ms']) if sk else 'n/a',
                    g('base', 'iterations'), g('base', 'inertia', '%.7g')), flush=True)
    if kpp_ks:
        print()
        print('| n x d, k | thr | ours k-means++ s | in ours iterations | sklearn kmeans_plusplus s | in ours iterations |')
        print('|---|---|---|---|---|---|')
        for (n, d, k, mode) in shapes:
            if k not in kpp_ks:
                continue
            xf, cf = make_data(a, n, d, k)
            for T in threads:
                spec = dict(n=n, d=d, k=k, threads=T, x=xf, c=cf, conv=False, max_iter=1)
                ours_it = [r for r in results['rows'] if (r['n'], r['d'], r['k'], r['threads']) == (n, d, k, T)]
                it_ms = ours_it[0]['summary']['ours']['min_ms'] if ours_it and ours_it[0]['summary'].get('ours') else None
                ok, sk = [], []
                for rep in range(a.repeats):
                    r = run_ours(a, spec, init='pp')
                    if 'init_s' in r:
                        ok.append(r['init_s'])
                    r = run_worker(a, dict(spec, method='sklearn-kpp'))
                    if 'total_s' in r:
                        sk.append(r['total_s'])
                ko, ks = min(ok) if ok else None, min(sk) if sk else None
                results.setdefault('kpp', []).append(dict(n=n, d=d, k=k, threads=T, ours_s=ko,
                                                          sklearn_s=ks, ours_iter_ms=it_ms))

                def its(v):
                    return '%.1f' % (v * 1e3 / it_ms) if v and it_ms else '-'
                print('| %d x %d, k = %d | %d | %s | %s | %s | %s |' % (
                    n, d, k, T, '%.3f' % ko if ko else '-', its(ko), '%.3f' % ks if ks else '-', its(ks)),
                    flush=True)
    print()
    print('Load average at end: %.2f %.2f %.2f' % os.getloadavg())
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(results, f, indent=1)


if __name__ == '__main__':
    main()
