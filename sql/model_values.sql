-- pg_kmeans stored model values: the store refuses NULL and non-finite
-- values, and no stored value, even one a superuser wrote by hand with the
-- constraints dropped, may crash or mislead kmeans_predict and
-- kmeans_model_centroids: they report the model as corrupt (XX001).
CREATE TABLE v_pts (x float8, y float8);
INSERT INTO v_pts VALUES (0, 0), (0, 1), (10, 10), (10, 11);
SELECT model, k, d FROM kmeans_fit('regress_v', 'v_pts', ARRAY['x', 'y'], 2, seed => 1);
SELECT kmeans_predict('regress_v', ARRAY[0, 0]::float8[]) <> kmeans_predict('regress_v', ARRAY[10, 10]::float8[]) AS apart;

-- The store's constraints refuse bad values, even from a superuser
-- (terse: the failing row holds a random token).
\set VERBOSITY terse
UPDATE kmeans_model_store SET centroids = '{{NaN,0},{10,10.5}}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET centroids = '{{Infinity,0},{10,10.5}}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET centroids = '{{-Infinity,0},{10,10.5}}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET centroids = '{{NULL,0},{10,10.5}}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET centroids = NULL WHERE model = 'regress_v';
UPDATE kmeans_model_store SET centroids = '{0,0.5,10,10.5}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET k = 3 WHERE model = 'regress_v';
UPDATE kmeans_model_store SET initial_centroids = '{{NaN,0},{10,10}}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET sizes = '{2,NULL}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET sizes = '{2,-2}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET cluster_inertia = '{0.5,NaN}' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET inertia = 'Infinity' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET inertia = 'NaN' WHERE model = 'regress_v';
UPDATE kmeans_model_store SET nonce = '\x00' WHERE model = 'regress_v';
\set VERBOSITY default
SELECT kmeans_model_values_ok(1, 1, '{{0}}', NULL, '{1}', '{0}', 0) AS ok,
       kmeans_model_values_ok(1, 1, '{{0}}', NULL, '{1}', '{0}', NULL) AS null_inertia,
       kmeans_model_values_ok(NULL, 1, '{{0}}', NULL, '{1}', '{0}', 0) AS null_k,
       kmeans_model_values_ok(1, 1, '{{0}}', NULL, '{1}', NULL, 0) AS null_cluster_inertia;
SELECT kmeans_model_grid_ok(2, '{46,-3}') AS grid, kmeans_model_grid_ok(2, NULL) AS no_grid,
       kmeans_model_grid_ok(2, '{46}') AS short, kmeans_model_grid_ok(NULL, '{1}') AS null_d,
       kmeans_model_grid_ok(1, '{5000}') AS out_of_range, kmeans_model_grid_ok(1, '{{1}}') AS two_d;

-- With the constraints dropped, each hand-written value is reported, never
-- used: predict and model_centroids both refuse the model.
ALTER TABLE kmeans_model_store DROP CONSTRAINT kmeans_model_values, DROP CONSTRAINT kmeans_model_grid;
ALTER TABLE kmeans_model_store ALTER centroids DROP NOT NULL, ALTER sizes DROP NOT NULL,
    ALTER cluster_inertia DROP NOT NULL, ALTER inertia DROP NOT NULL,
    ALTER k DROP NOT NULL, ALTER d DROP NOT NULL;
CREATE TABLE v_good AS SELECT * FROM kmeans_model_store WHERE model = 'regress_v';
CREATE FUNCTION regress_corrupt(set_clause text) RETURNS TABLE (predict text, centroids text)
LANGUAGE plpgsql AS $$
DECLARE
  p text;
  c text;
BEGIN
  UPDATE kmeans_model_store s SET centroids = g.centroids, initial_centroids = g.initial_centroids,
      sizes = g.sizes, cluster_inertia = g.cluster_inertia, inertia = g.inertia, k = g.k, d = g.d,
      sum_scale_log2 = g.sum_scale_log2
  FROM v_good g WHERE s.model = 'regress_v';
  EXECUTE 'UPDATE kmeans_model_store SET ' || set_clause || ' WHERE model = ''regress_v''';
  BEGIN
    p := kmeans_predict('regress_v', ARRAY[0, 0]::float8[])::text;
  EXCEPTION WHEN OTHERS THEN
    p := SQLSTATE || ' ' || SQLERRM;
  END;
  BEGIN
    SELECT string_agg(m.cluster::text, ',') INTO c FROM kmeans_model_centroids('regress_v') m;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS c = PG_EXCEPTION_DETAIL;
    c := SQLSTATE || ' ' || c;
  END;
  RETURN QUERY SELECT p, c;
END $$;
SELECT set_clause, r.*
FROM (VALUES
  ('centroids = NULL'),
  ('centroids = ''{{0,NULL},{10,10.5}}'''),
  ('centroids = ''{{NaN,NaN},{NaN,NaN}}'''),
  ('centroids = ''{{0,0.5},{Infinity,10.5}}'''),
  ('centroids = ''{{0,0.5},{10,-Infinity}}'''),
  ('centroids = ''{0,0.5,10,10.5}'''),
  ('centroids = ''{{{0,0.5},{10,10.5}}}'''),
  ('centroids = ''{}'''),
  ('centroids = ''{{0,0.5,1},{10,10.5,11}}'''),
  ('k = 3'),
  ('k = 1073741824, d = 1073741824'),
  ('k = 0'),
  ('d = -2'),
  ('k = NULL'),
  ('d = NULL'),
  ('initial_centroids = ''{{0}}'''),
  ('initial_centroids = ''{{0,NaN},{10,10}}'''),
  ('sizes = NULL'),
  ('sizes = ''{2}'''),
  ('sizes = ''{2,NULL}'''),
  ('sizes = ''{{2,2}}'''),
  ('sizes = ''{2,-1}'''),
  ('cluster_inertia = NULL'),
  ('cluster_inertia = ''{0.5,NaN}'''),
  ('cluster_inertia = ''{0.5,-0.5}'''),
  ('cluster_inertia = ''{0.5,0.5,0.5}'''),
  ('inertia = NULL'),
  ('inertia = ''NaN'''),
  ('inertia = ''-Infinity'''),
  ('centroids = ''[0:1][5:6]={{0,0.5},{10,10.5}}'''),
  ('sum_scale_log2 = ''{46}'''),
  ('sum_scale_log2 = ''{46,NULL}'''),
  ('sum_scale_log2 = ''{46,5000}''')) v(set_clause),
LATERAL regress_corrupt(set_clause) r;
-- A corrupt model can still be dropped.
UPDATE kmeans_model_store SET centroids = NULL WHERE model = 'regress_v';
SELECT kmeans_drop_model('regress_v');
SELECT count(*) FROM kmeans_model_store;

DROP FUNCTION regress_corrupt(text);
DROP TABLE v_pts, v_good;
ALTER TABLE kmeans_model_store ALTER centroids SET NOT NULL, ALTER sizes SET NOT NULL,
    ALTER cluster_inertia SET NOT NULL, ALTER inertia SET NOT NULL,
    ALTER k SET NOT NULL, ALTER d SET NOT NULL,
    ADD CONSTRAINT kmeans_model_values CHECK (kmeans_model_values_ok(k, d, centroids,
        initial_centroids, sizes, cluster_inertia, inertia)),
    ADD CONSTRAINT kmeans_model_grid CHECK (kmeans_model_grid_ok(d, sum_scale_log2));
