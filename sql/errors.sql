-- pg_kmeans errors: every argument and data error, with its SQLSTATE.
\set VERBOSITY default
CREATE TABLE pts (id int, x float8, y float8, label text, v real[], w float8[], n numeric);
INSERT INTO pts VALUES (1, 0, 0, 'a', '{0,0}', '{0,0}', 0), (2, 0, 1, 'b', '{0,1}', '{0,1}', 1),
                       (3, 10, 10, 'c', '{10,10}', '{10,10}', 10), (4, NULL, 11, 'd', '{10,11}', '{10,11}', 11);

-- Show the SQLSTATE of an error next to its message.
CREATE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- Arguments.
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 0);
SELECT * FROM kmeans_centroids('pts', ARRAY['x', 'y'], -1);
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 4);
-- k is checked against the rows before any memory is counted for it.
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2147483647);
SELECT sqlstate_of($$SELECT * FROM kmeans_centroids('pts', ARRAY['x', 'y'], 2147483647)$$);
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, max_iter => 0);
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, tol => -1);
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, tol => 'NaN');
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, n_init => 0);
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, method => 'minibatch');
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, init => 'kmeans|');
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, method => 'kernel', init => 'k-means||');
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, init => 'k-means+');
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, device => '');
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, device => 'tpu');
-- A long unknown name is echoed cut (at a character boundary): a method, a
-- column, a model.
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, method => repeat('é', 40) || repeat('x', 100000));
SELECT * FROM kmeans('pts', ARRAY['x', repeat('y', 100000)], 2);
SELECT kmeans_predict(repeat('m', 100000), ARRAY[1, 2]);
SELECT * FROM kmeans('pts', ARRAY[]::text[], 2);
SELECT * FROM kmeans('pts', ARRAY['x', NULL], 2);
SELECT sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 0)$$);
SELECT sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2, method => 'minibatch')$$);
-- STRICT: a NULL argument gives no rows, not an error.
SELECT count(*) FROM kmeans('pts', ARRAY['x', 'y'], NULL);

-- Relations.
SELECT * FROM kmeans('no_such_table', ARRAY['x'], 1);
SELECT * FROM kmeans(0::oid::regclass, ARRAY['x'], 1);
CREATE VIEW pts_view AS SELECT * FROM pts;
SELECT * FROM kmeans('pts_view', ARRAY['x'], 1);
CREATE SEQUENCE pts_seq;
SELECT * FROM kmeans('pts_seq', ARRAY['last_value'], 1);
-- A partitioned table without partitions has no rows (see inheritance.sql).
CREATE TABLE parted (x float8) PARTITION BY RANGE (x);
SELECT * FROM kmeans('parted', ARRAY['x'], 1);
CREATE MATERIALIZED VIEW pts_mv AS SELECT x FROM pts WITH NO DATA;
SELECT * FROM kmeans('pts_mv', ARRAY['x'], 1);
CREATE TABLE empty_t (x float8);
SELECT * FROM kmeans('empty_t', ARRAY['x'], 1);
CREATE TABLE all_null (x float8);
INSERT INTO all_null VALUES (NULL), (NULL);
SELECT * FROM kmeans('all_null', ARRAY['x'], 1);
SELECT sqlstate_of($$SELECT * FROM kmeans('pts_view', ARRAY['x'], 1)$$);
SELECT sqlstate_of($$SELECT * FROM kmeans('empty_t', ARRAY['x'], 1)$$);

-- Columns.
SELECT * FROM kmeans('pts', ARRAY['x', 'nope'], 2);
SELECT * FROM kmeans('pts', ARRAY['X'], 2);
SELECT * FROM kmeans('pts', ARRAY['label'], 2);
SELECT * FROM kmeans('pts', ARRAY['ctid'], 2);
-- An array of another element type (integer, numeric) is named as such.
CREATE TABLE int_arrays (a int[], b numeric[]);
INSERT INTO int_arrays VALUES (ARRAY[1, 2], ARRAY[1.5, 2]);
SELECT * FROM kmeans('int_arrays', ARRAY['a'], 1);
SELECT * FROM kmeans('int_arrays', ARRAY['b'], 1);
SELECT * FROM kmeans('pts', ARRAY['v', 'w'], 2);
SELECT sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['nope'], 2)$$);
SELECT sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['label'], 2)$$);

