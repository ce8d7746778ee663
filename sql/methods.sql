-- The assignment methods: every one gives Lloyd's clustering (labels and
-- distances per row), from the same seed; kmeans_models records the method.
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
SELECT model, method, iterations FROM kmeans_fit('mpts_yy', 'mpts', ARRAY['x', 'y'], 12,
                                                 method => 'yinyang', init => 'random', seed => 3,
                                                 device => 'cpu');
SELECT kmeans_drop_model('mpts_yy');
DROP TABLE mpts;
