-- numeric_range: offsets (epoch seconds, projected metres), huge and tiny
-- magnitudes, subnormals, mixed scales, the full range of real and double:
-- the result equals an fp64 computation on the stored values, up to the
-- documented precision (each value kept to 2^-24 of twice the largest
-- column range). Outputs beyond double's range are 22003 errors.

CREATE FUNCTION nr_round(v float8[], digits int DEFAULT 6) RETURNS numeric[]
LANGUAGE sql IMMUTABLE AS $$ SELECT array_agg(round(e::numeric, digits)) FROM unnest(v) e $$;

-- nr_check(relation, columns, k, group column): clusters the relation and
-- compares with the fp64 (numeric) reference of the true groups: every group
-- is one cluster, and centroids, each cluster's inertia and every distance
-- agree within the bound of a 2^-24 * 2R perturbation of each value
-- (R = the largest column range): |centroid - mean| <= eps (+ the rounding
-- of the centroid to double),
-- |inertia - ref| <= 4 eps sqrt(I n d) + 4 n d eps^2 (+ double's smallest
-- subnormal: an inertia below it is 0), |distance - ref| <= 2 eps sqrt(d).
CREATE FUNCTION nr_check(rel regclass, cols text[], k int, grp text, seed bigint DEFAULT 0)
RETURNS TABLE (groups_are_clusters boolean, centroids_ok boolean, inertia_ok boolean,
               distances_ok boolean, clusters bigint)
LANGUAGE plpgsql AS $$
DECLARE
  -- each value as the double precision the engine reads, exactly (float8 to
  -- numeric directly keeps only 15 digits, float4 to numeric 6; the text
  -- form round-trips)
  vexpr text := (SELECT 'ARRAY[' || string_agg(format('%I::float8::text::numeric', c), ', ') || ']'
                 FROM unnest(cols) c);
BEGIN
  RETURN QUERY EXECUTE format($q$
    WITH km AS (SELECT * FROM kmeans(%1$L::regclass, %2$L, %3$s, seed => %6$s)),
    kc AS (SELECT * FROM kmeans_centroids(%1$L::regclass, %2$L, %3$s, seed => %6$s)),
    r AS (SELECT t.%4$I AS grp, km.cluster, km.distance, %5$s AS v FROM km JOIN %1$s t ON t.ctid = km.ctid),
    u AS (SELECT grp, cluster, distance, j, v[j] AS x FROM r, generate_subscripts(v, 1) j),
    rng AS (SELECT 2 * max(hi - lo) AS rr FROM (SELECT j, max(x) AS hi, min(x) AS lo FROM u GROUP BY j) c),
    eps AS (SELECT (rr * 2 ^ -24)::numeric AS e, (SELECT count(*) FROM unnest(%2$L::text[])) AS d FROM rng),
    m AS (SELECT grp, j, avg(x) AS mean FROM u GROUP BY grp, j),
    g2c AS (SELECT grp, min(cluster) AS cluster, count(DISTINCT cluster) AS nc FROM r GROUP BY grp),
    ref AS (SELECT u.grp, sum((u.x - m.mean) * (u.x - m.mean)) AS inertia, count(*) / max(e.d) AS n
            FROM u JOIN m USING (grp, j), eps e GROUP BY u.grp),
    dsum AS (SELECT r.grp, r.distance,
                    sqrt((SELECT sum((r.v[jj] - m.mean) * (r.v[jj] - m.mean)) FROM m, generate_subscripts(r.v, 1) jj
                          WHERE m.grp = r.grp AND m.j = jj)) AS expect
             FROM r)
    SELECT
      (SELECT bool_and(nc = 1) AND count(DISTINCT cluster) = count(*) FROM g2c),
      (SELECT bool_and(abs(kc.centroid[m.j]::text::numeric - m.mean) <= e.e + abs(m.mean) * 2 ^ -52)
         FROM kc JOIN g2c ON g2c.cluster = kc.cluster JOIN m ON m.grp = g2c.grp, eps e),
      (SELECT bool_and(abs(kc.inertia::text::numeric - ref.inertia)
                       <= 4 * e.e * sqrt(ref.inertia * ref.n * e.d) + 4 * ref.n * e.d * e.e * e.e + 5e-324)
         FROM kc JOIN g2c ON g2c.cluster = kc.cluster JOIN ref ON ref.grp = g2c.grp, eps e),
      (SELECT bool_and(abs(distance::text::numeric - expect) <= 2 * e.e * sqrt(e.d)) FROM dsum, eps e),
      (SELECT count(*) FROM kc)
  $q$, rel, cols, k, grp, vexpr, seed);
