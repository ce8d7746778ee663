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
-- does not fit. On the CPU (device => 'cpu'): pg_kmeans.memory_limit is the
-- host's budget; a GPU run keeps K in pg_kmeans.gpu_memory_limit's.
CREATE TABLE km_big AS
SELECT i, (i % 7)::float8 + 0.001 * i AS x, (i % 5)::float8 - 0.002 * i AS y FROM generate_series(1, 2000) i;
SET pg_kmeans.threads = 1;
SELECT options->>'kernel_matrix' AS kernel_matrix
FROM kmeans_fit('regress_kbig', 'km_big', ARRAY['x', 'y'], 3, method => 'kernel', max_iter => 3, seed => 1,
                device => 'cpu');
CREATE TABLE km_big_stored AS SELECT * FROM kmeans_model_centroids('regress_kbig');
SET pg_kmeans.memory_limit = '16MB';
SELECT options->>'kernel_matrix' AS kernel_matrix
FROM kmeans_fit('regress_kbig', 'km_big', ARRAY['x', 'y'], 3, method => 'kernel', max_iter => 3, seed => 1,
                device => 'cpu');
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

-- The training rows are stored as clustered, float4((v - shift) * 2^scale_log2),
-- with their shift and scale, which predict applies to its features. An
-- offset column (epoch seconds) is shifted for the linear and RBF kernels,
-- whose feature-space distances a translation leaves alone, never for the
-- polynomial and sigmoid kernels, whose K depends on the origin (km_spread:
-- spread 1e8 around 1.7e9; at spread 1e4 their K would not resolve the rows
-- in single precision); tiny values are scaled, gamma taken in the table's
-- units. Each model predicts the labels of its own fit, row by row.
CREATE TABLE km_epoch AS SELECT id, ring, 1.7e9 + 1e4 * x AS x, 1.7e9 + 1e4 * y AS y FROM km_rings;
CREATE TABLE km_spread AS SELECT id, ring, 1.7e9 + 1e8 * x AS x, 1.7e9 + 1e8 * y AS y FROM km_rings;
CREATE TABLE km_tiny AS SELECT id, ring, 1e-24 * x AS x, 1e-24 * y AS y FROM km_rings;
CREATE TABLE km_cases (tab text, kern text, gamma float8);
INSERT INTO km_cases VALUES ('km_epoch', 'linear', NULL), ('km_epoch', 'rbf', 1e-7),
    ('km_spread', 'linear', NULL), ('km_spread', 'polynomial', 1e-19), ('km_spread', 'sigmoid', 1e-19),
    ('km_tiny', 'rbf', 1e49), ('km_tiny', 'polynomial', 1e48);
SELECT count(*) AS fitted FROM km_cases c,
    LATERAL kmeans_fit('regress_ku_' || c.tab || '_' || c.kern, c.tab::regclass, ARRAY['x', 'y'], 2,
                       method => 'kernel', kernel => c.kern, gamma => c.gamma, seed => 3) f;
SELECT c.tab, c.kern, s.shift IS NOT NULL AS shifted, s.scale_log2,
       s.options->'gamma' AS gamma
FROM km_cases c JOIN kmeans_model_store s ON s.model = 'regress_ku_' || c.tab || '_' || c.kern
ORDER BY 1, 2;
SELECT c.tab, c.kern, count(*) AS rows, count(DISTINCT k.cluster) AS clusters,
       count(*) FILTER (WHERE kmeans_predict('regress_ku_' || c.tab || '_' || c.kern,
                                             ARRAY[r.x, r.y]) = k.cluster) AS agreeing
FROM km_cases c,
     LATERAL kmeans(c.tab::regclass, ARRAY['x', 'y'], 2, method => 'kernel', kernel => c.kern,
                    gamma => c.gamma, seed => 3) k
     JOIN (SELECT 'km_epoch' AS tab, ctid, x, y FROM km_epoch
           UNION ALL SELECT 'km_spread', ctid, x, y FROM km_spread
           UNION ALL SELECT 'km_tiny', ctid, x, y FROM km_tiny) r ON r.ctid = k.ctid
WHERE r.tab = c.tab
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(kmeans_drop_model('regress_ku_' || tab || '_' || kern)) AS dropped FROM km_cases;

-- The store's check: kernel values exactly when the method is kernel, and
-- consistent with k and d; any model may keep its buffer's units (a shift
-- needs a scale) (terse: the failing row holds a random token).
SELECT kmeans_model_kernel_ok('lloyd', 2, 1, NULL, NULL, NULL, NULL, NULL) AS lloyd,
       kmeans_model_kernel_ok('lloyd', 2, 1, NULL, NULL, NULL, '{1.7e9}', -3) AS lloyd_units,
       kmeans_model_kernel_ok('lloyd', 2, 1, NULL, NULL, NULL, '{1.7e9}', NULL) AS lloyd_shift_no_scale,
       kmeans_model_kernel_ok('lloyd', 2, 1, NULL, NULL, NULL, '{1,2}', 0) AS lloyd_shift_not_d,
       kmeans_model_kernel_ok('lloyd', 2, 1, NULL, NULL, NULL, NULL, 3000) AS lloyd_scale_out_of_range,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}', NULL, 0) AS kernel,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}', '{1.7e9}', -3) AS shifted,
       kmeans_model_kernel_ok('lloyd', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}', NULL, 0) AS lloyd_with_rows,
       kmeans_model_kernel_ok('lloyd', 2, 1, NULL, NULL, NULL, NULL, 0) AS lloyd_with_scale,
       kmeans_model_kernel_ok('kernel', 2, 1, NULL, '{0,1}', '{1,1}', NULL, 0) AS no_rows,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,0}', '{1,1}', NULL, 0) AS empty_cluster,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,2}', '{1,1}', NULL, 0) AS member_out_of_range,
       kmeans_model_kernel_ok('kernel', 2, 2, '{{0},{1}}', '{0,1}', '{1,1}', NULL, 0) AS wrong_d,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{NaN}}', '{0,1}', '{1,1}', NULL, 0) AS nan_row,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1,1}', '{1,1}', NULL, 0) AS wrong_n,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1}', NULL, 0) AS wrong_k,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}', NULL, NULL) AS no_scale,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}', NULL, 3000) AS scale_out_of_range,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}', '{1,2}', 0) AS shift_not_d,
       kmeans_model_kernel_ok('kernel', 2, 1, '{{0},{1}}', '{0,1}', '{1,1}', '{Infinity}', 0) AS shift_infinite;
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
-- A polynomial model whose rows claim a shift: its kernel depends on the origin.
SELECT model FROM kmeans_fit('regress_kpoly', 'km_rings', ARRAY['x', 'y'], 2, method => 'kernel',
                             kernel => 'polynomial');
UPDATE kmeans_model_store SET shift = '{1,1}' WHERE model = 'regress_kpoly';
SELECT kmeans_predict('regress_kpoly', ARRAY[0, 0]::float8[]);
SELECT kmeans_drop_model('regress_kpoly');
ALTER TABLE kmeans_model_store ADD CONSTRAINT kmeans_model_kernel_values
    CHECK (kmeans_model_kernel_ok(method, k, d, kernel_rows, kernel_members, kernel_norms,
                                  shift, scale_log2));
SELECT count(*) AS models_left FROM kmeans_model_store;
DROP TABLE km_rings, km_big, km_big_stored, km_wide, km_epoch, km_spread, km_tiny, km_cases;
