#!/usr/bin/python3
"""cpu_bench.py: time pg_kmeans (CPU) against scikit-learn in PL/Python and
PostGIS ST_ClusterKMeans on the same tables, through SQL, in one session.

Run by bench/run_cpu_bench.sh, which sets up packages, the extension and the
server; this script only needs libpq environment variables (PGHOST, PGPORT,
PGUSER, PGDATABASE) and Debian's python3-psycopg2. It is a benchmark, not a
test: it asserts nothing about speed, it records times, iterations and
inertia, and writes them as JSON and as the CPU section of bench/RESULTS.md.

What each timed statement covers (all timed on the client around one
statement over a unix socket, median of --repeats runs):
  pg_kmeans SQL      CREATE TEMP TABLE .. AS SELECT ctid, cluster FROM kmeans(..)
                     = heap scan into the float32 buffer + init + Lloyd
                       + one output row per input row, written to a temp table
  pg_kmeans fit      SELECT kmeans_fit(..): scan + clustering + model row
  pg_kmeans engine   kmeans_models.elapsed of that fit: init + Lloyd only
  sklearn call       CREATE TEMP TABLE .. AS SELECT * FROM bench.sklearn_kmeans(..)
                     = SPI read into Python + numpy + fit + returning rows
  sklearn fit        KMeans.fit alone (init + Lloyd), timed inside PL/Python
  PostGIS            CREATE TEMP TABLE .. AS SELECT id, ST_ClusterKMeans(geom,k)
                     OVER () FROM t (d = 2 only; PostGIS clusters 2-D/3-D points)
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = 'bench_cpu_model'
BEGIN = '<!-- cpu-bench:%s:begin (bench/cpu_bench.py rewrites this block) -->'
END = '<!-- cpu-bench:%s:end -->'


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--sizes', default='100000,1000000')
    p.add_argument('--dims', default='2,16')
    p.add_argument('--ks', default='8,64')
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--max-iter', type=int, default=50)
    p.add_argument('--tol', type=float, default=0.0)
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--threads', type=int, default=os.cpu_count(),
                   help='threads for pg_kmeans and sklearn (PostGIS is single-threaded)')
    p.add_argument('--sk-dtype', default='float32', choices=['float32', 'float64'])
    p.add_argument('--methods', default='pgkm_sql,pgkm_fit,sklearn,postgis')
    p.add_argument('--centers', type=int, default=32, help='true blob centres in the data')
    p.add_argument('--box', type=float, default=10.0)
    p.add_argument('--sigma', type=float, default=2.0)
    p.add_argument('--data-seed', type=int, default=20240601)
    p.add_argument('--timeout-s', type=int, default=600, help='statement_timeout per timed statement')
    p.add_argument('--single-run-above-s', type=float, default=60.0,
                   help='when a first run takes longer, do not repeat it')
    p.add_argument('--wait-quiet-s', type=float, default=15,
                   help='before each run wait up to this long for other processes to go idle')
    p.add_argument('--quiet-cores', type=float, default=0.25)
    p.add_argument('--clean-cores', type=float, default=0.3,
                   help='repeat a run when other processes used this many cores or more meanwhile (0 = off)')
    p.add_argument('--max-attempts', type=int, default=6, help='runs per method at most, with --clean-cores')
    p.add_argument('--json', default=None, help='default bench/results_cpu[_BLOCK].json')
    p.add_argument('--results-md', default=os.path.join(HERE, 'RESULTS.md'))
    p.add_argument('--command', default='', help='command line to record in RESULTS.md')
    p.add_argument('--block', default='generated',
                   help='name of the RESULTS.md block this run replaces (e.g. threads1 for a second run)')
    p.add_argument('--no-md', action='store_true')
    p.add_argument('--render-only', metavar='JSON',
                   help='no benchmark: rewrite the RESULTS.md block from a saved results JSON')
    a = p.parse_args()
    if a.json is None:
        a.json = os.path.join(HERE, 'results_cpu%s.json' % ('' if a.block == 'generated' else '_' + a.block))
    return a


def log(msg):
    print('[%s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def machine_busy_s():
    """CPU seconds all processes on this machine have been busy (from /proc/stat)."""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return (sum(v[:8]) - idle) / os.sysconf('SC_CLK_TCK')


def process_cpu_s(pid):
    """CPU seconds (user + system, all threads) of one process, or None."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    except OSError:
        return None


