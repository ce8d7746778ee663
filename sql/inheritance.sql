-- pg_kmeans on inheritance trees and partitioned tables: every row that
-- SELECT * FROM <relation> returns is clustered, children included, and
-- kmeans() returns each row's table (tableoid) next to its ctid.

-- Inheritance: a child whose columns sit elsewhere (a column of its own
-- first, a dropped one), and a grandchild. Three groups, one per table.
CREATE TABLE inh_parent (id int, x float8, y real);
CREATE TABLE inh_child (pad int, gone int, id int, x float8, y real);
ALTER TABLE inh_child DROP COLUMN gone;
ALTER TABLE inh_child INHERIT inh_parent;
CREATE TABLE inh_grandchild (note text) INHERITS (inh_child);
INSERT INTO inh_parent VALUES (1, 0, 0), (2, 0, 1), (3, 1, 0);
INSERT INTO inh_child VALUES (0, 4, 10, 10), (0, 5, 10, 11), (0, 6, 11, 10), (0, 7, 11, 11);
INSERT INTO inh_grandchild VALUES (0, 8, 20, 0, 'a'), (0, 9, 21, 0, 'b');

SELECT count(*) AS select_rows FROM inh_parent;
SELECT count(*) AS clustered FROM kmeans('inh_parent', ARRAY['x', 'y'], 3);
-- Joined back on (tableoid, ctid): each table is one cluster, and every
-- row is found exactly once.
SELECT k.tableoid::regclass AS tbl, count(*) AS rows, count(DISTINCT k.cluster) AS clusters,
       array_agg(t.id ORDER BY t.id) AS ids
FROM kmeans('inh_parent', ARRAY['x', 'y'], 3) k
JOIN inh_parent t ON t.tableoid = k.tableoid AND t.ctid = k.ctid
GROUP BY 1 ORDER BY 1;
-- ctid alone is not enough here: the same ctid is in several tables.
SELECT count(*) AS ctid_only_matches
FROM kmeans('inh_parent', ARRAY['x', 'y'], 3) k JOIN inh_parent t ON t.ctid = k.ctid;
-- Centroids and inertia equal the per-table means and squared deviations
-- computed by SQL.
WITH c AS (SELECT * FROM kmeans_centroids('inh_parent', ARRAY['x', 'y'], 3)),
     g AS (SELECT tableoid, avg(x) AS mx, avg(y) AS my, count(*) AS n,
                  sum((x - avg_x)^2 + (y - avg_y)^2) AS ss
           FROM (SELECT tableoid, x, y, avg(x) OVER w AS avg_x, avg(y) OVER w AS avg_y
                 FROM inh_parent WINDOW w AS (PARTITION BY tableoid)) s
           GROUP BY tableoid)
SELECT g.tableoid::regclass AS tbl, c.size = g.n AS size_ok,
       abs(c.centroid[1] - g.mx) < 1e-6 AND abs(c.centroid[2] - g.my) < 1e-6 AS centroid_ok,
       abs(c.inertia - g.ss) < 1e-6 AS inertia_ok
FROM g JOIN c ON abs(c.centroid[1] - g.mx) < 0.5 ORDER BY 1;
-- The distances are the distances to those centroids.
SELECT count(*) FILTER (WHERE abs(k.distance - sqrt((t.x - g.mx)^2 + (t.y - g.my)^2)) < 1e-6) AS right_distances,
       count(*) AS rows
FROM kmeans('inh_parent', ARRAY['x', 'y'], 3) k
JOIN inh_parent t ON t.tableoid = k.tableoid AND t.ctid = k.ctid
JOIN (SELECT tableoid, avg(x) AS mx, avg(y) AS my FROM inh_parent GROUP BY tableoid) g
  ON g.tableoid = t.tableoid;
-- A stored model counts every row too.
SELECT n_rows FROM kmeans_fit('regress_inh_model', 'inh_parent', ARRAY['x', 'y'], 3);
SELECT kmeans_drop_model('regress_inh_model');
-- Clustering a child reads that child and its own children only.
SELECT k.tableoid::regclass AS tbl, count(*) FROM kmeans('inh_child', ARRAY['x'], 2) k GROUP BY 1 ORDER BY 1;
-- A row error names the table the row is in.
INSERT INTO inh_grandchild VALUES (0, 10, 'NaN', 0, 'c');
SELECT * FROM kmeans_centroids('inh_parent', ARRAY['x', 'y'], 3);
DELETE FROM inh_grandchild WHERE id = 10;
-- NULL features are skipped and counted in every table.
INSERT INTO inh_child VALUES (0, 11, NULL, 1);
SELECT size FROM kmeans_centroids('inh_parent', ARRAY['x', 'y'], 3) ORDER BY size;

-- Partitioned tables: every partition, sub-partitions included, whatever
-- the column order of a partition attached later.
CREATE TABLE part_pts (id int, x float8, v real[]) PARTITION BY RANGE (id);
CREATE TABLE part_pts_low PARTITION OF part_pts FOR VALUES FROM (0) TO (100);
CREATE TABLE part_pts_high PARTITION OF part_pts FOR VALUES FROM (100) TO (200)
  PARTITION BY LIST ((id % 2));
CREATE TABLE part_pts_high_even PARTITION OF part_pts_high FOR VALUES IN (0);
CREATE TABLE part_pts_high_odd (v real[], x float8, extra_gone int, id int);
ALTER TABLE part_pts_high_odd DROP COLUMN extra_gone;
ALTER TABLE part_pts_high ATTACH PARTITION part_pts_high_odd FOR VALUES IN (1);
CREATE TABLE part_pts_rest PARTITION OF part_pts DEFAULT;
INSERT INTO part_pts
SELECT i, g * 10 + (i % 3), ARRAY[g * 10 + (i % 3), g * 10 - (i % 2)]::real[]
FROM generate_series(0, 299) i, LATERAL (SELECT i / 100 AS g) s;
SELECT tableoid::regclass AS tbl, count(*) FROM part_pts GROUP BY 1 ORDER BY 1;
SELECT k.tableoid::regclass AS tbl, count(*) AS rows, count(DISTINCT k.cluster) AS clusters,
       min(t.id) AS first_id, max(t.id) AS last_id
