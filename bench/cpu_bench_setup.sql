-- cpu_bench_setup.sql: helper functions for bench/run_cpu_bench.sh.
--
-- Loaded into the benchmark database before any timing. Needs plpython3u
-- (Debian's system python3 with python3-numpy, python3-sklearn,
-- python3-threadpoolctl). PostGIS and pg_kmeans are created by the driver.
-- Everything lives in schema bench so the run can be dropped in one go.

CREATE SCHEMA IF NOT EXISTS bench;

/*
 * Deterministic Gaussian blobs: n_centers centres uniform in [-box, box]^d,
 * each point = a centre (chosen uniformly) + N(0, sigma^2 I). numpy's PCG64
 * with a fixed seed makes the table identical run after run and machine after
 * machine (same numpy); rows come back in id order.
 */
CREATE OR REPLACE FUNCTION bench.blobs(n int, d int, n_centers int,
                                       box float8, sigma float8, seed int)
RETURNS TABLE (id int, x float8[])
LANGUAGE plpython3u AS $$
import numpy as np
rng = np.random.default_rng(seed)
centers = rng.uniform(-box, box, size=(n_centers, d))
chunk = 65536
for start in range(0, n, chunk):
    m = min(chunk, n - start)
    lab = rng.integers(0, n_centers, size=m)
    pts = centers[lab] + rng.normal(0.0, sigma, size=(m, d))
    ids = range(start + 1, start + m + 1)
    for i, row in zip(ids, pts.tolist()):
        yield (i, row)
$$;

/*
 * scikit-learn KMeans on a table, the way a PL/Python user would write it:
 * read the feature columns with one query, fit, return (id, cluster) per row.
 * Same options as the pg_kmeans call (k-means++, n_init=1, max_iter, tol,
 * Lloyd). Threads: OMP_NUM_THREADS/OPENBLAS_NUM_THREADS are set before numpy
 * is first imported in this backend, and threadpoolctl caps OpenMP and BLAS
 * around the fit (sklearn's Lloyd runs its own OpenMP loop and keeps BLAS at
 * one thread inside it). dtype float32 matches pg_kmeans' float32 buffer;
 * float64 is what sklearn would get from float8 columns by default.
 * Timings of the last call are kept in GD for bench.sklearn_last().
 */
CREATE OR REPLACE FUNCTION bench.sklearn_kmeans(tbl regclass, cols text[], k int,
                                                max_iter int, tol float8, seed int,
                                                threads int, dtype text DEFAULT 'float32')
RETURNS TABLE (id int, cluster int)
LANGUAGE plpython3u AS $$
import os, time
t0 = time.perf_counter()
if 'bench_numpy' not in GD:
    for var in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
        os.environ[var] = str(threads)
    import numpy as np
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits
    GD['bench_numpy'] = (np, KMeans, threadpool_limits)
np, KMeans, threadpool_limits = GD['bench_numpy']
t_import = time.perf_counter()

feat = ', '.join(plpy.quote_ident(c) for c in cols)
# Both aggregates see the same scan order, so ids[i] pairs with X[i].
q = "SELECT array_agg(id) AS ids, array_agg(ARRAY[%s]::float8[]) AS x FROM %s" % (feat, tbl)
r = plpy.execute(q)[0]
ids = r['ids']
X = np.array(r['x'], dtype=dtype)
del r
t_read = time.perf_counter()

km = KMeans(n_clusters=k, init='k-means++', n_init=1, max_iter=max_iter,
            tol=tol, algorithm='lloyd', random_state=seed)
with threadpool_limits(limits=threads):
    t_fit0 = time.perf_counter()
    km.fit(X)
    t_fit1 = time.perf_counter()
labels = km.labels_.tolist()
GD['bench_last'] = {
    'import_s': t_import - t0, 'read_s': t_read - t_import,
    'fit_s': t_fit1 - t_fit0, 'n_iter': int(km.n_iter_),
    'inertia_sklearn': float(km.inertia_), 'dtype': dtype, 'threads': threads,
}
return zip(ids, labels)
$$;

CREATE OR REPLACE FUNCTION bench.sklearn_last() RETURNS json
LANGUAGE plpython3u AS $$
import json
return json.dumps(GD.get('bench_last'))
$$;

CREATE OR REPLACE FUNCTION bench.sklearn_versions() RETURNS json
LANGUAGE plpython3u AS $$
import json, sys, numpy, sklearn, threadpoolctl
info = threadpoolctl.threadpool_info()
return json.dumps({'python': sys.version.split()[0], 'numpy': numpy.__version__,
                   'sklearn': sklearn.__version__,
                   'threadpools': [{k: p.get(k) for k in ('user_api', 'internal_api', 'version', 'num_threads')}
                                   for p in info]})
$$;

/*
 * Inertia of a labelling, computed the same way for every method: centroids
 * are the means of the rows each method put together, inertia is the sum of
 * squared distances to them (two passes in float8, no cancellation-prone
 * sum-of-squares formula). The labels table is joined on data_key = labels_key
 * (id = id, or ctid = a tid column: ctid cannot be a user column). Returns the row and cluster counts
 * so that a method that dropped rows shows up.
 */
CREATE OR REPLACE FUNCTION bench.inertia(tbl regclass, cols text[], labels regclass,
                                         data_key text, labels_key text,
                                         OUT inertia float8, OUT n_rows bigint,
                                         OUT n_clusters int)
LANGUAGE plpgsql AS $$
DECLARE
    c text;
    sel text := '';
    avgs text := '';
    sq text := '';
    i int := 0;
BEGIN
    FOREACH c IN ARRAY cols LOOP
        i := i + 1;
        sel  := sel  || format(', t.%I AS f%s', c, i);
        avgs := avgs || format(', avg(f%s) AS a%s', i, i);
        sq   := sq   || CASE WHEN i > 1 THEN ' + ' ELSE '' END
                     || format('(f%s - a%s)^2', i, i);
    END LOOP;
    EXECUTE format(
        'WITH lab AS MATERIALIZED (SELECT l.cluster%s FROM %s t JOIN %s l ON t.%I = l.%I),
              cen AS (SELECT cluster%s FROM lab GROUP BY cluster)
         SELECT sum(%s), count(*), (SELECT count(*) FROM cen)::int
           FROM lab JOIN cen USING (cluster)',
        sel, tbl, labels, data_key, labels_key, avgs, sq)
    INTO inertia, n_rows, n_clusters;
END
$$;