class Db:
    """One session. When the server runs on this machine, every timed
    statement also records the backend's CPU time and how busy the rest of
    the machine was meanwhile (other processes: a shared box is noisy)."""
    def __init__(self):
        self.conn = psycopg2.connect('')
        self.conn.autocommit = True
        self.cur = self.conn.cursor()
        self.pid = self.one('SELECT pg_backend_pid()')
        self.local = process_cpu_s(self.pid) is not None
        self.last_cpu = None

    def q(self, sql, args=None):
        self.cur.execute(sql, args)
        return self.cur.fetchall() if self.cur.description else None

    def one(self, sql, args=None):
        rows = self.q(sql, args)
        return rows[0][0] if rows else None

    def timed(self, sql, args=None, timeout_s=None):
        """Runs one statement; returns (seconds, None), or (None, why) when it
        failed or hit statement_timeout (why includes the time it took)."""
        if timeout_s:
            self.q('SET statement_timeout = %s', (int(timeout_s * 1000),))
        self.last_cpu = None
        if self.local:
            c0, m0 = process_cpu_s(self.pid), machine_busy_s()
        t0 = time.perf_counter()
        try:
            self.cur.execute(sql, args)
            wall = time.perf_counter() - t0
            if self.local:
                own = process_cpu_s(self.pid) - c0
                others = max(0.0, machine_busy_s() - m0 - own)
                # cores: average number of cores busy during the statement.
                self.last_cpu = {'backend_cores': own / wall, 'other_cores': others / wall}
            return wall, None
        except psycopg2.errors.QueryCanceled:
            return None, 'timeout after %.0f s' % (time.perf_counter() - t0)
        except psycopg2.Error as e:
            msg = (e.pgerror or str(e)).strip().splitlines()[0]
            return None, 'failed after %.1f s: %s' % (time.perf_counter() - t0, msg)
        finally:
            if timeout_s:
                self.q('SET statement_timeout = 0')


def table_name(n, d):
    return 'bench.blobs_n%d_d%d' % (n, d)


def feature_cols(d):
    return ['x%d' % (j + 1) for j in range(d)]


def load_table(db, a, n, d):
    """Creates (or reuses, when its comment matches) one deterministic table."""
    tbl = table_name(n, d)
    tag = 'blobs n=%d d=%d centers=%d box=%g sigma=%g seed=%d' % (
        n, d, a.centers, a.box, a.sigma, a.data_seed)
    have = db.one("SELECT obj_description(to_regclass(%s), 'pg_class')", (tbl,))
    if have == tag:
        log('reusing %s' % tbl)
        return tbl, None
    db.q('DROP TABLE IF EXISTS %s' % tbl)
    cols = ', '.join('b.x[%d] AS x%d' % (j + 1, j + 1) for j in range(d))
    geom = ', ST_MakePoint(b.x[1], b.x[2])::geometry(Point) AS geom' if d == 2 else ''
    t0 = time.perf_counter()
    db.q('CREATE TABLE %s AS SELECT b.id, %s%s FROM bench.blobs(%%s, %%s, %%s, %%s, %%s, %%s) b'
         % (tbl, cols, geom), (n, d, a.centers, a.box, a.sigma, a.data_seed))
    db.q('VACUUM (FREEZE, ANALYZE) %s' % tbl)
    db.q('COMMENT ON TABLE %s IS %%s' % tbl, (tag,))
    secs = time.perf_counter() - t0
    log('loaded %s in %.1f s' % (tbl, secs))
    return tbl, secs


def pgkm_call(fn, tbl, d, k, a, model=None):
    cols = 'ARRAY[%s]' % ', '.join("'%s'" % c for c in feature_cols(d))
    head = "'%s', " % model if model else ''
    return ("%s(%s'%s', %s, %d, method => 'lloyd', max_iter => %d, tol => %r, "
            "init => 'k-means++', n_init => 1, seed => %d, device => 'cpu')"
            % (fn, head, tbl, cols, k, a.max_iter, a.tol, a.seed))


def model_row(db):
    """The bench model's row of kmeans_models as a dict (column names as the glue defines them)."""
    rows = db.q('SELECT row_to_json(m) FROM kmeans_models m')
    for (r,) in rows:
        if MODEL in [v for v in r.values() if isinstance(v, str)]:
            return r
    raise RuntimeError('model %s not found in kmeans_models' % MODEL)


