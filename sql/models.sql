-- pg_kmeans models: fit, list, predict, centroids, refit, drop, and the
-- basics of who may use them (the rest: model_privileges, model_values,
-- model_search_path).
CREATE TABLE m_pts (id int, x float8, y float8);
INSERT INTO m_pts VALUES (1, 0, 0), (2, 0, 1), (3, 1, 0), (4, 10, 10), (5, 10, 11), (6, 11, 10), (7, NULL, 5);

-- The model store belongs to the extension and is dumped by pg_dump.
SELECT extconfig::regclass[] FROM pg_extension WHERE extname = 'pg_kmeans';

-- Fit: returns the stored row.
SELECT model, owner, relation, columns, k, d, method, options, sizes,
       round(inertia::numeric, 6) AS inertia, converged, device IN ('cpu', 'gpu') AS device_ok, n_rows, n_skipped,
       iterations >= 1 AS iterated, elapsed_s >= 0 AS timed, trained_at <= now() AS dated,
       array_dims(centroids) AS centroid_dims, array_dims(initial_centroids) AS initial_dims
FROM kmeans_fit('regress_m', 'm_pts', ARRAY['x', 'y'], 2, seed => 5);

-- Listed in kmeans_models.
SELECT model, owner, k, d, n_rows FROM kmeans_models ORDER BY model;

-- The model's centroids are exactly kmeans_centroids() with the same arguments.
SELECT count(*) AS differing FROM (
  (SELECT * FROM kmeans_model_centroids('regress_m')
   EXCEPT SELECT * FROM kmeans_centroids('m_pts', ARRAY['x', 'y'], 2, seed => 5))
  UNION ALL
  (SELECT * FROM kmeans_centroids('m_pts', ARRAY['x', 'y'], 2, seed => 5)
   EXCEPT SELECT * FROM kmeans_model_centroids('regress_m'))) d;
SELECT cluster >= 0 AND cluster < 2 AS numbered, size, round(inertia::numeric, 6) AS inertia
FROM kmeans_model_centroids('regress_m') ORDER BY centroid[1];

-- Predict agrees with the labels of the same run, row by row.
SELECT count(*) AS rows, count(*) FILTER (WHERE kmeans_predict('regress_m', ARRAY[t.x, t.y]) = k.cluster) AS agreeing
FROM kmeans('m_pts', ARRAY['x', 'y'], 2, seed => 5) k JOIN m_pts t ON t.ctid = k.ctid;
-- Also a row finer than single precision: 0.49999810606241224 is clustered
-- as its float, 0.4999980927, on the zeros' side of the fp64 midpoint
-- (0.4999981) of the centroids -3.8e-6 and 1; predict rounds it the same way.
CREATE TABLE m_fine (id int, x float8);
INSERT INTO m_fine SELECT i, CASE WHEN i <= 2000 THEN 0 ELSE 1 END FROM generate_series(1, 4000) i;
INSERT INTO m_fine VALUES (4001, -0.5076112747192383), (4002, 0.49999810606241224);
SELECT model FROM kmeans_fit('regress_fine', 'm_fine', ARRAY['x'], 2);
SELECT count(*) AS rows, count(*) FILTER (WHERE kmeans_predict('regress_fine', ARRAY[t.x]) = k.cluster) AS agreeing,
       bool_and(k.cluster = (SELECT cluster FROM kmeans_model_centroids('regress_fine') WHERE centroid[1] < 0.5))
         FILTER (WHERE t.id = 4002) AS fine_row_with_the_zeros
