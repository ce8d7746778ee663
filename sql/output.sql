-- kmeans() output rows: the same rows whether the result stays in memory or
-- spills to a temporary file (the tuplestore is bounded by what
-- pg_kmeans.memory_limit leaves over the call's own memory, never below
-- work_mem), and every input row exactly once, joinable by ctid.

-- 200,000 rows on a grid: four well-separated groups, no randomness.
CREATE TABLE out_pts AS
SELECT i AS id,
       (i % 2) * 100 + (i % 97) / 97.0 AS x,
       ((i / 2) % 2) * 100 + (i % 89) / 89.0 AS y
FROM generate_series(1, 200000) i;
ANALYZE out_pts;

-- The call's own memory estimate depends on the thread count: pin it.
SET pg_kmeans.threads = 2;

-- In memory: a budget far above the result (about 15 MB of rows).
SET pg_kmeans.memory_limit = '1GB';
CREATE TEMP TABLE out_mem AS
SELECT ctid AS row_id, cluster, distance FROM kmeans('out_pts', ARRAY['x', 'y'], 4, seed => 11, device => 'cpu');

-- Spilled: a budget that leaves about 4 MB for the rows over what the call
-- holds (data and engine, about 15 MB), and work_mem below that as well.
SET pg_kmeans.memory_limit = '19MB';
SET work_mem = '64kB';
-- Temp files of this database before and after (stats flushed on demand).
SELECT pg_stat_force_next_flush();
SELECT temp_files AS temp_files_before FROM pg_stat_database WHERE datname = current_database() \gset
CREATE TEMP TABLE out_spill AS
SELECT ctid AS row_id, cluster, distance FROM kmeans('out_pts', ARRAY['x', 'y'], 4, seed => 11, device => 'cpu');
SELECT pg_stat_force_next_flush();
SELECT temp_files > :temp_files_before AS spilled_to_temp_file
FROM pg_stat_database WHERE datname = current_database();
RESET work_mem;
RESET pg_kmeans.memory_limit;
RESET pg_kmeans.threads;

-- Every row once in each, and the two results identical row for row.
SELECT (SELECT count(*) FROM out_mem) AS mem_rows,
       (SELECT count(DISTINCT row_id) FROM out_mem) AS mem_distinct,
       (SELECT count(*) FROM out_spill) AS spill_rows,
       (SELECT count(*) FROM out_mem m JOIN out_spill s USING (row_id)
         WHERE m.cluster = s.cluster AND m.distance = s.distance) AS identical;

-- Groups are the four grid corners: each cluster holds one (x, y) quadrant.
SELECT count(*) AS rows, count(DISTINCT (p.x >= 50, p.y >= 50)) AS quadrants
FROM out_mem k JOIN out_pts p ON p.ctid = k.row_id
GROUP BY k.cluster ORDER BY rows, quadrants;

DROP TABLE out_pts;
