-- demo.sql: sample data and every pg_kmeans entry point (run by scripts/demo.sh).
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = notice;
CREATE EXTENSION IF NOT EXISTS pg_kmeans;

-- 100,000 points in 4-D drawn around 5 known centres (sigma 1, Box-Muller
-- normals from random() after setseed, so every run has the same data).
SET client_min_messages = warning;
DROP TABLE IF EXISTS demo_points;
RESET client_min_messages;
SELECT setseed(0.42) \gset
CREATE TABLE demo_points AS
WITH centres(blob, cx, cy, cz, cw) AS (
    VALUES (0, 0, 0, 0, 0), (1, 8, 0, 0, 0), (2, 0, 8, 0, 0), (3, 0, 0, 8, 0), (4, 4, 4, 4, 8))
SELECT row_number() OVER ()::int AS id, blob,
       cx + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS x,
       cy + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS y,
       cz + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS z,
       cw + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS w
FROM generate_series(1, 20000) i, centres;
ANALYZE demo_points;
\echo
\echo '== kmeans_centroids: one row per cluster'
SELECT cluster, (SELECT array_agg(round(c::numeric, 3)) FROM unnest(centroid) c) AS centroid,
       size, round(inertia::numeric, 1) AS inertia
FROM kmeans_centroids('demo_points', ARRAY['x', 'y', 'z', 'w'], 5, seed => 1)
ORDER BY cluster;

\echo '== kmeans: a label per row, joined back by ctid (first 8 rows)'
SELECT t.id, t.blob AS true_blob, k.cluster, round(k.distance::numeric, 4) AS distance
FROM kmeans('demo_points', ARRAY['x', 'y', 'z', 'w'], 5, seed => 1) k
JOIN demo_points t ON t.ctid = k.ctid
ORDER BY t.id LIMIT 8;

\echo '== agreement with the true blobs (adjusted Rand index, 1 = identical partition)'
WITH lab AS (
    SELECT t.blob AS a, k.cluster AS b
    FROM kmeans('demo_points', ARRAY['x', 'y', 'z', 'w'], 5, seed => 1) k
    JOIN demo_points t ON t.ctid = k.ctid),
cont AS (SELECT a, b, count(*)::float8 AS n FROM lab GROUP BY a, b),
pairs AS (
    SELECT (SELECT sum(n * (n - 1) / 2) FROM cont) AS sij,
           (SELECT sum(m * (m - 1) / 2) FROM (SELECT sum(n) AS m FROM cont GROUP BY a) s) AS sa,
           (SELECT sum(m * (m - 1) / 2) FROM (SELECT sum(n) AS m FROM cont GROUP BY b) s) AS sb,
           (SELECT sum(n) * (sum(n) - 1) / 2 FROM cont) AS total)
SELECT round(((sij - sa * sb / total) / ((sa + sb) / 2 - sa * sb / total))::numeric, 6)
       AS adjusted_rand_index
FROM pairs;

\echo '== a stored model: kmeans_fit, kmeans_predict, kmeans_model_centroids'
SELECT model, k, d, round(inertia::numeric, 1) AS inertia, iterations, converged, device, n_rows
FROM kmeans_fit('demo_model', 'demo_points', ARRAY['x', 'y', 'z', 'w'], 5, seed => 1);
SELECT kmeans_predict('demo_model', ARRAY[8, 0.2, -0.1, 0.3]) AS cluster_of_point_near_8_0_0_0;
SELECT cluster, size FROM kmeans_model_centroids('demo_model') ORDER BY cluster;
