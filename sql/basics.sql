-- pg_kmeans basics: known answers on tiny literal tables.
-- Cluster numbers are 0-based; which group gets which number depends on the
-- initialisation, so groups are compared by their members and centroids.

-- Centroids are printed rounded, so output does not depend on the device.
CREATE FUNCTION round_vec(v float8[], digits int DEFAULT 6) RETURNS numeric[]
LANGUAGE sql IMMUTABLE AS $$ SELECT array_agg(round(e::numeric, digits)) FROM unnest(v) e $$;

CREATE TABLE two_groups (id int PRIMARY KEY, x float8, y float8);
INSERT INTO two_groups VALUES
  (1, 0, 0), (2, 0, 1), (3, 1, 0),
  (4, 10, 10), (5, 10, 11), (6, 11, 10);

-- Labels joined back to the table through ctid, in the same statement.
SELECT array_agg(t.id ORDER BY t.id) AS members,
       count(DISTINCT k.cluster) AS labels,
       round(sum(k.distance^2)::numeric, 6) AS inertia
FROM kmeans('two_groups', ARRAY['x', 'y'], 2) k
JOIN two_groups t ON t.ctid = k.ctid
GROUP BY k.cluster ORDER BY members;

-- Distance is the Euclidean distance to the own centroid: (1/3,1/3) and (31/3,31/3).
SELECT t.id, round(k.distance::numeric, 6) AS distance,
       round(sqrt((t.x - c.x)^2 + (t.y - c.y)^2)::numeric, 6) AS expected
FROM kmeans('two_groups', ARRAY['x', 'y'], 2) k
JOIN two_groups t ON t.ctid = k.ctid
CROSS JOIN LATERAL (SELECT CASE WHEN t.x < 5 THEN 1/3.0 ELSE 31/3.0 END AS x,
                           CASE WHEN t.x < 5 THEN 1/3.0 ELSE 31/3.0 END AS y) c
ORDER BY t.id;

-- Labels are 0 .. k-1; tableoid names the row's table.
SELECT min(cluster), max(cluster), count(*) FROM kmeans('two_groups', ARRAY['x', 'y'], 2);
SELECT DISTINCT tableoid::regclass FROM kmeans('two_groups', ARRAY['x', 'y'], 2);

-- Centroids, sizes, and each cluster's own inertia (2/3 + 1/3 + 1/3 = 4/3).
SELECT round_vec(centroid) AS centroid,
       size, round(inertia::numeric, 6) AS inertia
FROM kmeans_centroids('two_groups', ARRAY['x', 'y'], 2)
ORDER BY centroid[1];
SELECT cluster FROM kmeans_centroids('two_groups', ARRAY['x', 'y'], 2) ORDER BY cluster;

-- Labels and centroids agree: every row's cluster is its nearest centroid.
WITH l AS (SELECT * FROM kmeans('two_groups', ARRAY['x', 'y'], 2, seed => 7)),
     c AS (SELECT * FROM kmeans_centroids('two_groups', ARRAY['x', 'y'], 2, seed => 7))
SELECT count(*) AS rows_on_nearest
FROM l JOIN two_groups t ON t.ctid = l.ctid
WHERE l.cluster = (SELECT c.cluster FROM c
                   ORDER BY (t.x - c.centroid[1])^2 + (t.y - c.centroid[2])^2 LIMIT 1);

-- k = 1: the mean; k = n: every point its own cluster, inertia 0.
SELECT round_vec(centroid) AS centroid, size, round(inertia::numeric, 6) AS inertia
FROM kmeans_centroids('two_groups', ARRAY['x', 'y'], 1);
SELECT count(DISTINCT cluster) AS clusters, max(distance) AS max_distance
FROM kmeans('two_groups', ARRAY['x', 'y'], 6);

-- Same seed, same result; init 'random' and n_init > 1 work too.
SELECT count(*) AS identical_rows FROM (
  SELECT * FROM kmeans('two_groups', ARRAY['x', 'y'], 3, seed => 42)
  INTERSECT
  SELECT * FROM kmeans('two_groups', ARRAY['x', 'y'], 3, seed => 42)) s;