END $$;

-- Epoch seconds: two groups 30 s apart, spread 1 s (float8 keeps about 1e-7 s).
CREATE TABLE epoch AS
SELECT i, i % 2 AS grp, 1.7e9 + (i % 2) * 30 + ((i * 7919) % 1000) / 1000.0 AS t
FROM generate_series(1, 1000) i;
SELECT * FROM nr_check('epoch', ARRAY['t'], 2, 'grp');
-- The same as bigint seconds (beyond 2^24: not exact in float32 without the shift).
CREATE TABLE epoch_int AS SELECT i, i % 3 AS grp, 1700000000 + (i % 3) * 60 + i % 7 AS t
FROM generate_series(1, 900) i;
SELECT * FROM nr_check('epoch_int', ARRAY['t'], 3, 'grp');
SELECT nr_round(centroid, 3) AS centroid, size, round(inertia::numeric, 3) AS inertia
FROM kmeans_centroids('epoch_int', ARRAY['t'], 3) ORDER BY centroid[1];

-- Web Mercator metres: x near 1e7, groups 3 m apart, y near 5e6, each group
-- spread over a square metre (float32 alone rounds these to whole metres).
CREATE TABLE merc AS
SELECT i, i % 2 AS grp, 1.0e7 + (i % 2) * 3 + ((i * 37) % 100) / 100.0 AS x,
       5.0e6 + ((i * 53) % 100) / 100.0 AS y
FROM generate_series(1, 200) i;
SELECT * FROM nr_check('merc', ARRAY['x', 'y'], 2, 'grp');

-- Large magnitudes well inside real's range: groups 1e22 apart, spread 1e20.
CREATE TABLE big AS
SELECT i, i % 3 AS grp, ((i % 3) * 1e22 + ((i * 7919) % 1000) * 1e17)::real AS x,
       (((i * 104729) % 1000) * 1e17)::real AS y
FROM generate_series(1, 900) i;
SELECT * FROM nr_check('big', ARRAY['x', 'y'], 3, 'grp');
-- The full range of real: groups at -3e38, 0 and 3e38 (squares far beyond float32).
CREATE TABLE full_real AS
SELECT i, i % 3 AS grp, ((i % 3 - 1) * 3e38 + ((i * 7919) % 1000) * 1e33)::real AS x
FROM generate_series(1, 900) i;
SELECT * FROM nr_check('full_real', ARRAY['x'], 3, 'grp');

-- Tiny magnitudes: groups 1e-24 apart, spread 1e-26; and real subnormals.
CREATE TABLE tiny AS
SELECT i, i % 3 AS grp, ((i % 3) * 1e-24 + ((i * 7919) % 1000) * 1e-29)::real AS x
FROM generate_series(1, 900) i;
SELECT * FROM nr_check('tiny', ARRAY['x'], 3, 'grp');
CREATE TABLE subnormal AS
SELECT i, i % 3 AS grp, ((i % 3) * 1e-40)::real AS x FROM generate_series(1, 300) i;
SELECT * FROM nr_check('subnormal', ARRAY['x'], 3, 'grp');
-- a cluster of equal reals has that real as its centroid, exactly
SELECT c.centroid[1] = v.x::float8 AS exact, size, inertia
FROM kmeans_centroids('subnormal', ARRAY['x'], 3) c
JOIN (SELECT DISTINCT x FROM subnormal) v ON v.x::float8 = c.centroid[1] ORDER BY v.x;

