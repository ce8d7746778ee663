-- Kernel k-means (method => 'kernel'): rings that Lloyd cannot split, the
-- centroid rows, the kernel arguments and every error about them.
\set VERBOSITY default

-- Two concentric rings of 40 points each, radius 1 and 0.3.
CREATE TABLE rings (id int, ring int, x float8, y float8);
INSERT INTO rings
SELECT i, r, rad * cos(2 * pi() * i / 40), rad * sin(2 * pi() * i / 40)
FROM (VALUES (0, 1.0), (1, 0.3)) v(r, rad), generate_series(0, 39) i;

-- The RBF kernel puts each ring in its own cluster; Lloyd cuts both rings in half.
SELECT 'kernel' AS method, r.ring, count(*) FILTER (WHERE k.cluster = 0) AS cluster_0,
       count(*) FILTER (WHERE k.cluster = 1) AS cluster_1
FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'rbf', gamma => 10, n_init => 5) k
JOIN rings r ON r.ctid = k.ctid GROUP BY r.ring
UNION ALL
SELECT 'lloyd', r.ring, count(*) FILTER (WHERE k.cluster = 0), count(*) FILTER (WHERE k.cluster = 1)
FROM kmeans('rings', ARRAY['x', 'y'], 2, n_init => 5) k
JOIN rings r ON r.ctid = k.ctid GROUP BY r.ring
ORDER BY 1, 2;

-- Distances are feature-space ones: with the RBF kernel every point's squared
-- distance is below 2 (K(x, x) = 1, K >= 0).
SELECT count(*) AS rows, bool_and(distance >= 0 AND distance * distance <= 2) AS in_range
FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 10, n_init => 5);

-- Centroid rows: size and feature-space inertia per cluster; the centroid is
-- the input-space mean of its rows, here (0, 0) for both rings: the
-- feature-space centroids that separate them are no vectors of the input space.
SELECT size, round(inertia::numeric, 4) AS inertia,
       round(centroid[1]::numeric, 6) + 0 AS cx, round(centroid[2]::numeric, 6) + 0 AS cy
FROM kmeans_centroids('rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 10, n_init => 5)
ORDER BY inertia;
-- The rows' inertias add up to the sum of the squared distances.
SELECT round((SELECT sum(inertia) FROM kmeans_centroids('rings', ARRAY['x', 'y'], 2, method => 'kernel',
                                                         gamma => 10, seed => 3))::numeric, 9) =
       round((SELECT sum(distance * distance) FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel',
                                                           gamma => 10, seed => 3))::numeric, 9) AS sums_agree;

-- Every kernel runs, with scikit-learn's names and defaults (rbf, gamma = 1/d,
-- coef0 = 1, degree = 3) and both inits; the same seed gives the same labels.
SELECT kern, init, count(*) AS rows, count(DISTINCT cluster) AS clusters
FROM (VALUES ('linear'), ('polynomial'), ('rbf'), ('sigmoid')) k(kern),
     (VALUES ('k-means++'), ('random')) i(init),
     LATERAL kmeans('rings', ARRAY['x', 'y'], 3, method => 'kernel', kernel => kern, init => init, seed => 1)
GROUP BY kern, init ORDER BY kern, init;
SELECT count(*) AS differing FROM (
  SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 3, method => 'kernel', init => 'random', seed => 7)
  EXCEPT
  SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 3, method => 'kernel', init => 'random', seed => 7)) d;
-- Spellings as for the other options; a NULL kernel argument is the default.
SELECT count(*) FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'Kernel', kernel => 'Poly', gamma => 0.5,
                            coef0 => 0, degree => 2);
SELECT count(*) FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'Gaussian');
SELECT count(*) FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => NULL, gamma => NULL);
-- A NULL in any other argument gives no rows, as for a STRICT function.
SELECT count(*) FROM kmeans('rings', ARRAY['x', 'y'], 2, method => NULL, kernel => 'rbf');
SELECT count(*) FROM kmeans_centroids('rings', ARRAY['x', 'y'], 2, method => 'kernel', seed => NULL);

-- Fewer distinct points than k: duplicates share a cluster, and fewer clusters come back.
CREATE TABLE kdup (x float8, y float8);
INSERT INTO kdup SELECT x, y FROM (VALUES (0, 0), (5, 5), (-3, 2)) v(x, y), generate_series(1, 4);
SELECT size, round(inertia::numeric, 6) AS inertia
FROM kmeans_centroids('kdup', ARRAY['x', 'y'], 5, method => 'kernel', gamma => 0.1) ORDER BY centroid;
-- k = 1: one cluster of every row.
SELECT cluster, size FROM kmeans_centroids('kdup', ARRAY['x', 'y'], 1, method => 'kernel');
-- Distinct rows the kernel maps to one point ((gamma x.y)^2: x and -x) are one
-- point to kernel k-means, and the NOTICE says so; each cluster holds a pair.
CREATE TABLE kmirror (x float8, y float8);
INSERT INTO kmirror VALUES (1, 0), (-1, 0), (0, 2), (0, -2);
SELECT size, round(inertia::numeric, 6) AS inertia
FROM kmeans_centroids('kmirror', ARRAY['x', 'y'], 3, method => 'kernel', kernel => 'polynomial',
                      degree => 2, coef0 => 0) ORDER BY 1;

-- Arguments that do not apply to the method or kernel chosen.
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, kernel => 'rbf');
SELECT * FROM kmeans_centroids('rings', ARRAY['x', 'y'], 2, method => 'lloyd', gamma => 1);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, coef0 => 1);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, degree => 2);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'linear', gamma => 1);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', coef0 => 0);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'sigmoid', degree => 2);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'linear', coef0 => 0);
-- Values out of range.
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'laplacian');
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 0);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => -1);
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 'Infinity');
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'sigmoid', coef0 => 'NaN');
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'polynomial', degree => 0);
-- A polynomial that overflows float32 is refused.
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => 'polynomial',
                     gamma => 1e6, degree => 40);
-- The GPU engine does not run kernel k-means yet (terse: the detail says why
-- on this host, no driver here, no kernel k-means in the plugin on a GPU host).
\set VERBOSITY terse
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', device => 'gpu');
-- The SQLSTATEs: 55000 (no GPU engine), 22023 (an argument that does not apply).
\set VERBOSITY sqlstate
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, method => 'kernel', device => 'gpu');
SELECT * FROM kmeans('rings', ARRAY['x', 'y'], 2, kernel => 'rbf');
\set VERBOSITY default
