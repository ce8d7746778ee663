"""pg_kmeans against scikit-learn's KMeans from the same initial centroids.

kmeans_fit(init => 'k-means++') stores the centroids its run started from in
kmeans_models.initial_centroids. scikit-learn then runs Lloyd from exactly
those centroids (n_init=1, algorithm='lloyd', same max_iter and tol) on the
same values read back from the table as float64. Both implement the same
algorithm with the same stopping rule, so the final inertia must agree to
1e-6 relative, the centroids closely, and the iteration counts exactly.

The datasets (sklearn make_blobs with overlapping clusters, and uniform
noise) were generated for this comparison, not tuned to pass it.
"""
import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from conftest import load_table, read_back, report, sql_array

CASES = [
    # name, kind, n, d, k, tol, max_iter, n_init, as_array, seed
    ("blobs_d2_k3", "blobs", 5000, 2, 3, 1e-4, 300, 1, False, 1),
    ("blobs_d16_k10", "blobs", 20000, 16, 10, 0.0, 300, 1, False, 2),
    ("blobs_d64_k50", "blobs", 20000, 64, 50, 1e-4, 300, 1, True, 3),
    ("uniform_d2_k20", "uniform", 10000, 2, 20, 1e-4, 300, 1, False, 4),
    ("uniform_d16_k8", "uniform", 20000, 16, 8, 0.0, 100, 1, True, 5),
    ("uniform_d64_k30", "uniform", 8000, 64, 30, 1e-4, 50, 1, True, 6),
    ("uniform_d32_k64_ninit3", "uniform", 50000, 32, 64, 1e-4, 30, 3, True, 7),
    ("blobs_d8_k25_ninit4", "blobs", 30000, 8, 25, 1e-4, 300, 4, False, 8),
]


def make_data(kind, n, d, k, seed):
    rng = np.random.default_rng(seed)
    if kind == "blobs":
        # cluster_std 3 with centres in a box of +-10: clusters overlap, so
        # Lloyd needs many iterations and the boundary points matter.
        X, _ = make_blobs(n_samples=n, n_features=d, centers=k, cluster_std=3.0,
                          center_box=(-10, 10), random_state=seed)
        return X
    return rng.uniform(-1, 1, size=(n, d)) * rng.uniform(0.5, 5, size=d)


def min_sq_distances(X, C, chunk=4096):
    """Each row's squared distance to its nearest centroid, fp64, brute force."""
    out = np.empty(len(X))
    for i in range(0, len(X), chunk):
        diff = X[i:i + chunk, None, :] - C[None, :, :]
        out[i:i + chunk] = (diff * diff).sum(axis=2).min(axis=1)
    return out


@pytest.mark.parametrize("name,kind,n,d,k,tol,max_iter,n_init,as_array,seed", CASES,
                         ids=[c[0] for c in CASES])
def test_inertia_matches_sklearn(conn, name, kind, n, d, k, tol, max_iter, n_init, as_array, seed):
    table, cols = load_table(conn, name, make_data(kind, n, d, k, seed), as_array=as_array)
    model = "pytest_" + name
    with conn.cursor() as cur:
        cur.execute(
            "SELECT kmeans_fit(%%s, %%s::regclass, %s, %%s, init => 'k-means++', "
            "max_iter => %%s, tol => %%s, n_init => %%s, seed => %%s, device => 'cpu')" % sql_array(cols),
            (model, table, k, max_iter, tol, n_init, seed))
        cur.execute("SELECT initial_centroids, inertia, iterations, converged "
                    "FROM kmeans_models WHERE model = %s", (model,))
        init, inertia, iterations, converged = cur.fetchone()
        cur.execute("SELECT cluster, centroid FROM kmeans_model_centroids(%s) ORDER BY cluster", (model,))
        centroids = np.array([r[1] for r in cur.fetchall()], dtype=np.float64)
        cur.execute("SELECT kmeans_drop_model(%s)", (model,))

    X = read_back(conn, table, cols)
    C0 = np.array(init, dtype=np.float64).reshape(k, d)
    assert centroids.shape == (k, d)

    # Our own fp64 check: the reported inertia is that of the returned centroids.
    own = min_sq_distances(X, centroids).sum()
    assert abs(own - inertia) <= 1e-6 * own, (own, inertia)

    sk = KMeans(n_clusters=k, init=C0, n_init=1, algorithm="lloyd", max_iter=max_iter,
                tol=tol).fit(X)
    rel = abs(inertia - sk.inertia_) / sk.inertia_
    scale = np.abs(X).max()
    cdiff = np.abs(centroids - sk.cluster_centers_).max() / scale
    report("%-22s n=%-6d d=%-3d k=%-3d tol=%-6g pg_kmeans %.10g (%d it, converged=%s)  "
           "sklearn %.10g (%d it)  rel.diff %.2e  max centroid diff %.1e"
           % (name, n, d, k, tol, inertia, iterations, converged, sk.inertia_, sk.n_iter_, rel, cdiff))
    assert rel <= 1e-6
    assert cdiff <= 1e-6
    assert iterations == sk.n_iter_