-- Data: vector length, non-finite values, float32 range.
-- An empty array is refused beside scalar columns too (it would add no feature).
CREATE TABLE empty_w AS SELECT * FROM pts WHERE y IS NOT NULL ORDER BY id;
UPDATE empty_w SET w = '{}';
SELECT * FROM kmeans_centroids('empty_w', ARRAY['x', 'w'], 2);
SELECT sqlstate_of($$SELECT * FROM kmeans_fit('regress_empty_w', 'empty_w', ARRAY['w', 'y'], 2)$$);
DROP TABLE empty_w;
INSERT INTO pts VALUES (5, 1, 1, 'e', '{1,2,3}', '{}', 1);
SELECT * FROM kmeans('pts', ARRAY['v'], 2);
SELECT * FROM kmeans('pts', ARRAY['w'], 2);
DELETE FROM pts WHERE id = 5;
INSERT INTO pts VALUES (6, 'NaN', 1, 'f', '{1,Infinity}', '{1,1}', 'NaN');
SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2);
SELECT * FROM kmeans('pts', ARRAY['v'], 2);
SELECT * FROM kmeans('pts', ARRAY['n'], 2);
UPDATE pts SET x = '-Infinity' WHERE id = 6;
SELECT * FROM kmeans_centroids('pts', ARRAY['x'], 2);
-- Any finite double is clustered (shifted and scaled into single precision,
-- numeric_range.sql); a numeric beyond double precision is out of range.
UPDATE pts SET x = 1e300 WHERE id = 6;
SELECT sqlstate_of($$SELECT * FROM kmeans_centroids('pts', ARRAY['x'], 2)$$);
UPDATE pts SET n = 1e400 WHERE id = 6;
SELECT * FROM kmeans_centroids('pts', ARRAY['n'], 2);
UPDATE pts SET n = -1e400 WHERE id = 6;
SELECT sqlstate_of($$SELECT * FROM kmeans_centroids('pts', ARRAY['n'], 2)$$);
UPDATE pts SET n = 1e300 WHERE id = 6;
SELECT sqlstate_of($$SELECT * FROM kmeans_centroids('pts', ARRAY['n'], 2)$$);
UPDATE pts SET n = '-Infinity' WHERE id = 6;
SELECT sqlstate_of($$SELECT * FROM kmeans_centroids('pts', ARRAY['n'], 2)$$);
DELETE FROM pts WHERE id = 6;
UPDATE pts SET w = '{1,2,3}' WHERE id = 3;
SELECT sqlstate_of($$SELECT * FROM kmeans_centroids('pts', ARRAY['w'], 2)$$);
UPDATE pts SET w = '{10,10}' WHERE id = 3;
-- A feature vector is one-dimensional: a 2-D array is refused, not flattened,
-- with the SQLSTATE of kmeans_predict (2202E), even where its size fits.
UPDATE pts SET w = '{{10},{10}}' WHERE id = 3;
SELECT * FROM kmeans_centroids('pts', ARRAY['w'], 2);
UPDATE pts SET w = '{{10,10}}' WHERE id = 3;
SELECT sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['w'], 2)$$);
UPDATE pts SET w = '{{10,NULL}}' WHERE id = 3;
SELECT sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['w'], 2)$$);
UPDATE pts SET v = '{{10},{10}}' WHERE id = 3;
SELECT sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['v'], 2)$$);
SELECT model FROM kmeans_fit('regress_errors_model', 'pts', ARRAY['x', 'y'], 2);
SELECT sqlstate_of($$SELECT kmeans_predict('regress_errors_model', '{{3},{3}}')$$);
SELECT kmeans_drop_model('regress_errors_model');
UPDATE pts SET w = '{10,10}', v = '{10,10}' WHERE id = 3;

-- Memory budget: the call is refused before the engine allocates, with the
-- numbers in the message (more in budget.sql).
SET pg_kmeans.memory_limit = '1kB';
-- (The numbers depend on the engine's estimate; N stands for them here.)
SELECT left(s, 5) AS sqlstate, regexp_replace(substr(s, 8), '[0-9]+', 'N', 'g') AS message
FROM sqlstate_of($$SELECT * FROM kmeans('pts', ARRAY['x', 'y'], 2)$$) s;
SET pg_kmeans.memory_limit = 0;  -- no limit
SELECT count(*) FROM kmeans('pts', ARRAY['x', 'y'], 2);
RESET pg_kmeans.memory_limit;
SELECT count(*) FROM kmeans('pts', ARRAY['y'], 2);
-- Only a superuser may change the budget.
CREATE ROLE regress_pgkm_budget;
SET ROLE regress_pgkm_budget;
SET pg_kmeans.memory_limit = '100GB';
RESET ROLE;
DROP ROLE regress_pgkm_budget;
SET pg_kmeans.no_such_setting = 1;

DROP VIEW pts_view;
DROP MATERIALIZED VIEW pts_mv;
DROP SEQUENCE pts_seq;
DROP TABLE pts, parted, empty_t, all_null;
DROP FUNCTION sqlstate_of(text);
