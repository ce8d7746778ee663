"""Numeric range: pg_kmeans against an fp64 Lloyd on the stored values.

The issue's contract: for any finite input the column types allow, labels,
centroids, distances and inertia equal an fp64 computation on the stored
values, up to exact ties and the precision of the compute type (each value
kept to 2^-24 of twice the largest column range, README "Precision").

Every case stores well-separated groups (at least 40 spreads apart, so no
row lies near a cluster boundary) in real, double precision, bigint or
numeric columns, runs kmeans_fit (k-means++), reads the initial centroids it
started from, and runs an independent Lloyd in fp64 (numpy) from the same
start on the values read back exactly as double precision. The reference
works on the values shifted by their column midpoints and scaled by a power
of two, which is an fp64 computation on the same values (no distance order
changes) that cannot overflow. Compared: labels (exactly), centroids,
inertia, per-cluster inertia and every distance, within the bounds of a
2^-24 * 2R perturbation of each value. scikit-learn's KMeans from the same
start on the same scaled values must give the same labels.

Named cases are the issue's (epoch seconds, projected metres, 1e22 apart with
spread 1e20, 1e-24 apart, real subnormals, kmeans_predict with a huge common
term); held-out cases draw offsets, separations and spreads log-uniformly
over the whole range of real and double precision (seeded); where the
squared distances exceed double's range, the call must be a 22003 error.
"""
import math
from fractions import Fraction

import numpy as np
import psycopg2
import psycopg2.errors
import pytest
from sklearn.cluster import KMeans

from conftest import report

FLT_MAX = float(np.finfo(np.float32).max)


def create(conn, name, cols, rows, types):
    """pgkm_pytest.<name>(id, grp, c1..cd) with the given SQL types; rows of (grp, values).
    cols == ["v"] and one type "real[]" or "double precision[]": one array column."""
    table = "pgkm_pytest." + name
    defs = ["id integer", "grp integer"] + ["%s %s" % (c, t) for c, t in zip(cols, types)]
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS %s" % table)
        cur.execute("CREATE TABLE %s (%s)" % (table, ", ".join(defs)))
        lines = []
        for i, (g, vals) in enumerate(rows):
            if types[0].endswith("[]"):
                elem = types[0][:-2]
                fields = ["{" + ",".join(fmt(v, elem) for v in vals) + "}"]
            else:
                fields = [fmt(v, t) for v, t in zip(vals, types)]
            lines.append("\t".join([str(i), str(g)] + fields))
        import io
        cur.copy_expert("COPY %s FROM STDIN" % table, io.StringIO("\n".join(lines) + "\n"))
    return table


def fmt(v, sqltype):
    if sqltype == "real":
        return repr(float(np.float32(v)))   # the exact float32 value, as a double literal
    if sqltype == "bigint":
        return str(int(v))
    if sqltype == "numeric":
        return str(v)                        # a Decimal or int: read as float8 by the engine
    return repr(float(v))


def read_back(conn, table, cols):
    """Rows in id order: groups and the values as the engine reads them (double precision)."""
    with conn.cursor() as cur:
        if cols == ["v"]:
            cur.execute("SELECT grp, v::float8[] FROM %s ORDER BY id" % table)
            rows = cur.fetchall()
            return np.array([r[0] for r in rows]), np.array([r[1] for r in rows], dtype=np.float64)
        cur.execute("SELECT grp, %s FROM %s ORDER BY id"
                    % (", ".join(c + "::float8" for c in cols), table))
        rows = cur.fetchall()
    return np.array([r[0] for r in rows]), np.array([r[1:] for r in rows], dtype=np.float64)


def normalise(X):
    """Columns offset by more than their range shifted by their midpoints (exact
    there), all scaled by one power of two: |values| < 2."""
    mid = X.min(axis=0) / 2 + X.max(axis=0) / 2
    with np.errstate(over="ignore"):
        offset = np.abs(mid) > X.max(axis=0) - X.min(axis=0)
    mid = np.where(offset, mid, 0.0)
    Y = np.empty_like(X)
    for j in range(X.shape[1]):
        with np.errstate(over="ignore"):
            t = X[:, j] - mid[j]
        if not np.all(np.isfinite(t)):       # |x - mid| beyond double: halve first
            t = (X[:, j] / 2 - mid[j] / 2) * 2
        Y[:, j] = t
    m = np.max(np.abs(Y[np.isfinite(Y)])) if np.any(Y) else 1.0
    e = -math.frexp(m)[1] if m > 0 else 0
    return np.ldexp(Y, e), mid, e


