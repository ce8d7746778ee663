-- pg_kmeans privileges: the functions are SECURITY INVOKER and read the
-- relation exactly as a plain SELECT by the calling user would.
CREATE ROLE regress_pgkm_alice;
CREATE ROLE regress_pgkm_bob;

CREATE TABLE priv_pts (id int, x float8, y float8, secret float8);
INSERT INTO priv_pts VALUES (1, 0, 0, 1), (2, 0, 1, 1), (3, 10, 10, 1), (4, 10, 11, 1);

-- No privilege at all: the same error as SELECT.
SET ROLE regress_pgkm_bob;
SELECT count(*) FROM priv_pts;
SELECT * FROM kmeans('priv_pts', ARRAY['x', 'y'], 2);
SELECT * FROM kmeans_centroids('priv_pts', ARRAY['x', 'y'], 2);
SELECT * FROM kmeans_fit('regress_priv_model', 'priv_pts', ARRAY['x', 'y'], 2);
RESET ROLE;

-- Column privileges: x and y only. Centroids need just those columns;
-- labels also return ctid, so kmeans() needs what SELECT ctid, x, y needs
-- (a lone table's tableoid is the OID the caller passed: no privilege).
GRANT SELECT (x, y) ON priv_pts TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT round(centroid[1]::numeric, 3) AS x, round(centroid[2]::numeric, 3) AS y, size
FROM kmeans_centroids('priv_pts', ARRAY['x', 'y'], 2) ORDER BY 1;
SELECT * FROM kmeans_centroids('priv_pts', ARRAY['x', 'secret'], 2);
SELECT ctid, x FROM priv_pts LIMIT 0;
SELECT count(*) FROM kmeans('priv_pts', ARRAY['x', 'y'], 2);
RESET ROLE;
GRANT SELECT (ctid) ON priv_pts TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT ctid, x FROM priv_pts LIMIT 0;
SELECT count(*), min(tableoid::regclass::text) FROM kmeans('priv_pts', ARRAY['x', 'y'], 2);
RESET ROLE;
-- In an inheritance tree tableoid says which table a row is in: kmeans()
-- needs what SELECT tableoid, ctid, x needs there.
CREATE TABLE priv_child () INHERITS (priv_pts);
INSERT INTO priv_child VALUES (5, 20, 20, 1);
SET ROLE regress_pgkm_bob;
SELECT count(*) FROM kmeans('priv_pts', ARRAY['x', 'y'], 2);
RESET ROLE;
GRANT SELECT (tableoid) ON priv_pts TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT count(*) FROM kmeans('priv_pts', ARRAY['x', 'y'], 2);
RESET ROLE;
DROP TABLE priv_child;

-- An error names a bad row only by what the role may select: its ctid, and
-- its partition's name, only with those privileges (the direct read; the
-- query path under row-level security is checked with rls_cols below).
CREATE TABLE priv_bad (id int, x float8) PARTITION BY RANGE (id);
CREATE TABLE priv_bad_secret_name PARTITION OF priv_bad FOR VALUES FROM (0) TO (10);
INSERT INTO priv_bad VALUES (1, 0), (2, 'NaN');
GRANT SELECT (x) ON priv_bad TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT * FROM kmeans_centroids('priv_bad', ARRAY['x'], 1);
RESET ROLE;
GRANT SELECT (ctid) ON priv_bad TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT * FROM kmeans_centroids('priv_bad', ARRAY['x'], 1);
RESET ROLE;
GRANT SELECT (tableoid) ON priv_bad TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT * FROM kmeans_centroids('priv_bad', ARRAY['x'], 1);
RESET ROLE;
DROP TABLE priv_bad;

-- A table in a schema without USAGE cannot be read by name or by OID,
-- even with SELECT on the table: the same error as SELECT, for every function.
CREATE SCHEMA regress_pgkm_hidden;
CREATE TABLE regress_pgkm_hidden.pts (x float8);
INSERT INTO regress_pgkm_hidden.pts VALUES (1), (2), (10);
GRANT SELECT ON regress_pgkm_hidden.pts TO regress_pgkm_bob;
SELECT 'regress_pgkm_hidden.pts'::regclass::oid AS hidden_oid \gset
SET ROLE regress_pgkm_bob;
SELECT count(*) FROM regress_pgkm_hidden.pts;
SELECT count(*) FROM kmeans(:hidden_oid, ARRAY['x'], 2);
SELECT count(*) FROM kmeans_centroids(:hidden_oid, ARRAY['x'], 2);
SELECT count(*) FROM kmeans_fit('regress_priv_hidden', :hidden_oid, ARRAY['x'], 2);
-- Nothing is told about the relation: not its kind, not its columns.
SELECT count(*) FROM kmeans(:hidden_oid, ARRAY['no_such_column'], 2);
RESET ROLE;
GRANT USAGE ON SCHEMA regress_pgkm_hidden TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT size FROM kmeans_centroids(:hidden_oid, ARRAY['x'], 2) ORDER BY size;
RESET ROLE;

