-- pg_kmeans on a host without a usable GPU engine (skipped on GPU hosts):
-- device => 'gpu' is an error with a hint, before the table is read;
-- device => 'auto' falls back to the CPU (a DEBUG1 message says why).
\set VERBOSITY terse
CREATE TABLE gpu_pts (x float8, y float8);
INSERT INTO gpu_pts VALUES (0, 0), (0, 1), (10, 10), (10, 11);

SELECT * FROM kmeans('gpu_pts', ARRAY['x', 'y'], 2, device => 'gpu');
SELECT * FROM kmeans_centroids('gpu_pts', ARRAY['x', 'y'], 2, device => 'gpu');
SELECT * FROM kmeans_fit('regress_gpu', 'gpu_pts', ARRAY['x', 'y'], 2, device => 'gpu');
SELECT * FROM kmeans('gpu_pts', ARRAY['x', 'y'], 2, method => 'kernel', device => 'gpu');
\set VERBOSITY default
-- The hint, and the SQLSTATE (55000); the detail names the reason, which
-- varies by host, so it is not shown.
DO $$
BEGIN
  PERFORM * FROM kmeans('gpu_pts', ARRAY['x', 'y'], 2, device => 'gpu');
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  DECLARE h text;
  BEGIN
    GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
    RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, SQLERRM;
    RAISE NOTICE 'hint: %', h;
  END;
END $$;
-- A plugin path set by pg_kmeans.gpu_plugin that does not exist:
SET pg_kmeans.gpu_plugin = '/nonexistent/pg_kmeans_cuda.so';
SELECT * FROM kmeans('gpu_pts', ARRAY['x', 'y'], 2, device => 'gpu');
-- auto falls back to the CPU and says why at DEBUG1.
\set VERBOSITY terse
SET client_min_messages = debug1;
SELECT count(*) FROM kmeans('gpu_pts', ARRAY['x', 'y'], 2, device => 'auto');
SELECT count(*) FROM kmeans('gpu_pts', ARRAY['x', 'y'], 2, method => 'kernel', device => 'auto');
RESET client_min_messages;
RESET pg_kmeans.gpu_plugin;
SELECT device FROM kmeans_fit('regress_gpu', 'gpu_pts', ARRAY['x', 'y'], 2);
SELECT kmeans_drop_model('regress_gpu');

DROP TABLE gpu_pts;