FROM kmeans('part_pts', ARRAY['x'], 3) k
JOIN part_pts t ON t.tableoid = k.tableoid AND t.ctid = k.ctid
GROUP BY 1 ORDER BY 1;
-- The array column, read from partitions with different column numbers.
WITH c AS (SELECT * FROM kmeans_centroids('part_pts', ARRAY['v'], 3)),
     g AS (SELECT id / 100 AS grp, avg(v[1]) AS m1, avg(v[2]) AS m2, count(*) AS n
           FROM part_pts GROUP BY 1)
SELECT g.grp, c.size = g.n AS size_ok,
       abs(c.centroid[1] - g.m1) < 1e-6 AND abs(c.centroid[2] - g.m2) < 1e-6 AS centroid_ok
FROM g JOIN c ON abs(c.centroid[1] - g.m1) < 1 ORDER BY 1;
-- A partition of a partitioned table works the same way.
SELECT count(*) FROM kmeans('part_pts_high', ARRAY['x', 'v'], 2);
-- A partitioned table without rows, or without partitions, has nothing to cluster.
CREATE TABLE part_empty (x float8) PARTITION BY RANGE (x);
SELECT * FROM kmeans('part_empty', ARRAY['x'], 1);
CREATE TABLE part_empty_1 PARTITION OF part_empty FOR VALUES FROM (0) TO (1);
SELECT * FROM kmeans_centroids('part_empty', ARRAY['x'], 1);
-- Array lengths must agree across partitions; the error names the partition.
INSERT INTO part_pts VALUES (151, 15, '{1,2,3}');
SELECT * FROM kmeans_centroids('part_pts', ARRAY['v'], 3);
DELETE FROM part_pts WHERE id = 151;

-- Privileges are those of SELECT on the named relation: SELECT on the
-- parent reads the children's rows too, SELECT on a child alone does not
-- open the parent.
CREATE ROLE regress_pgkm_inh;
GRANT SELECT ON inh_parent TO regress_pgkm_inh;
GRANT SELECT ON part_pts_low TO regress_pgkm_inh;
SET ROLE regress_pgkm_inh;
SELECT count(*) FROM inh_parent;
SELECT count(*) FROM kmeans('inh_parent', ARRAY['x', 'y'], 3);
SELECT count(*) FROM inh_child;
SELECT count(*) FROM kmeans('inh_child', ARRAY['x', 'y'], 3);
SELECT count(*) FROM part_pts;
SELECT count(*) FROM kmeans('part_pts', ARRAY['x'], 3);
SELECT count(*) FROM kmeans('part_pts_low', ARRAY['x'], 3);
RESET ROLE;

-- Row-level security: the named relation's policies apply to every row of
-- the tree (a partition's own policies do not, as in SELECT).
ALTER TABLE part_pts ENABLE ROW LEVEL SECURITY;
CREATE POLICY some_rows ON part_pts USING (id % 10 = 0);
ALTER TABLE part_pts_rest ENABLE ROW LEVEL SECURITY;  -- no policy: would hide all its rows
GRANT SELECT ON part_pts TO regress_pgkm_inh;
SET ROLE regress_pgkm_inh;
SELECT tableoid::regclass AS tbl, count(*) FROM part_pts GROUP BY 1 ORDER BY 1;
SELECT k.tableoid::regclass AS tbl, count(*) AS rows, count(t.id) AS joined
FROM kmeans('part_pts', ARRAY['x'], 3) k
LEFT JOIN part_pts t ON t.tableoid = k.tableoid AND t.ctid = k.ctid
GROUP BY 1 ORDER BY 1;
SELECT size FROM kmeans_centroids('part_pts', ARRAY['x'], 3) ORDER BY size;
RESET ROLE;

-- A foreign partition is read through its wrapper, like SELECT reads it
-- (file_fdw reports no ctid: its rows cannot be joined back by ctid).
CREATE EXTENSION file_fdw;
CREATE SERVER regress_pgkm_files FOREIGN DATA WRAPPER file_fdw;
CREATE TABLE mixed (id int, x float8) PARTITION BY RANGE (id);
CREATE TABLE mixed_local PARTITION OF mixed FOR VALUES FROM (0) TO (100);
CREATE FOREIGN TABLE mixed_remote PARTITION OF mixed FOR VALUES FROM (100) TO (200)
  SERVER regress_pgkm_files OPTIONS (program 'printf "100,50\n101,52\n"', format 'csv');
INSERT INTO mixed_local VALUES (1, 0), (2, 2);
SELECT centroid, size FROM kmeans_centroids('mixed', ARRAY['x'], 2) ORDER BY centroid[1];
SELECT tableoid::regclass AS tbl, array_agg(ctid ORDER BY ctid) AS ctids,
       count(DISTINCT cluster) AS clusters, max(distance) AS max_distance
FROM kmeans('mixed', ARRAY['x'], 2) GROUP BY 1 ORDER BY 1;
-- A foreign table named directly is refused, as before.
SELECT * FROM kmeans('mixed_remote', ARRAY['x'], 1);

DROP TABLE inh_parent CASCADE;
DROP TABLE part_pts, part_empty, mixed;
DROP SERVER regress_pgkm_files;
DROP EXTENSION file_fdw;
DROP ROLE regress_pgkm_inh;
