-- The assignment methods: every one gives Lloyd's clustering (labels and
-- distances per row), from the same seed; kmeans_models records the method
-- asked for and the one that ran.
CREATE TABLE mpts AS
SELECT i AS id,
       (i % 4) * 10 + (i * 7919 % 100) / 100.0 AS x,        -- 12 separated groups
       ((i / 4) % 3) * 10 + (i * 104729 % 100) / 100.0 AS y
FROM generate_series(1, 1200) i;
CREATE TEMP TABLE lloyd AS
SELECT ctid AS tid, cluster, distance
FROM kmeans('mpts', ARRAY['x', 'y'], 12, init => 'random', seed => 3, device => 'cpu');
SELECT m AS method,
       (SELECT count(*)
        FROM kmeans('mpts', ARRAY['x', 'y'], 12, method => m, init => 'random', seed => 3,
                    device => 'cpu') k
        JOIN lloyd l ON l.tid = k.ctid
        WHERE k.cluster = l.cluster AND k.distance = l.distance) AS same_as_lloyd
FROM unnest(ARRAY['elkan', 'hamerly', 'yinyang', 'sort', 'auto', 'YinYang']) m;
SELECT m AS method, sum(inertia)::numeric(12, 6) AS inertia, count(*) AS clusters
FROM unnest(ARRAY['lloyd', 'elkan', 'hamerly', 'yinyang', 'sort', 'auto']) m,
     kmeans_centroids('mpts', ARRAY['x', 'y'], 12, method => m, init => 'random', seed => 3,
                      device => 'cpu')
GROUP BY m ORDER BY m;
-- kmeans_models records the method asked for and the method that ran; a
-- refit records the new one.
SELECT model, method, method_used, iterations
FROM kmeans_fit('mpts_yy', 'mpts', ARRAY['x', 'y'], 12, method => 'yinyang', init => 'random',
                seed => 3, device => 'cpu');
SELECT model, method, method_used, iterations
FROM kmeans_fit('mpts_yy', 'mpts', ARRAY['x', 'y'], 12, method => 'hamerly', init => 'random',
                seed => 3, device => 'cpu');
-- 'auto': Lloyd below k = 4; from k = 4 to 15 Hamerly first, which gives way
-- to Lloyd and is tried again as its timings say (so only the start is pinned).
SELECT model, method, method_used
FROM kmeans_fit('mpts_auto3', 'mpts', ARRAY['x', 'y'], 3, method => 'auto', device => 'cpu');
SELECT model, method,
       method_used ~ '^hamerly(, then (lloyd|hamerly) from iteration [0-9]+)*$' AS hamerly_first
FROM kmeans_fit('mpts_auto12', 'mpts', ARRAY['x', 'y'], 12, method => 'auto', init => 'random',
                seed => 3, device => 'cpu');
SELECT model, method, method_used
FROM kmeans_fit('mpts_kernel', 'mpts', ARRAY['x', 'y'], 2, method => 'kernel', max_iter => 3,
                device => 'cpu');
SELECT model, method, split_part(method_used, ',', 1) AS first_method
FROM kmeans_models WHERE model LIKE 'mpts%' ORDER BY model;
SELECT kmeans_drop_model(m) FROM unnest(ARRAY['mpts_yy', 'mpts_auto3', 'mpts_auto12', 'mpts_kernel']) m;
DROP TABLE mpts;