def pick(row, *names):
    for nm in names:
        if nm in row:
            return row[nm]
    for key in row:
        if any(nm in key for nm in names):
            return row[key]
    return None


def run_method(db, a, method, tbl, d, k):
    """One timed run. Returns a dict with 'time' (None on failure, with
    'error' saying why) and the method's extras."""
    db.q('DROP TABLE IF EXISTS pg_temp.bench_labels')
    if method == 'pgkm_sql':
        sql = ('CREATE TEMP TABLE bench_labels AS SELECT ctid AS row_tid, cluster FROM %s'
               % pgkm_call('kmeans', tbl, d, k, a))
        t, err = db.timed(sql, timeout_s=a.timeout_s)
        return {'time': t, 'error': err, 'key': ('ctid', 'row_tid')}
    if method == 'pgkm_fit':
        t, err = db.timed('SELECT %s' % pgkm_call('kmeans_fit', tbl, d, k, a, MODEL), timeout_s=a.timeout_s)
        if t is None:
            return {'time': None, 'error': err}
        row = model_row(db)
        return {'time': t, 'engine_s': pick(row, 'elapsed_s', 'elapsed'),
                'iterations': pick(row, 'iterations', 'n_iter'),
                'inertia_reported': pick(row, 'inertia'), 'device': pick(row, 'device')}
    if method == 'sklearn':
        sql = ('CREATE TEMP TABLE bench_labels AS SELECT * FROM bench.sklearn_kmeans('
               "'%s', %s, %d, %d, %r, %d, %d, '%s')" % (
                   tbl, 'ARRAY[%s]' % ', '.join("'%s'" % c for c in feature_cols(d)),
                   k, a.max_iter, a.tol, a.seed, a.threads, a.sk_dtype))
        t, err = db.timed(sql, timeout_s=a.timeout_s)
        if t is None:
            return {'time': None, 'error': err}
        last = json.loads(db.one('SELECT bench.sklearn_last()::text'))
        return {'time': t, 'fit_s': last['fit_s'], 'read_s': last['read_s'],
                'iterations': last['n_iter'], 'inertia_reported': last['inertia_sklearn'],
                'key': ('id', 'id')}
    if method == 'postgis':
        sql = ('CREATE TEMP TABLE bench_labels AS SELECT id, ST_ClusterKMeans(geom, %d) OVER () AS cluster FROM %s'
               % (k, tbl))
        t, err = db.timed(sql, timeout_s=a.timeout_s)
        return {'time': t, 'error': err, 'key': ('id', 'id')}
    raise ValueError(method)


def wait_for_quiet(a):
    """On a shared machine, wait (at most --wait-quiet-s) until the other
    processes use fewer than --quiet-cores cores over a 0.5 s sample."""
    if a.wait_quiet_s <= 0:
        return 0.0
    t0 = time.perf_counter()
    while True:
        m0 = machine_busy_s()
        time.sleep(0.5)
        busy = (machine_busy_s() - m0) / 0.5
        waited = time.perf_counter() - t0
        if busy < a.quiet_cores or waited >= a.wait_quiet_s:
            if waited > 5:
                log('    waited %.0f s for a quiet machine (busy %.2f cores)' % (waited, busy))
            return busy


def run_method_cpu(db, a, method, tbl, d, k):
    wait_for_quiet(a)
    out = run_method(db, a, method, tbl, d, k)
    if db.last_cpu and out['time'] is not None:
        out.update(db.last_cpu)
    return out


def inertia_of_labels(db, tbl, d, key):
    cols = 'ARRAY[%s]' % ', '.join("'%s'" % c for c in feature_cols(d))
    return db.q("SELECT inertia, n_rows, n_clusters FROM bench.inertia('%s', %s, 'pg_temp.bench_labels', '%s', '%s')"
                % (tbl, cols, key[0], key[1]))[0]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def is_clean(a, out):
    """A run counts when other processes stayed below --clean-cores meanwhile
    (always, when that cannot be measured or --clean-cores is 0)."""
    return a.clean_cores <= 0 or out.get('other_cores') is None or out['other_cores'] < a.clean_cores


