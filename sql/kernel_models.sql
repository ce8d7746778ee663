-- Kernel k-means models: kmeans_fit stores what exact prediction needs
-- (the training rows, the partition of the final feature-space centroids,
-- their norms), kmeans_predict agrees with the fit row by row, the memory
-- budget decides whether K is stored, and the size limit and the store's
-- checks guard the values.
\set VERBOSITY default
CREATE TABLE km_rings (id int, ring int, x float8, y float8);
INSERT INTO km_rings
SELECT i, r, rad * cos(2 * pi() * i / 40), rad * sin(2 * pi() * i / 40)
FROM (VALUES (0, 1.0), (1, 0.3)) v(r, rad), generate_series(0, 39) i;

SELECT model, k, d, method, options, sizes, n_rows, array_dims(centroids) AS centroid_dims
FROM kmeans_fit('regress_kring', 'km_rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 10,
                n_init => 5);
-- The view leaves the training rows out; the store keeps them as clustered.
SELECT array_dims(kernel_rows) AS rows, array_dims(kernel_members) AS members,
       array_dims(kernel_norms) AS norms
FROM kmeans_model_store WHERE model = 'regress_kring';
SELECT count(*) AS kernel_columns_in_view FROM information_schema.columns
WHERE table_name = 'kmeans_models' AND column_name LIKE 'kernel%';

-- Predict agrees with the labels of the same run, row by row, in any query.
SELECT count(*) AS rows,
       count(*) FILTER (WHERE kmeans_predict('regress_kring', ARRAY[t.x, t.y]) = k.cluster) AS agreeing
