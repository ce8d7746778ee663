-- pg_kmeans progress: one INFO line per step when client_min_messages is
-- INFO or lower, or when pg_kmeans.progress is on. Elapsed times are in the
-- DETAIL, hidden here by VERBOSITY terse so the output is deterministic.
\set VERBOSITY terse
CREATE TABLE prog (x float8, y float8);
INSERT INTO prog VALUES (0, 0), (0, 1), (1, 0), (10, 10), (10, 11), (11, 10);

-- Default: silent.
SELECT count(*) FROM kmeans('prog', ARRAY['x', 'y'], 2, device => 'cpu');

SET client_min_messages = info;
SELECT count(*) FROM kmeans('prog', ARRAY['x', 'y'], 2, device => 'cpu');
SELECT count(*) FROM kmeans_centroids('prog', ARRAY['x', 'y'], 2, max_iter => 1, device => 'cpu');
SELECT count(*) FROM kmeans('prog', ARRAY['x', 'y'], 2, n_init => 2, init => 'random', seed => 1, device => 'cpu');
RESET client_min_messages;

SET pg_kmeans.progress = on;
SELECT count(*) FROM kmeans_centroids('prog', ARRAY['x', 'y'], 1, device => 'cpu');
RESET pg_kmeans.progress;

DROP TABLE prog;