def bench_config(db, a, methods, tbl, n, d, k):
    """Runs every method --repeats times, interleaved (method A, B, C, A, B,
    C, ...) so that drift hits all alike. On a shared machine a run during
    which other processes were busy is repeated, up to --max-attempts runs
    per method; the median is then over the clean runs only."""
    res = {}
    for m in methods:
        if m == 'postgis' and d != 2:
            continue
        res[m] = {'runs': []}
    for attempt in range(max(a.max_attempts, a.repeats)):
        for m in res:
            r = res[m]
            clean = [x for x in r['runs'] if x['time'] is not None and is_clean(a, x)]
            if r.get('stop') or len(clean) >= a.repeats:
                continue
            out = run_method_cpu(db, a, m, tbl, d, k)
            out['clean'] = is_clean(a, out)
            r['runs'].append(out)
            if out['time'] is None:
                r['stop'] = out['error']
                log('  %-8s n=%d d=%d k=%d run %d: %s' % (m, n, d, k, attempt + 1, out['error']))
                continue
            extra = ''
            if 'fit_s' in out:
                extra = ' (fit %.3f s, %s iter)' % (out['fit_s'], out['iterations'])
            if 'engine_s' in out:
                extra = ' (engine %.3f s, %s iter)' % (out['engine_s'] or float('nan'), out['iterations'])
            if 'other_cores' in out:
                extra += ' [backend %.2f cores, others %.2f cores%s]' % (
                    out['backend_cores'], out['other_cores'], '' if out['clean'] else ': noisy, repeat')
            log('  %-8s n=%d d=%d k=%d run %d: %.3f s%s' % (m, n, d, k, attempt + 1, out['time'], extra))
            if 'inertia' not in r and 'key' in out:
                # Labels are deterministic (fixed seeds; PostGIS has no randomness), so the
                # first run's labelling stands for all.
                r['inertia'], r['n_rows'], r['n_clusters'] = inertia_of_labels(db, tbl, d, out['key'])
            if out['time'] > a.single_run_above_s:
                r['stop'] = 'single run (took %.0f s)' % out['time']
    for m, r in res.items():
        ok = [x for x in r['runs'] if x['time'] is not None]
        clean = [x for x in ok if x.get('clean')]
        r['used'] = clean if clean else ok
        if ok and len(clean) < min(a.repeats, len(ok)) and not r.get('stop'):
            r['stop'] = 'only %d of %d runs clean (others busy)' % (len(clean), len(ok))
    summary = {}
    for m, r in res.items():
        s = {'n_runs': len(r['used']), 'n_attempts': len(r['runs']), 'note': r.get('stop', '')}
        s['time'] = med([x['time'] for x in r['used']])
        for key in ('fit_s', 'read_s', 'engine_s', 'backend_cores', 'other_cores'):
            vals = [x.get(key) for x in r['used'] if x.get(key) is not None]
            if vals:
                s[key] = statistics.median(vals)
        for key in ('iterations', 'inertia_reported', 'device'):
            vals = [x.get(key) for x in r['runs'] if x.get(key) is not None]
            if vals:
                s[key] = vals[0]
        for key in ('inertia', 'n_rows', 'n_clusters'):
            if key in r:
                s[key] = r[key]
        s['all_runs'] = r['runs']
        summary[m] = s
    return summary


def machine_info(db):
    cpu = 'unknown'
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    mem_kb = 0
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemTotal'):
                mem_kb = int(line.split()[1])
    flags = ''
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('flags'):
                fl = line.split(':', 1)[1].split()
                flags = ' '.join(x for x in ('avx2', 'avx512f', 'fma') if x in fl)
                break
    info = {
        'nproc': os.cpu_count(), 'cpu': cpu, 'cpu_flags': flags,
        'ram_gib': round(mem_kb / 1024 / 1024, 1),
        'os': platform.platform(),
        'postgres': db.one('SELECT version()'),
        'postgis': db.one("SELECT extversion FROM pg_extension WHERE extname = 'postgis'"),
        'pg_kmeans': db.one("SELECT extversion FROM pg_extension WHERE extname = 'pg_kmeans'"),
        'python_side': json.loads(db.one('SELECT bench.sklearn_versions()::text')),
        'date': datetime.datetime.now().strftime('%Y-%m-%d %H:%M'),
    }
    try:
        info['git'] = subprocess.check_output(['git', '-C', HERE, 'rev-parse', '--short', 'HEAD'],
                                              text=True, stderr=subprocess.DEVNULL).strip()
        # The build uses the working tree: say so when the engine or glue differ from HEAD.
        dirty = subprocess.check_output(['git', '-C', os.path.dirname(HERE), 'status', '--porcelain',
                                         '--', 'src', 'sql', 'CMakeLists.txt', 'Makefile'],
                                        text=True, stderr=subprocess.DEVNULL).rstrip()
        if dirty:
            info['git'] += ' + uncommitted changes in ' + ', '.join(sorted(
                {ln[3:].split('/')[0] + ('/' + ln[3:].split('/')[1] if ln[3:].count('/') > 1 else '')
                 for ln in dirty.splitlines()}))
    except Exception:
        info['git'] = 'unknown'
    return info