-- Row-level security: each role clusters only the rows it can see.
CREATE TABLE rls_pts (id int, who name, x float8, y float8);
INSERT INTO rls_pts VALUES
  (1, 'regress_pgkm_alice', 0, 0), (2, 'regress_pgkm_alice', 0, 2),
  (3, 'regress_pgkm_alice', 10, 0), (4, 'regress_pgkm_alice', 10, 2),
  (5, 'regress_pgkm_bob', 100, 100), (6, 'regress_pgkm_bob', 100, 102),
  (7, 'regress_pgkm_bob', 200, 100);
ALTER TABLE rls_pts OWNER TO regress_pgkm_alice;
GRANT SELECT ON rls_pts TO regress_pgkm_bob;
ALTER TABLE rls_pts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON rls_pts USING (who = current_user);

SET ROLE regress_pgkm_bob;
SELECT count(*) AS visible FROM rls_pts;
SELECT count(*) AS clustered, count(DISTINCT cluster) AS clusters
FROM kmeans('rls_pts', ARRAY['x', 'y'], 2);
SELECT array_agg(t.id ORDER BY t.id) AS members
FROM kmeans('rls_pts', ARRAY['x', 'y'], 2) k JOIN rls_pts t ON t.ctid = k.ctid
GROUP BY k.cluster ORDER BY members;
SELECT round(centroid[1]::numeric, 6) AS x, round(centroid[2]::numeric, 6) AS y, size
FROM kmeans_centroids('rls_pts', ARRAY['x', 'y'], 1);
-- Bob sees 3 rows, so k = 4 is too many for him.
SELECT * FROM kmeans('rls_pts', ARRAY['x', 'y'], 4);
-- With row_security off, a query that policies would filter is an error, as for SELECT.
SET row_security = off;
SELECT count(*) FROM rls_pts;
SELECT count(*) FROM kmeans('rls_pts', ARRAY['x', 'y'], 2);
RESET row_security;
RESET ROLE;

-- The owner is exempt from its own table's policies unless they are forced.
SET ROLE regress_pgkm_alice;
SELECT count(*) AS visible FROM rls_pts;
SELECT count(*) AS clustered FROM kmeans('rls_pts', ARRAY['x', 'y'], 2);
ALTER TABLE rls_pts FORCE ROW LEVEL SECURITY;
SELECT count(*) AS visible FROM rls_pts;
SELECT count(*) AS clustered FROM kmeans('rls_pts', ARRAY['x', 'y'], 2);
SELECT centroid, size FROM kmeans_centroids('rls_pts', ARRAY['x', 'y'], 2) ORDER BY centroid[1];
RESET ROLE;

-- A superuser bypasses row-level security.
SELECT count(*) AS clustered FROM kmeans('rls_pts', ARRAY['x', 'y'], 2);

-- Row-level security with column privileges: a role allowed SELECT (id, x)
-- clusters x as SELECT x reads it (its own rows); kmeans(), which returns
-- ctid, needs what SELECT ctid, x needs.
CREATE TABLE rls_cols (id int, who name, x float8, secret float8);
INSERT INTO rls_cols VALUES (1, 'regress_pgkm_bob', 0, 0), (2, 'regress_pgkm_bob', 1, 0),
  (3, 'regress_pgkm_bob', 10, 0), (4, 'regress_pgkm_alice', 100, 0);
ALTER TABLE rls_cols ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON rls_cols USING (who = current_user);
GRANT SELECT (id, who, x) ON rls_cols TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT x FROM rls_cols ORDER BY x;
SELECT centroid, size FROM kmeans_centroids('rls_cols', ARRAY['x'], 2) ORDER BY centroid[1];
SELECT model, n_rows FROM kmeans_fit('regress_priv_rls_cols', 'rls_cols', ARRAY['x'], 2);
SELECT kmeans_drop_model('regress_priv_rls_cols');
SELECT * FROM kmeans_centroids('rls_cols', ARRAY['x', 'secret'], 2);
SELECT ctid, x FROM rls_cols;
SELECT count(*) FROM kmeans('rls_cols', ARRAY['x'], 2);
RESET ROLE;
-- An error in a row names its ctid only where the role may select ctid.
UPDATE rls_cols SET x = 'NaN' WHERE id = 3;
SET ROLE regress_pgkm_bob;
SELECT * FROM kmeans_centroids('rls_cols', ARRAY['x'], 2);
RESET ROLE;
GRANT SELECT (ctid) ON rls_cols TO regress_pgkm_bob;
SET ROLE regress_pgkm_bob;
SELECT * FROM kmeans_centroids('rls_cols', ARRAY['x'], 2);
RESET ROLE;

DROP TABLE priv_pts, rls_pts, rls_cols;
DROP SCHEMA regress_pgkm_hidden CASCADE;
DROP ROLE regress_pgkm_alice;
DROP ROLE regress_pgkm_bob;