-- Double precision near its limits: groups 1e-300 apart; groups 1e150 apart.
CREATE TABLE dtiny AS SELECT i, i % 2 AS grp, (i % 2) * 1e-300 + (i % 5) * 1e-303 AS x
FROM generate_series(1, 400) i;
SELECT * FROM nr_check('dtiny', ARRAY['x'], 2, 'grp');
CREATE TABLE dbig AS SELECT i, i % 2 AS grp, (i % 2) * 1e150 + (i % 5) * 1e147 AS x,
       -1e150 + (i % 7) * 1e147 AS y
FROM generate_series(1, 400) i;
SELECT * FROM nr_check('dbig', ARRAY['x', 'y'], 2, 'grp');

-- Mixed scales: one column in metres near 1e6, one in micro-units (below the
-- first's single-precision resolution, so it cannot split a's groups).
CREATE TABLE mixed AS
SELECT i, i % 2 AS grp, 1e6 + (i % 2) * 100 + (i % 7) AS a, (i / 2 % 2) * 1e-6 + (i % 11) * 1e-9 AS b
FROM generate_series(1, 400) i;
SELECT * FROM nr_check('mixed', ARRAY['a', 'b'], 2, 'grp');
-- b alone still separates its groups: its scale is its own when a is left out.
CREATE TABLE mixed_b AS SELECT i, i / 2 % 2 AS grp, b::float8 AS b FROM mixed;
SELECT * FROM nr_check('mixed_b', ARRAY['b'], 2, 'grp');

-- bigint near 2^63 (exact doubles here, 1024 apart) and numeric with 30
-- digits, both read as double precision: the groups, and known answers (each
-- bigint group is its base + {0, 1024, 2048}, 50 times each).
CREATE TABLE huge_int AS SELECT i, i % 2 AS grp, 9000000000000000000 + (i % 2) * 4096 + (i % 3) * 1024 AS x
FROM generate_series(1, 300) i;
SELECT centroid[1] - 9e18 AS above_9e18, size, inertia FROM kmeans_centroids('huge_int', ARRAY['x'], 2)
ORDER BY centroid[1];
CREATE TABLE long_numeric AS
SELECT i, i % 2 AS grp, 123456789012345678901234567890.0 + (i % 2) * 1e17 + (i % 9) * 1e14 AS x
FROM generate_series(1, 300) i;
SELECT t.grp, count(DISTINCT k.cluster) AS clusters, count(*) AS size
FROM kmeans('long_numeric', ARRAY['x'], 2) k JOIN long_numeric t ON t.ctid = k.ctid
GROUP BY t.grp ORDER BY t.grp;

-- Results beyond double's range are 22003 errors, never Infinity: the inertia
-- (squared distances) of values near 1e200, a distance near 2e308.
CREATE TABLE overflow AS SELECT i, (i % 3) * 1e200 + (i % 5) * 1e198 AS x FROM generate_series(1, 300) i;
SELECT * FROM kmeans_centroids('overflow', ARRAY['x'], 3);
CREATE TABLE overflow2 AS SELECT * FROM (VALUES (1.5e308::float8), (-1.5e308), (-1.5e308), (-1.5e308)) v(x);
SELECT count(*) FROM kmeans('overflow2', ARRAY['x'], 1);
-- But a centroid never is: a cluster of the largest doubles is centred on
-- them, although the float buffer rounds DBL_MAX up.
CREATE TABLE dbl_max AS SELECT * FROM (VALUES (1.7976931348623157e308::float8), (-1.7976931348623157e308),
  (5e-324), (0)) v(x);
SELECT centroid, size, inertia FROM kmeans_centroids('dbl_max', ARRAY['x'], 4) ORDER BY centroid;
CREATE TABLE dbl_max_and_0 AS SELECT * FROM dbl_max WHERE x = 0 OR x > 1;
SELECT centroid[1] = 1.7976931348623157e308 AS is_dbl_max, size, inertia
FROM kmeans_centroids('dbl_max_and_0', ARRAY['x'], 2) ORDER BY centroid;