def lloyd(Y, C, max_iter=300):
    """scikit-learn 1.2's Lloyd semantics in fp64 with tol = 0 (stop when no label changes)."""
    labels = None
    for it in range(max_iter):
        D = ((Y[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
        new = D.argmin(axis=1)
        for c in range(len(C)):
            if np.any(new == c):
                C[c] = Y[new == c].mean(axis=0)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
    D = ((Y[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    return D.argmin(axis=1), C


def check(conn, name, cols, types, rows, k, seed=1):
    table = create(conn, name, cols, rows, types)
    grp, X = read_back(conn, table, cols)
    n, d = X.shape
    if cols == ["v"]:
        cols = ["v"]
    model = "pytest_nr_" + name
    colarr = "ARRAY[%s]" % ", ".join("'%s'" % c for c in cols)
    Y, mid, e = normalise(X)
    with conn.cursor() as cur:
        try:
            cur.execute("SELECT kmeans_fit(%%s, %%s::regclass, %s, %%s, max_iter => 300, tol => 0, "
                        "seed => %%s, device => 'cpu')" % colarr, (model, table, k, seed))
        except psycopg2.errors.NumericValueOutOfRange:
            # only when the squared distances really exceed double: the groups' own inertia
            true_i = sum(((Y[grp == g] - Y[grp == g].mean(axis=0)) ** 2).sum() for g in set(grp))
            assert math.frexp(true_i)[1] - 2 * e > 1024, (true_i, e)   # beyond double's 2^1024
            report("numeric range %-22s n=%-5d d=%d k=%d: 22003, inertia %.3g x 2^%d is beyond double"
                   % (name, n, d, k, true_i, -2 * e))
            return
        cur.execute("SELECT initial_centroids, inertia FROM kmeans_models WHERE model = %s", (model,))
        init, inertia = cur.fetchone()
        cur.execute("SELECT cluster, centroid, size, inertia FROM kmeans_model_centroids(%s) ORDER BY cluster",
                    (model,))
        cents = cur.fetchall()
        cur.execute("SELECT kmeans_drop_model(%s)", (model,))
        cur.execute("SELECT t.id, k.cluster, k.distance FROM kmeans(%%s::regclass, %s, %%s, max_iter => 300, "
                    "tol => 0, seed => %%s, device => 'cpu') k JOIN %s t ON t.ctid = k.ctid ORDER BY t.id"
                    % (colarr, table), (table, k, seed))
        lab = cur.fetchall()
    assert len(cents) == k, "k clusters"
    C0 = np.array(init, dtype=np.float64).reshape(k, d)
    C = np.array([c[1] for c in cents], dtype=np.float64)
    labels = np.array([r[1] for r in lab])
    dist = np.array([r[2] for r in lab], dtype=np.float64)

    Y0 = np.ldexp(C0 - mid, e)
    ref_labels, ref_C = lloyd(Y, Y0.copy())
    # the precision bound, in the normalised units: 2^-24 of twice the largest column range
    R = np.max(Y.max(axis=0) - Y.min(axis=0))
    eps = 2 * R * 2.0 ** -24
    assert np.array_equal(labels, ref_labels), "labels equal the fp64 Lloyd's"
    sk = KMeans(n_clusters=k, init=Y0, n_init=1, algorithm="lloyd", max_iter=300, tol=0).fit(Y)
    assert np.array_equal(sk.labels_, ref_labels), "scikit-learn agrees with the reference"
    # centroids (in the table's units; their own double rounding allowed)
    got_C = np.ldexp(C - mid, e)
    centroid_err = np.max(np.abs(got_C - ref_C))
    assert centroid_err <= eps + np.max(np.abs(C)) * 2.0 ** -52 * 2 ** e, (centroid_err, eps)
    # inertia: |I - I_ref| <= 4 eps sqrt(I n d) + 4 n d eps^2, per cluster and in
    # total; compared in the table's units, where a double result may underflow
    # (TINY: double's smallest subnormal)
    TINY = 2.0 ** -1074
    ref_d2 = ((Y - ref_C[ref_labels]) ** 2).sum(axis=1)

    def close(got, ref, nrows):
        bound = 4 * eps * math.sqrt(ref * nrows * d) + 4 * nrows * d * eps ** 2
        return abs(got - math.ldexp(ref, -2 * e)) <= math.ldexp(bound * (1 + 1e-9), -2 * e) + TINY

    for c, cent in enumerate(cents):
        nc = int(np.sum(ref_labels == c))
        assert close(cent[3], ref_d2[ref_labels == c].sum(), nc), (c, cent[3], ref_d2[ref_labels == c].sum(), e)
        assert cent[2] == nc
    assert close(inertia, ref_d2.sum(), n), (inertia, ref_d2.sum(), e)
    # distances: |distance - ref| <= 2 eps sqrt(d)
    derr = np.max(np.abs(dist - np.ldexp(np.sqrt(ref_d2), -e)))
    assert derr <= math.ldexp(2 * eps * math.sqrt(d), -e) + TINY, (derr, eps, e)
    derr = math.ldexp(derr, e)
    report("numeric range %-22s n=%-5d d=%d k=%d types=%s: labels equal, centroid err %.1e, "
           "distance err %.1e (bound %.1e, normalised units)"
           % (name, n, d, k, ",".join(sorted(set(types))), centroid_err, derr, eps))


def groups(rng, n, d, k, offset, sep, spread):
    """k group centres at least sep apart in every feature, each row centre + U(-spread, spread)."""
    centres = offset + sep * (3 * rng.permutation(np.arange(k))[:, None] + rng.integers(0, 3, size=(k, d)))
    out = []
    for i in range(n):
        g = i % k
        out.append((g, [centres[g][j] + spread * rng.uniform(-1, 1) for j in range(d)]))
    return out


NAMED = [
    # name, types, n, d, k, offset, separation, spread
    ("epoch_seconds", ["double precision"], 600, 1, 2, 1.7e9, 30.0, 0.5),
    ("epoch_bigint", ["bigint"], 600, 1, 3, 1.7e9, 60.0, 5.0),
    ("web_mercator", ["double precision", "double precision"], 600, 2, 2, 1.0e7, 3.0, 0.5),
    ("real_1e22", ["real", "real"], 600, 2, 3, 0.0, 1e22, 1e20),
    ("real_1e_minus24", ["real"], 600, 1, 3, 0.0, 1e-24, 1e-26),
    ("double_1e_minus300", ["double precision"], 400, 1, 2, 0.0, 1e-300, 1e-302),
    ("double_1e150", ["double precision", "double precision"], 400, 2, 2, -1e150, 1e150, 1e148),
    ("numeric_offset", ["numeric"], 400, 1, 2, 1e20, 1e6, 1e4),
]


@pytest.mark.parametrize("name,types,n,d,k,offset,sep,spread", NAMED, ids=[c[0] for c in NAMED])
def test_named_ranges(conn, name, types, n, d, k, offset, sep, spread):
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    rows = groups(rng, n, d, k, offset, sep, spread)
    if types[0] == "bigint":
        rows = [(g, [round(v) for v in vals]) for g, vals in rows]
    if types[0] == "numeric":
        rows = [(g, [int(v) for v in vals]) for g, vals in rows]
    check(conn, name, ["c%d" % (j + 1) for j in range(d)], types, rows, k)


def test_real_subnormals(conn):
    rows = [(i % 3, [(i % 3) * 1e-40]) for i in range(300)]
    check(conn, "real_subnormal", ["c1"], ["real"], rows, 3)


def test_full_real_range(conn):
    rng = np.random.default_rng(5)
    rows = [(i % 3, [float(np.float32((i % 3 - 1) * 3.0e38 + rng.uniform(-1, 1) * 1e36))]) for i in range(600)]
    check(conn, "real_full_range", ["c1"], ["real"], rows, 3)


def held_out_cases(count=24, seed=2024):
    rng = np.random.default_rng(seed)
    cases = []
    for c in range(count):
        typ = ["real", "double precision"][c % 2]
        lo, hi = (-30, 30) if typ == "real" else (-300, 200)
        sep = 10.0 ** rng.uniform(lo, hi)
        spread = sep / 10.0 ** rng.uniform(1.7, 3)      # groups at least 50 spreads apart
        offset = 0.0 if c % 3 == 0 else (1 if rng.random() < 0.5 else -1) * sep * 10.0 ** rng.uniform(0, 7)
        if typ == "real":
            offset = max(min(offset, 1e30), -1e30)
        d = int(rng.integers(1, 5))
        k = int(rng.integers(2, 6))
        cases.append(("held_out_%02d" % c, typ, d, k, offset, sep, spread, int(rng.integers(1, 1 << 30))))
    return cases


@pytest.mark.parametrize("name,typ,d,k,offset,sep,spread,seed", held_out_cases(),
                         ids=[c[0] for c in held_out_cases()])
def test_held_out_ranges(conn, name, typ, d, k, offset, sep, spread, seed):
    rng = np.random.default_rng(seed)
    rows = groups(rng, 300, d, k, offset, sep, spread)
    if typ == "real":
        # stay inside real's range and keep the groups apart after rounding to float32
        rows = [(g, [float(np.float32(v)) for v in vals]) for g, vals in rows]
        if any(abs(v) > FLT_MAX for _, vals in rows for v in vals):
            pytest.skip("outside real's range")
    check(conn, name, ["c%d" % (j + 1) for j in range(d)], [typ] * d, rows, k, seed=seed % 1000)


def exact_sq(x, c):
    return sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(x, c))


def test_predict_against_exact_rationals(conn):
    """kmeans_predict's label is the exact nearest (rational arithmetic), for the
    issue's example and points whose coordinates span double's whole range."""
    table = create(conn, "predict_pts", ["a", "b"], [(0, [0.0, 0.0]), (0, [0.0, 1.0]),
                                                   (1, [0.0, 100.0]), (1, [0.0, 101.0])],
                   ["double precision", "double precision"])
    with conn.cursor() as cur:
        cur.execute("SELECT kmeans_fit('pytest_nr_predict', %s::regclass, ARRAY['a','b'], 2, seed => 1)",
                    (table,))
        cur.execute("SELECT centroid FROM kmeans_model_centroids('pytest_nr_predict') ORDER BY cluster")
        C = [list(r[0]) for r in cur.fetchall()]
        cur.execute("SELECT kmeans_predict('pytest_nr_predict', ARRAY[1e200, 100]::float8[])")
        got = cur.fetchone()[0]
        assert C[got][1] == 100.5, "the issue's example: (1e200, 100) is nearest to (0, 100.5)"
        rng = np.random.default_rng(9)
        wrong = 0
        for _ in range(300):
            e = int(rng.integers(-300, 300))
            x = [float(rng.uniform(-1, 1)) * 10.0 ** int(rng.integers(-300, 300)), float(rng.uniform(-200, 300)) * 10.0 ** e]
            cur.execute("SELECT kmeans_predict('pytest_nr_predict', %s::float8[])", (x,))
            got = cur.fetchone()[0]
            dists = [exact_sq(x, c) for c in C]
            want = min(range(len(C)), key=lambda i: (dists[i], i))
            wrong += got != want
        cur.execute("SELECT kmeans_drop_model('pytest_nr_predict')")
    assert wrong == 0


def spread_rows(rng, centres, count, spread):
    """count rows around each centre in turn (group = index of the centre), U(-spread, spread)."""
    return [(g, [c + spread * rng.uniform(-1, 1) for c in centres[g]])
            for g in range(len(centres)) for _ in range(count)]


def test_rows_in_hostile_orders(conn):
    """The transform is chosen from the first rows and kept in its window as
    rows arrive: orders that break the first choice still meet the contract."""
    rng = np.random.default_rng(31)
    # 1100 zeros first (the first rows decide nothing), then groups 1e-30 apart
    rows = [(0, [0.0])] * 1100 + spread_rows(rng, [[1e-30], [2e-30]], 300, 1e-32)
    check(conn, "order_zeros_then_tiny", ["c1"], ["real"], rows, 3)
    # magnitudes ascending: every new group forces the stored rows to be scaled down
    rows = spread_rows(rng, [[1.0], [1e10], [1e20], [1e30]], 300, 0.0)
    rows = [(g, [v[0] * (1 + 0.01 * rng.uniform(-1, 1))]) for g, v in rows]
    check(conn, "order_ascending", ["c1"], ["double precision"], rows, 4)
    # the first rows far off (they pick the shift 1e9), the rest near 0 and near 1e9 + 1000
    rows = spread_rows(rng, [[1e9], [0.0], [1e9 + 1000]], 1100, 10.0)
    check(conn, "order_far_first", ["c1"], ["double precision"], rows, 3)
    # reals near 0 and 1 copied as they are (fast path), then groups near +-1e20
    rows = spread_rows(rng, [[0.0], [1.0]], 1100, 0.1) \
        + [(2 + i % 2, [(1 - 2 * (i % 2)) * (1e20 + 1e17 * rng.uniform(-1, 1))]) for i in range(600)]
    check(conn, "order_fast_then_huge", ["c1"], ["real"], rows, 4)


def test_arrays_and_wide_mixed_offsets(conn):
    rng = np.random.default_rng(32)
    d = 200                                  # only 655 first rows fit the 1 MB decision buffer
    base = np.where(np.arange(d) % 2 == 0, 1e6, 0.0)
    centres = [list(base + 50.0 * g * (1 + np.arange(d) % 3)) for g in range(3)]
    rows = spread_rows(rng, centres, 400, 1.0)
    rng.shuffle(rows)
    check(conn, "wide_offsets_float8_array", ["v"], ["double precision[]"], rows, 3)
    rows = [(g, [float(np.float32(v)) for v in vals]) for g, vals in rows]
    check(conn, "wide_offsets_real_array", ["v"], ["real[]"], rows, 3)
    # epoch seconds in a real[] near 1.7e9 are whole multiples of 128: groups 1280 apart
    rows = spread_rows(rng, [[1.7e9, 0.0], [1.7e9 + 1280, 0.0]], 300, 256.0)
    rows = [(g, [float(np.float32(v)) for v in vals]) for g, vals in rows]
    check(conn, "epoch_real_array", ["v"], ["real[]"], rows, 2)