FROM kmeans('km_rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 10, n_init => 5) k
JOIN km_rings t ON t.ctid = k.ctid;
-- New points go to their ring's cluster.
SELECT kmeans_predict('regress_kring', ARRAY[0.31, 0.02]) = kmeans_predict('regress_kring', ARRAY[-0.02, -0.29]) AS inner_ring,
       kmeans_predict('regress_kring', ARRAY[0.97, 0.1]) = kmeans_predict('regress_kring', ARRAY[-0.7, -0.72]) AS outer_ring,
       kmeans_predict('regress_kring', ARRAY[0.31, 0.02]) <> kmeans_predict('regress_kring', ARRAY[0.97, 0.1]) AS apart;
SELECT kmeans_predict('regress_kring', ARRAY[1, NULL]::float8[]) IS NULL AS null_feature;
SELECT kmeans_predict('regress_kring', ARRAY[1, 2, 3]::float8[]);
-- The model's centroids are kmeans_centroids() with the same arguments.
SELECT count(*) AS differing FROM (
  (SELECT * FROM kmeans_model_centroids('regress_kring')
   EXCEPT SELECT * FROM kmeans_centroids('km_rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 10, n_init => 5))
  UNION ALL
  (SELECT * FROM kmeans_centroids('km_rings', ARRAY['x', 'y'], 2, method => 'kernel', gamma => 10, n_init => 5)
   EXCEPT SELECT * FROM kmeans_model_centroids('regress_kring'))) d;

-- Each kernel stores the parameters it uses, the defaults resolved (gamma = 1/d).
SELECT kern, options - ARRAY['max_iter', 'tol', 'init', 'n_init', 'seed', 'device', 'k'] AS kernel_options
FROM (VALUES ('linear'), ('polynomial'), ('rbf'), ('sigmoid')) v(kern),
     LATERAL kmeans_fit('regress_k_' || kern, 'km_rings', ARRAY['x', 'y'], 2, method => 'kernel', kernel => kern)
ORDER BY kern;
SELECT kmeans_drop_model('regress_k_' || kern)
FROM (VALUES ('linear'), ('polynomial'), ('rbf'), ('sigmoid')) v(kern);
-- A NULL in one of the other arguments gives NULL, as for a STRICT function.
SELECT kmeans_fit('regress_null', 'km_rings', ARRAY['x', 'y'], NULL, method => 'kernel') IS NULL AS null_k;
SELECT kmeans_fit(NULL, 'km_rings', ARRAY['x', 'y'], 2, method => 'kernel') IS NULL AS null_name;

-- The memory budget counts K (n^2 float4) and decides where it lives: stored
-- when the call fits pg_kmeans.memory_limit with it, else recomputed tile by
-- tile on every pass (same result); refused, with the numbers, when even that
-- does not fit.
CREATE TABLE km_big AS
SELECT i, (i % 7)::float8 + 0.001 * i AS x, (i % 5)::float8 - 0.002 * i AS y FROM generate_series(1, 2000) i;
SET pg_kmeans.threads = 1;
SELECT options->>'kernel_matrix' AS kernel_matrix
FROM kmeans_fit('regress_kbig', 'km_big', ARRAY['x', 'y'], 3, method => 'kernel', max_iter => 3, seed => 1);
CREATE TABLE km_big_stored AS SELECT * FROM kmeans_model_centroids('regress_kbig');
SET pg_kmeans.memory_limit = '16MB';
SELECT options->>'kernel_matrix' AS kernel_matrix
FROM kmeans_fit('regress_kbig', 'km_big', ARRAY['x', 'y'], 3, method => 'kernel', max_iter => 3, seed => 1);
SELECT count(*) AS differing FROM (
  SELECT * FROM kmeans_model_centroids('regress_kbig') EXCEPT SELECT * FROM km_big_stored) d;
SET pg_kmeans.memory_limit = '4MB';
SELECT * FROM kmeans_centroids('km_big', ARRAY['x', 'y'], 3, method => 'kernel');
RESET pg_kmeans.memory_limit;
RESET pg_kmeans.threads;
SELECT kmeans_drop_model('regress_kbig');

-- A model keeps at most 10,000,000 training values (rows x features).
CREATE TABLE km_wide AS SELECT i, array_fill((i * 0.001)::real, ARRAY[10000]) AS v FROM generate_series(1, 1001) i;
SELECT model FROM kmeans_fit('regress_kwide', 'km_wide', ARRAY['v'], 2, method => 'kernel');
-- kmeans() keeps no model: no limit.
SELECT count(DISTINCT cluster) FROM kmeans('km_wide', ARRAY['v'], 3, method => 'kernel', kernel => 'linear');

-- The store's check: kernel values exactly when the method is kernel, and
-- consistent with k and d (terse: the failing row holds a random token).
SELECT kmeans_model_kernel_ok('lloyd', 2, 1, NULL, NULL, NULL) AS lloyd,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}') AS kernel,
       kmeans_model_kernel_ok('lloyd', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}') AS lloyd_with_rows,
       kmeans_model_kernel_ok('kernel', 2, 1, NULL, '{0,1}', '{1,1}') AS no_rows,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,0}', '{1,1}') AS empty_cluster,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,2}', '{1,1}') AS member_out_of_range,
       kmeans_model_kernel_ok('kernel', 2, 2, '{{0},{1}}', '{0,1}', '{1,1}') AS wrong_d,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{NaN}}', '{0,1}', '{1,1}') AS nan_row,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1,1}', '{1,1}') AS wrong_n,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1}') AS wrong_k;
\set VERBOSITY terse
UPDATE kmeans_model_store SET kernel_members = '{0}' WHERE model = 'regress_kring';
UPDATE kmeans_model_store SET kernel_rows = NULL WHERE model = 'regress_kring';
\set VERBOSITY default
-- With the check dropped, predict reports a corrupt model instead of using it.
ALTER TABLE kmeans_model_store DROP CONSTRAINT kmeans_model_kernel_values;
UPDATE kmeans_model_store SET kernel_members = array_fill(5, ARRAY[80]) WHERE model = 'regress_kring';
SELECT kmeans_predict('regress_kring', ARRAY[0, 0]::float8[]);
UPDATE kmeans_model_store SET options = options - 'kernel' WHERE model = 'regress_kring';
SELECT kmeans_predict('regress_kring', ARRAY[0, 0]::float8[]);
SELECT kmeans_drop_model('regress_kring');
ALTER TABLE kmeans_model_store ADD CONSTRAINT kmeans_model_kernel_values
    CHECK (kmeans_model_kernel_ok(method, k, d, kernel_rows, kernel_members, kernel_norms));
SELECT count(*) AS models_left FROM kmeans_model_store;
DROP TABLE km_rings, km_big, km_big_stored, km_wide;