-- A column shifted by its first rows (-1e308) and later rows near +1e308:
-- their values less the shift pass DBL_MAX, their means do not. Three
-- clusters at -1e308, 0.9e308 and 1e308 (halves compared: no overflow).
CREATE TABLE shifted_far (id int, x float8);
INSERT INTO shifted_far SELECT i, -1e308 FROM generate_series(1, 1024) i;
INSERT INTO shifted_far SELECT i, CASE WHEN i % 2 = 0 THEN 1e308 ELSE 0.9e308 END
FROM generate_series(1025, 1124) i;
SELECT (SELECT min(abs(c.centroid[1] / 2 - v / 2)) FROM unnest(ARRAY[-1e308, 0.9e308, 1e308]) v) < 1e301
         AS at_its_mean, size, inertia
FROM kmeans_centroids('shifted_far', ARRAY['x'], 3) c ORDER BY c.centroid;
SELECT model FROM kmeans_fit('nr_shifted_far', 'shifted_far', ARRAY['x'], 3);
SELECT kmeans_predict('nr_shifted_far', ARRAY[0.9e308]) <> kmeans_predict('nr_shifted_far', ARRAY[1e308])
  AS apart;
SELECT kmeans_drop_model('nr_shifted_far');

-- Tiny values beside a huge one: five groups 0..45.6 and one 1e16 in a
-- column. The run works on the values rounded to its sums' grid (16 here),
-- so it reaches a fixed point at once (it cycled to max_iter before), each
-- centroid the mean of its rows there.
CREATE TABLE sentinel AS
SELECT (i % 5) * 10 + (i % 7) * 0.1 AS x FROM generate_series(1, 1000) i
UNION ALL SELECT 1e16;
SELECT converged, iterations, inertia, sizes FROM kmeans_fit('nr_sentinel', 'sentinel', ARRAY['x'], 6);
SELECT kmeans_drop_model('nr_sentinel');

-- Fewer distinct points than k: the NOTICE says what is true in double
-- precision and at the engine's single precision (1e6 + 1e-9 and 1e6 are
-- distinct doubles, but next to a range of 1e6 they coincide in single
-- precision).
CREATE TABLE collapse AS
SELECT * FROM (VALUES (0.0::float8), (1e6), (1e6 + 1e-9), (1e6 + 2e-9), (1e6 + 3e-9), (1e6)) v(x);
SELECT size FROM kmeans_centroids('collapse', ARRAY['x'], 3) ORDER BY size;
SELECT size FROM kmeans_centroids('collapse', ARRAY['x'], 6) ORDER BY size;
CREATE TABLE one_point AS SELECT 7.5::float8 AS x FROM generate_series(1, 5);
SELECT size FROM kmeans_centroids('one_point', ARRAY['x'], 2);

-- kmeans_predict with a huge common term: (1e200, 100) is nearest to (0, 100.5).
CREATE TABLE predict_pts AS SELECT * FROM (VALUES (0.0::float8, 0.0::float8), (0, 1), (0, 100), (0, 101)) v(a, b);
SELECT model FROM kmeans_fit('nr_predict', 'predict_pts', ARRAY['a', 'b'], 2, seed => 1);
SELECT nr_round(centroid) AS centroid FROM kmeans_model_centroids('nr_predict') ORDER BY centroid[2];
SELECT kmeans_predict('nr_predict', ARRAY[1e200, 100]) = c.cluster AS nearest_is_100_5
FROM kmeans_model_centroids('nr_predict') c WHERE c.centroid[2] > 50;
SELECT kmeans_predict('nr_predict', ARRAY[-1.7e308, 50.5]) = min(cluster) AS tie_to_lowest
FROM kmeans_model_centroids('nr_predict');
SELECT kmeans_drop_model('nr_predict');