def fmt(x, nd=3):
    if x is None:
        return '–'
    if isinstance(x, float):
        if x >= 100:
            return '%.1f' % x
        if x >= 10:
            return '%.2f' % x
        return ('%.' + str(nd) + 'f') % x
    return str(x)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return '–'
    return '%.2f×' % (a / b)


def render_md(res):
    a = res['args']
    mi = res['machine']
    L = [BEGIN % a['block'], '']
    L.append('Generated %s at git %s by `bench/cpu_bench.py`.' % (mi['date'], mi['git']))
    L.append('')
    L.append('**Command:** `%s`' % (res['command'] or 'bench/run_cpu_bench.sh'))
    L.append('')
    L.append('**Machine:** %d cores (`nproc`), %s (%s), %.1f GiB RAM; %s.'
             % (mi['nproc'], mi['cpu'], mi['cpu_flags'], mi['ram_gib'], mi['os']))
    ps = mi['python_side']
    pools = ', '.join('%s %s' % (p['internal_api'], p['version'] or '') for p in ps['threadpools'])
    L.append('%s; pg_kmeans %s; PostGIS %s; PL/Python %s with numpy %s, scikit-learn %s (%s).'
             % (mi['postgres'].split(' on ')[0], mi['pg_kmeans'], mi['postgis'], ps['python'],
                ps['numpy'], ps['sklearn'], pools.strip()))
    L.append('')
    L.append('**Settings:** threads = %d for pg_kmeans (`SET pg_kmeans.threads`) and for scikit-learn '
             '(OMP/OPENBLAS_NUM_THREADS + threadpoolctl); PostGIS is single-threaded. '
             'init k-means++, n_init = 1, max_iter = %d, tol = %g, seed = %d for pg_kmeans and '
             'scikit-learn (KMeans(algorithm="lloyd"), fed %s); PostGIS has no iteration, '
             'tolerance or init parameter (deterministic farthest-point init, runs to convergence, at most 1000 '
             'iterations). `jit = off`, `max_parallel_workers_per_gather = 0`. Median of %d runs '
             '(single runs are marked)%s. Data: Gaussian blobs, %d centres uniform in [-%g, %g]^d, '
             'sigma %g, numpy seed %d; float8 columns x1..xd (+ a PostGIS point for d = 2).'
             % (a['threads'], a['max_iter'], a['tol'], a['seed'], a['sk_dtype'], a['repeats'],
                ('; on this shared machine a run counts only when other processes used < %.2f cores '
                 'meanwhile, else it is repeated (at most %d runs per method; "noisy" notes mark '
                 'configurations where that failed)' % (a['clean_cores'], a['max_attempts']))
                if a.get('clean_cores') else '',
                a['centers'], a['box'], a['box'], a['sigma'], a['data_seed']))
    L.append('')
    L.append('Times in seconds. Ratios are *other / pg_kmeans*: above 1× pg_kmeans is faster.')
    L.append('')
    L.append('| n | d | k | pg_kmeans SQL | pg_kmeans fit call | pg_kmeans engine | iters | sklearn call '
             '| sklearn read | sklearn fit | iters | PostGIS | sklearn fit / engine | per iteration '
             '| sklearn call / SQL | PostGIS / SQL |')
    L.append('|' + '---:|' * 16)
    notes = []
    for c in res['configs']:
        s = c['methods']
        P, F, S, G = (s.get(m, {}) for m in ('pgkm_sql', 'pgkm_fit', 'sklearn', 'postgis'))
        per_iter = '–'
        if F.get('engine_s') and S.get('fit_s') and F.get('iterations') and S.get('iterations'):
            per_iter = ratio(S['fit_s'] / S['iterations'], F['engine_s'] / F['iterations'])
        ran_postgis = 'postgis' in a['methods'].split(',')
        gt = (fmt(G.get('time')) if G.get('time') else 'no result (note)') if G else \
            ('n/a (2-D only)' if ran_postgis else 'not run')
        for nm, m in (('pg_kmeans SQL', P), ('pg_kmeans fit', F), ('sklearn', S), ('PostGIS', G)):
            if m and m.get('note'):
                notes.append('n=%d d=%d k=%d %s: %s' % (c['n'], c['d'], c['k'], nm, m['note']))
        L.append('| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            '{:,}'.format(c['n']), c['d'], c['k'], fmt(P.get('time')), fmt(F.get('time')),
            fmt(F.get('engine_s')), fmt(F.get('iterations')), fmt(S.get('time')), fmt(S.get('read_s')),
            fmt(S.get('fit_s')), fmt(S.get('iterations')), gt,
            ratio(S.get('fit_s'), F.get('engine_s')), per_iter,
            ratio(S.get('time'), P.get('time')), ratio(G.get('time'), P.get('time')) if G else
            ('n/a' if ran_postgis else 'not run')))
    L.append('')
    if notes:
        L.append('Notes: ' + '; '.join(notes) + '.')
        L.append('')
    L.append('Inertia of each method\'s labelling, recomputed in SQL the same way for all '
             '(centroid = mean of the rows a method grouped, `bench.inertia()`), and relative to '
             'scikit-learn; "reported" is what the method itself returned.')
    L.append('')
    L.append('| n | d | k | pg_kmeans SQL | pg_kmeans fit (reported) | sklearn | sklearn (reported) | PostGIS '
             '| pg_kmeans / sklearn | PostGIS / sklearn | rows labelled (pgkm, sk, PostGIS) |')
    L.append('|' + '---:|' * 11)
    for c in res['configs']:
        s = c['methods']
        P, F, S, G = (s.get(m, {}) for m in ('pgkm_sql', 'pgkm_fit', 'sklearn', 'postgis'))

        def rel(x, y):
            return '%.6f' % (x / y) if x is not None and y else '–'
        L.append('| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            '{:,}'.format(c['n']), c['d'], c['k'], '%.6g' % P['inertia'] if P.get('inertia') else '–',
            '%.6g' % F['inertia_reported'] if F.get('inertia_reported') else '–',
            '%.6g' % S['inertia'] if S.get('inertia') else '–',
            '%.6g' % S['inertia_reported'] if S.get('inertia_reported') else '–',
            ('%.6g' % G['inertia'] if G.get('inertia') else '–') if G else 'n/a',
            rel(P.get('inertia'), S.get('inertia')), rel(G.get('inertia'), S.get('inertia')) if G else 'n/a',
            ', '.join(str(m.get('n_rows', '–')) for m in (P, S, G) if m)))
    L.append('')
    if any(m.get('other_cores') is not None for c in res['configs'] for m in c['methods'].values()):
        L.append('CPU use during the timed statements (medians over runs; from /proc): cores the backend '
                 'kept busy, and in brackets cores that *other* processes on the machine used meanwhile '
                 '(noise from a shared machine; near 0 means a clean measurement).')
        L.append('')
        L.append('| n | d | k | pg_kmeans SQL | pg_kmeans fit | sklearn call | PostGIS |')
        L.append('|' + '---:|' * 7)
        for c in res['configs']:
            cells = []
            for m in ('pgkm_sql', 'pgkm_fit', 'sklearn', 'postgis'):
                x = c['methods'].get(m)
                if not x:
                    cells.append('n/a')
                elif x.get('backend_cores') is None:
                    cells.append('–')
                else:
                    cells.append('%.2f [%.2f]' % (x['backend_cores'], x['other_cores']))
            L.append('| %s | %d | %d | %s |' % ('{:,}'.format(c['n']), c['d'], c['k'], ' | '.join(cells)))
        L.append('')
    if any(res.get('load', {}).values()):
        L.append('Table load (generation in PL/Python + CREATE TABLE AS + VACUUM, not part of any timing): '
                 + '; '.join('%s %.1f s' % (t, s) for t, s in res['load'].items() if s) + '.')
        L.append('')
    L.append('Raw numbers (every run): `bench/%s`.' % os.path.basename(a['json']))
    L.append('')
    L.append(END % a['block'])
    return '\n'.join(L)


