-- pg_kmeans.memory_limit: a call is refused only on the memory it really
-- holds. The relation's size only sizes the first allocation; the data
-- buffer is checked each time it grows, and the whole call (data and
-- engine) once the rows are read and k is known to fit them.
-- One thread: the engine's estimate counts each thread's stack.
SET pg_kmeans.threads = 1;
-- The SQLSTATE and message of an error; with masked, N stands for the
-- numbers that depend on the engine's estimate.
CREATE FUNCTION budget_error(query text, masked boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || CASE WHEN masked THEN regexp_replace(SQLERRM, '[0-9]+', 'N', 'g')
                                  ELSE SQLERRM END;
END $$;

-- 100,000 rows, of which 99,990 are dead (no VACUUM yet): the size says
-- 100,000, the call holds 10. A 10 MB budget is plenty for 10 rows.
CREATE TABLE budget_dead (x float8, y float8) WITH (autovacuum_enabled = off);
INSERT INTO budget_dead SELECT i, i FROM generate_series(1, 100000) i;
DELETE FROM budget_dead WHERE x > 10;
SET pg_kmeans.memory_limit = '10MB';
SELECT count(*) AS clustered FROM kmeans('budget_dead', ARRAY['x', 'y'], 2);
SELECT count(*) AS clusters, sum(size) AS sized FROM kmeans_centroids('budget_dead', ARRAY['x', 'y'], 2);
RESET pg_kmeans.memory_limit;

-- Row-level security shows a role 10 rows of 100,000: the same.
CREATE TABLE budget_rls (x float8, y float8) WITH (autovacuum_enabled = off);
INSERT INTO budget_rls SELECT i, i FROM generate_series(1, 100000) i;
VACUUM ANALYZE budget_rls;
ALTER TABLE budget_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY first_ten ON budget_rls USING (x <= 10);
CREATE ROLE regress_pgkm_budget_rls;
GRANT SELECT ON budget_rls TO regress_pgkm_budget_rls;
SET pg_kmeans.memory_limit = '2MB';
SET ROLE regress_pgkm_budget_rls;
SELECT count(*) AS clustered FROM kmeans('budget_rls', ARRAY['x', 'y'], 2);
RESET ROLE;
-- The table's owner sees all 100,000 rows: those do not fit.
SELECT budget_error($$SELECT count(*) FROM kmeans('budget_rls', ARRAY['x', 'y'], 2)$$);
RESET pg_kmeans.memory_limit;

-- The size estimate can be far too low (ANALYZE saw 10 rows, 100,000 were
-- added since): the buffer grows, and the budget stops it at the first row
-- that no longer fits, before the engine is even counted. kmeans() keeps
-- 14 bytes a row (2 x 4 for the features, 6 for the ctid): 36,571 rows fit
-- in 512,000 bytes, the 36,572nd does not; kmeans_centroids() keeps 8 bytes
-- a row: 64,000 rows fit.
CREATE TABLE budget_grow (x float8, y float8) WITH (autovacuum_enabled = off);
INSERT INTO budget_grow SELECT i, i FROM generate_series(1, 10) i;
ANALYZE budget_grow;
INSERT INTO budget_grow SELECT i, i FROM generate_series(11, 100000) i;
SET pg_kmeans.memory_limit = '500kB';
SELECT budget_error($$SELECT count(*) FROM kmeans('budget_grow', ARRAY['x', 'y'], 2)$$, false);
SELECT budget_error($$SELECT count(*) FROM kmeans_centroids('budget_grow', ARRAY['x', 'y'], 2)$$, false);
-- Once the rows fit, the whole call is checked: data, engine and centroids out.
SET pg_kmeans.memory_limit = '5MB';
SELECT budget_error($$SELECT count(*) FROM kmeans_centroids('budget_grow', ARRAY['x', 'y'], 2)$$);
-- With room for both, the grown buffer holds every row.
SET pg_kmeans.memory_limit = '100MB';
SELECT count(*) AS clustered, sum(size) AS sized FROM kmeans_centroids('budget_grow', ARRAY['x', 'y'], 2);
SELECT count(*) AS clustered FROM kmeans('budget_grow', ARRAY['x', 'y'], 2);
RESET pg_kmeans.memory_limit;

-- k is checked against the rows before the engine's memory for k is counted.
SET pg_kmeans.memory_limit = '10MB';
SELECT budget_error($$SELECT count(*) FROM kmeans('budget_dead', ARRAY['x', 'y'], 11)$$, false);
RESET pg_kmeans.memory_limit;

RESET pg_kmeans.threads;
DROP TABLE budget_dead, budget_rls, budget_grow;
DROP ROLE regress_pgkm_budget_rls;
DROP FUNCTION budget_error(text, boolean);