SELECT array_agg(t.id ORDER BY t.id) AS members
FROM kmeans('two_groups', ARRAY['x', 'y'], 2, init => 'random', n_init => 5, seed => 3) k
JOIN two_groups t ON t.ctid = k.ctid
GROUP BY k.cluster ORDER BY members;
-- Option values: case, '-', '_' and spaces do not matter, and kmeanspp
-- (MADlib) and cuda are other names of k-means++ and gpu. The same options
-- give the same result, whatever the spelling.
SELECT count(*) FROM kmeans('two_groups', ARRAY['x', 'y'], 2, method => 'LLOYD', init => 'K-Means++', device => 'CPU');
SELECT spelling, count(*) AS identical_rows
FROM unnest(ARRAY['k-means++', 'kmeans++', 'KMEANS++', 'k_means++', 'k means ++', 'kmeanspp', 'KMeansPP']) spelling,
     LATERAL (SELECT * FROM kmeans('two_groups', ARRAY['x', 'y'], 3, init => spelling, seed => 5, device => ' Cpu')
              INTERSECT
              SELECT * FROM kmeans('two_groups', ARRAY['x', 'y'], 3, seed => 5, device => 'cpu')) s
GROUP BY spelling ORDER BY spelling COLLATE "C";
SELECT count(*) FROM kmeans('two_groups', ARRAY['x', 'y'], 2, init => 'Random', method => ' lloyd ', device => 'AUTO');
-- k-means|| (Bahmani et al.): candidates drawn in a few rounds, reduced to k by
-- weighted k-means++; on nine separated groups both inits find every group.
CREATE TABLE nine_groups AS
SELECT i, (i % 9) / 3 * 100 + (i * 37 % 11) * 0.1 AS x, (i % 3) * 100 + (i * 53 % 13) * 0.1 AS y
FROM generate_series(1, 900) i;
SELECT init, count(*) AS clusters, min(size), max(size)
FROM unnest(ARRAY['k-means||', 'KMeans||', 'k-means++']) init,
     LATERAL kmeans_centroids('nine_groups', ARRAY['x', 'y'], 9, init => init, seed => 4, device => 'cpu')
GROUP BY init ORDER BY init COLLATE "C";
SELECT count(*) AS rows, count(DISTINCT cluster) AS clusters
FROM kmeans('nine_groups', ARRAY['x', 'y'], 9, init => 'k-means||', seed => 4);
-- max_iter = 1 still returns a complete labelling.
SELECT count(*), count(DISTINCT cluster) FROM kmeans('two_groups', ARRAY['x', 'y'], 2, max_iter => 1);

-- NULL features: the row is skipped and counted.
CREATE TABLE with_nulls (id int, x float8, y float8);
INSERT INTO with_nulls VALUES (1, 0, 0), (2, NULL, 1), (3, 1, 0), (4, 10, NULL), (5, 10, 10), (6, 11, 10);
SELECT array_agg(t.id ORDER BY t.id) AS members
FROM kmeans('with_nulls', ARRAY['x', 'y'], 2) k JOIN with_nulls t ON t.ctid = k.ctid
GROUP BY k.cluster ORDER BY members;
SELECT round_vec(centroid) AS centroid, size FROM kmeans_centroids('with_nulls', ARRAY['x', 'y'], 2) ORDER BY centroid[1];

-- Duplicates: fewer distinct points than k returns fewer clusters, with a NOTICE.
CREATE TABLE dups (x float8, y float8);
INSERT INTO dups VALUES (1, 1), (1, 1), (1, 1), (5, 5), (5, 5);
SELECT round_vec(centroid) AS centroid, size, round(inertia::numeric, 6) AS inertia FROM kmeans_centroids('dups', ARRAY['x', 'y'], 3) ORDER BY centroid[1];
SELECT count(*), count(DISTINCT cluster), max(distance) FROM kmeans('dups', ARRAY['x', 'y'], 3);
SELECT round_vec(centroid) AS centroid, size FROM kmeans_centroids('dups', ARRAY['x', 'y'], 2) ORDER BY centroid[1];