FROM kmeans('m_fine', ARRAY['x'], 2) k JOIN m_fine t ON t.ctid = k.ctid;
SELECT kmeans_drop_model('regress_fine');
DROP TABLE m_fine;
-- And rows the sums' grid moved: beside 1e16 the grid step is 16, so 9 was
-- clustered as 16, with the 32s; predict rounds it the same way (on the
-- CPU: the GPU's k-means++ starts elsewhere and ends with 16 among the 0s).
CREATE TABLE m_grid AS SELECT * FROM (VALUES (1, 0::float8), (2, 0), (3, 0), (4, 9), (5, 32), (6, 32), (7, 1e16)) v(id, x);
SELECT model FROM kmeans_fit('regress_grid', 'm_grid', ARRAY['x'], 3, tol => 0, device => 'cpu');
SELECT sum_scale_log2 IS NOT NULL AS grid_kept FROM kmeans_model_store WHERE model = 'regress_grid';
SELECT t.id, k.cluster = kmeans_predict('regress_grid', ARRAY[t.x]) AS agrees,
       k.cluster = (SELECT cluster FROM kmeans_model_centroids('regress_grid') WHERE centroid[1] BETWEEN 20 AND 30) AS with_the_32s
FROM kmeans('m_grid', ARRAY['x'], 3, tol => 0, device => 'cpu') k JOIN m_grid t ON t.ctid = k.ctid ORDER BY t.id;
SELECT kmeans_drop_model('regress_grid');
DROP TABLE m_grid;
-- New points go to the nearest centroid; a NULL feature gives NULL.
SELECT p, kmeans_predict('regress_m', p) = kmeans_predict('regress_m', ARRAY[0, 0]::float8[]) AS with_origin
FROM (VALUES (ARRAY[-5, -5]::float8[]), (ARRAY[4, 4]), (ARRAY[6, 6]), (ARRAY[100, 100])) v(p);
SELECT kmeans_predict('regress_m', ARRAY[1, NULL]::float8[]) IS NULL AS null_feature;
SELECT kmeans_predict('regress_m', NULL) IS NULL AS null_array;
-- But a wrong length is an error, NULLs or not.
SELECT kmeans_predict('regress_m', ARRAY[1, NULL, 3]::float8[]);
SELECT kmeans_predict('regress_m', ARRAY[NULL]::float8[]);

-- The model is read once per statement, not once per row (reading it scans
-- the store a few times, depending on the plan).
BEGIN;
SELECT count(kmeans_predict('regress_m', ARRAY[i, i]::float8[])) FROM generate_series(1, 1000) i;
SELECT seq_scan + coalesce(idx_scan, 0) < 100 AS read_once
FROM pg_stat_xact_user_tables WHERE relname = 'kmeans_model_store';
COMMIT;

-- Predict errors.
SELECT kmeans_predict('regress_m', ARRAY[1, 2, 3]::float8[]);
SELECT kmeans_predict('regress_m', ARRAY[]::float8[]);
SELECT kmeans_predict('regress_m', ARRAY[1, 'NaN']::float8[]);
SELECT kmeans_predict('regress_m', ARRAY[[1, 2]]::float8[]);
SELECT kmeans_predict('no_such_model', ARRAY[1, 2]::float8[]);
SELECT * FROM kmeans_model_centroids('no_such_model');
SELECT * FROM kmeans_fit('', 'm_pts', ARRAY['x', 'y'], 2);
-- Limits of a stored model, checked before the table is read: the name
-- (1,024 bytes) and k x d (60 million values; d is at least the columns).
SELECT model = repeat('n', 1024) AS longest_name FROM kmeans_fit(repeat('n', 1024), 'm_pts', ARRAY['x', 'y'], 2);
SELECT kmeans_drop_model(repeat('n', 1024));
SELECT * FROM kmeans_fit(repeat('n', 1025), 'm_pts', ARRAY['x', 'y'], 2);
SELECT * FROM kmeans_fit('regress_too_big', 'm_pts', ARRAY(SELECT 'x'::text FROM generate_series(1, 60001)), 1000);

-- Functions that write fail at once in a read-only transaction (so on a hot
-- standby too): before the scan (which would say "skipped 1 row") and
-- before the arguments are looked at.
BEGIN READ ONLY;
SELECT * FROM kmeans_fit('regress_ro', 'm_pts', ARRAY['x', 'y'], 2);
ROLLBACK;
BEGIN READ ONLY;
SELECT * FROM kmeans_fit('regress_ro', 'm_pts', ARRAY['no_such_column'], 2);
ROLLBACK;
BEGIN READ ONLY;
SELECT kmeans_drop_model('regress_m');
ROLLBACK;
BEGIN READ ONLY;
SELECT kmeans_grant_model('regress_m', 'public');
ROLLBACK;
BEGIN READ ONLY;
SELECT kmeans_revoke_model('regress_m', 'public');
ROLLBACK;
-- The same in parallel mode: here inside a function that claims to be
-- parallel safe.
CREATE FUNCTION regress_lying_fit() RETURNS integer LANGUAGE sql PARALLEL SAFE
  AS $$ SELECT k FROM kmeans_fit('regress_par', 'm_pts', ARRAY['x', 'y'], 2) $$;
SET force_parallel_mode = regress;
SELECT regress_lying_fit();
RESET force_parallel_mode;
DROP FUNCTION regress_lying_fit();
-- Reading works in a read-only transaction.
BEGIN READ ONLY;
SELECT kmeans_predict('regress_m', ARRAY[0, 0]::float8[]) = kmeans_predict('regress_m', ARRAY[1, 1]::float8[]) AS same;
SELECT count(*) FROM kmeans_model_centroids('regress_m');
ROLLBACK;

-- Refitting a name replaces the model; a cached model is not reused after it.
BEGIN;
SELECT max(kmeans_predict('regress_m', ARRAY[x, y])) AS max_label FROM m_pts;
SELECT model, k FROM kmeans_fit('regress_m', 'm_pts', ARRAY['x', 'y'], 6, seed => 5);
SELECT max(kmeans_predict('regress_m', ARRAY[x, y])) AS max_label FROM m_pts;
COMMIT;
SELECT model, k, array_dims(centroids), n_rows FROM kmeans_models ORDER BY model;

-- Another role can neither see nor use the model, nor replace or drop it.
CREATE ROLE regress_pgkm_carol;
GRANT SELECT ON m_pts TO regress_pgkm_carol;
SET ROLE regress_pgkm_carol;
SELECT count(*) FROM kmeans_models WHERE model = 'regress_m';
SELECT count(DISTINCT kmeans_predict('regress_m', ARRAY[x, y])) AS labels FROM m_pts;
SELECT * FROM kmeans_model_centroids('regress_m');
SELECT * FROM kmeans_fit('regress_m', 'm_pts', ARRAY['x', 'y'], 2);
SELECT kmeans_drop_model('regress_m');
RESET ROLE;
-- Once granted, Carol may see and use it, but still not replace or drop it.
SELECT kmeans_grant_model('regress_m', 'regress_pgkm_carol');
SET ROLE regress_pgkm_carol;
SELECT model, owner, grantees, k FROM kmeans_models WHERE model = 'regress_m';
SELECT count(DISTINCT kmeans_predict('regress_m', ARRAY[x, y])) AS labels FROM m_pts;
SELECT * FROM kmeans_fit('regress_m', 'm_pts', ARRAY['x', 'y'], 2);
SELECT kmeans_drop_model('regress_m');
-- Carol's own model is hers to replace and drop.
SELECT model, owner, k FROM kmeans_fit('regress_carol', 'm_pts', ARRAY['x', 'y'], 2);
SELECT model, owner, k FROM kmeans_fit('regress_carol', 'm_pts', ARRAY['x', 'y'], 3);
SELECT kmeans_drop_model('regress_carol');
RESET ROLE;
SELECT model, owner, k FROM kmeans_models ORDER BY model;

-- Drop; dropping again is an error.
SELECT kmeans_drop_model('regress_m');
SELECT kmeans_drop_model('regress_m');
SELECT count(*) FROM kmeans_models;

DROP TABLE m_pts;
DROP ROLE regress_pgkm_carol;
