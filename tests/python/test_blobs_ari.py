"""Gaussian blobs with known labels, clustered through SQL `kmeans`.

The centres are drawn at random (seeded) at least 12 sigma apart, so that the
true partition is recoverable; the adjusted Rand index between the labels
joined back by ctid and the true labels must be >= 0.99.
"""
import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from conftest import load_table, report, sql_array


def separated_blobs(rng, n, d, k, sigma=1.0, min_sep=12.0):
    centres = []
    while len(centres) < k:
        c = rng.uniform(-10 * k ** (1 / d) * min_sep, 10 * k ** (1 / d) * min_sep, size=d)
        if all(np.linalg.norm(c - o) >= min_sep * sigma for o in centres):
            centres.append(c)
    labels = rng.integers(0, k, size=n)
    X = np.asarray(centres)[labels] + rng.normal(0, sigma, size=(n, d))
    return X, labels


@pytest.mark.parametrize("n,d,k,as_array,seed", [
    (20000, 2, 5, False, 11),
    (30000, 8, 12, False, 12),
    (20000, 32, 20, True, 13),
])
def test_blobs_adjusted_rand_index(conn, n, d, k, as_array, seed):
    rng = np.random.default_rng(seed)
    X, y = separated_blobs(rng, n, d, k)
    table, cols = load_table(conn, "blobs_%d_%d" % (d, k), X, labels=y, as_array=as_array)
    with conn.cursor() as cur:
        cur.execute(
            "SELECT t.label, r.cluster FROM kmeans(%%s::regclass, %s, %%s, seed => %%s) r "
            "JOIN %s t ON t.ctid = r.ctid" % (sql_array(cols), table), (table, k, seed))
        rows = cur.fetchall()
    assert len(rows) == n
    truth = np.array([r[0] for r in rows])
    got = np.array([r[1] for r in rows])
    ari = adjusted_rand_score(truth, got)
    report("blobs n=%d d=%d k=%d: adjusted Rand index %.6f" % (n, d, k, ari))
    assert ari >= 0.99