-- Every numeric type, and a domain over one.
CREATE DOMAIN positive_int AS integer CHECK (VALUE > 0);
CREATE TABLE typed (a smallint, b integer, c bigint, d real, e double precision, f numeric, g positive_int);
INSERT INTO typed VALUES (1, 1, 1, 1, 1, 1, 1), (3, 3, 3, 3, 3, 3, 3),
                         (100, 100, 100, 100, 100, 100.5, 100), (102, 102, 102, 102, 102, 102.5, 102);
SELECT round_vec(centroid) AS centroid, size FROM kmeans_centroids('typed', ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'g'], 2) ORDER BY centroid[1];

-- One array column holds the whole vector: real[] and double precision[].
CREATE TABLE vecs (id int, v real[], w double precision[], z float8);
INSERT INTO vecs VALUES (1, '{0,0,0}', '{0,0}', 0), (2, '{0,2,0}', '{0,2}', 0),
                        (3, '{20,20,20}', '{20,20}', 20), (4, '{20,22,20}', '{20,22}', 20),
                        (5, NULL, '{1,NULL}', 0);
SELECT round_vec(centroid) AS centroid, size FROM kmeans_centroids('vecs', ARRAY['v'], 2) ORDER BY centroid[1];
SELECT round_vec(centroid) AS centroid, size FROM kmeans_centroids('vecs', ARRAY['w'], 2) ORDER BY centroid[1];
-- Scalar and array columns mix, in the order given.
SELECT round_vec(centroid) AS centroid, size FROM kmeans_centroids('vecs', ARRAY['z', 'w'], 2) ORDER BY centroid[1];
SELECT array_agg(t.id ORDER BY t.id) AS members
FROM kmeans('vecs', ARRAY['v'], 2) k JOIN vecs t ON t.ctid = k.ctid
GROUP BY k.cluster ORDER BY members;

-- Materialized views are supported.
CREATE MATERIALIZED VIEW mv AS SELECT x * 2 AS x2, y * 2 AS y2 FROM two_groups;
SELECT round_vec(centroid) AS centroid, size FROM kmeans_centroids('mv', ARRAY['x2', 'y2'], 2) ORDER BY centroid[1];

-- Rows deleted or added in the same transaction are seen exactly as a SELECT sees them.
BEGIN;
DELETE FROM two_groups WHERE id = 6;
INSERT INTO two_groups VALUES (7, 20, 20);
SELECT array_agg(t.id ORDER BY t.id) AS members
FROM kmeans('two_groups', ARRAY['x', 'y'], 2) k JOIN two_groups t ON t.ctid = k.ctid
GROUP BY k.cluster ORDER BY members;
ROLLBACK;

-- The thread count does not change the result.
SET pg_kmeans.threads = 1;
-- (A table cannot have columns named ctid or tableoid: rename them when storing labels.)
CREATE TEMP TABLE one_thread AS
  SELECT ctid AS row_ctid, cluster, distance, tableoid AS row_table
  FROM kmeans('two_groups', ARRAY['x', 'y'], 3, seed => 42);
RESET pg_kmeans.threads;
SELECT count(*) AS identical_rows FROM (
  SELECT * FROM one_thread INTERSECT SELECT * FROM kmeans('two_groups', ARRAY['x', 'y'], 3, seed => 42)) s;
DROP TABLE one_thread;

-- The settings and their defaults.
SELECT name, setting, unit, context FROM pg_settings WHERE name LIKE 'pg\_kmeans.%' ORDER BY name;

DROP MATERIALIZED VIEW mv;
DROP TABLE two_groups, nine_groups, with_nulls, dups, typed, vecs;
DROP DOMAIN positive_int;
DROP FUNCTION round_vec(float8[], int);