def write_md(path, block, name):
    """Replaces this run's block of the CPU section, keeping everything else
    (the hand-written findings, other blocks, the GPU section)."""
    begin, end = BEGIN % name, END % name
    head = ('# pg_kmeans benchmark results\n\n'
            'Each section is owned by the benchmark that writes it; reruns replace only their own block.\n\n')
    if os.path.exists(path):
        text = open(path).read()
    else:
        text = head
    cpu_head = '## CPU engine vs scikit-learn and PostGIS'
    if begin in text and end in text:
        pre, rest = text.split(begin, 1)
        post = rest.split(end, 1)[1]
        text = pre + block + post
    elif cpu_head in text:
        # Add the block at the end of the CPU section (before the next "## ").
        pre, rest = text.split(cpu_head, 1)
        nxt = rest.find('\n## ')
        if nxt < 0:
            text = text.rstrip('\n') + '\n\n' + block + '\n'
        else:
            text = pre + cpu_head + rest[:nxt].rstrip('\n') + '\n\n' + block + '\n' + rest[nxt:]
    else:
        text = text.rstrip('\n') + '\n\n' + cpu_head + '\n\n' + block + '\n'
    with open(path, 'w') as f:
        f.write(text)


def main():
    a = parse_args()
    if a.render_only:
        with open(a.render_only) as f:
            res = json.load(f)
        block = render_md(res)
        write_md(a.results_md, block, res['args']['block'])
        log('rewrote block %s of %s from %s' % (res['args']['block'], a.results_md, a.render_only))
        return
    sizes = [int(x) for x in a.sizes.split(',')]
    dims = [int(x) for x in a.dims.split(',')]
    ks = [int(x) for x in a.ks.split(',')]
    methods = a.methods.split(',')
    db = Db()
    for s in ('jit = off', 'max_parallel_workers_per_gather = 0', "work_mem = '256MB'",
              'pg_kmeans.threads = %d' % a.threads, 'client_min_messages = warning'):
        db.q('SET ' + s)
    # temp_buffers can only change before the session's first temp table.
    db.q("SET temp_buffers = '512MB'")
    res = {'args': vars(a), 'command': a.command, 'machine': machine_info(db), 'configs': [], 'load': {}}
    log('machine: %s' % json.dumps(res['machine']))

    # Warm-up: load pg_kmeans' library, import numpy/sklearn, PostGIS, outside timing.
    db.q('DROP TABLE IF EXISTS bench.warmup')
    db.q('CREATE TABLE bench.warmup AS SELECT b.id, b.x[1] AS x1, b.x[2] AS x2, '
         'ST_MakePoint(b.x[1], b.x[2])::geometry(Point) AS geom FROM bench.blobs(1000, 2, 4, 10, 1, 1) b')
    for m in methods:
        out = run_method(db, a, m, 'bench.warmup', 2, 4)
        if out['time'] is None:
            sys.exit('warm-up of %s failed: %s' % (m, out['error']))

    t_start = time.perf_counter()
    for n in sizes:
        for d in dims:
            tbl, secs = load_table(db, a, n, d)
            res['load'][tbl] = secs
            db.q('SELECT count(*) FROM %s' % tbl)   # warm the buffer cache
            for k in ks:
                log('n=%d d=%d k=%d' % (n, d, k))
                summary = bench_config(db, a, methods, tbl, n, d, k)
                res['configs'].append({'n': n, 'd': d, 'k': k, 'methods': summary})
                with open(a.json, 'w') as f:
                    json.dump(res, f, indent=1)
    res['total_s'] = time.perf_counter() - t_start
    with open(a.json, 'w') as f:
        json.dump(res, f, indent=1)
    log('benchmark done in %.0f s; JSON %s' % (res['total_s'], a.json))
    block = render_md(res)
    print(block)
    if not a.no_md:
        write_md(a.results_md, block, a.block)
        log('wrote %s' % a.results_md)


if __name__ == '__main__':
    main()
