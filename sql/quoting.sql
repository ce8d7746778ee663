-- pg_kmeans identifier quoting: column names are identifiers, never SQL.
CREATE SCHEMA "Odd Schema";
CREATE TABLE "Odd Schema"."Odd Table" ("My X" float8, "a""b" float8, "select" float8, "x""; DROP TABLE q; --" text);
INSERT INTO "Odd Schema"."Odd Table" VALUES (0, 0, 0, 'a'), (0, 1, 1, 'b'), (10, 10, 10, 'c'), (10, 11, 11, 'd');
CREATE TABLE q (x float8);
INSERT INTO q VALUES (1), (2);

-- Odd but real names work.
SELECT centroid, size
FROM kmeans_centroids('"Odd Schema"."Odd Table"', ARRAY['My X', 'a"b', 'select'], 2) ORDER BY centroid[1];

-- A name written like an injection is just a missing column (42703) ...
SELECT * FROM kmeans('q', ARRAY['x"; DROP TABLE q; --'], 1);
SELECT * FROM kmeans('q', ARRAY['x) FROM q; DROP TABLE q; --'], 1);
SELECT * FROM kmeans('q', ARRAY['"x"'], 1);
-- ... or, where such a column exists, that column (here of type text).
SELECT * FROM kmeans('"Odd Schema"."Odd Table"', ARRAY['x"; DROP TABLE q; --'], 1);
-- The relation argument is a regclass: a name, not SQL.
SELECT * FROM kmeans('q; DROP TABLE q', ARRAY['x'], 1);
SELECT count(*) AS q_still_there FROM q;

-- The same names through the row-level-security path, which builds a
-- SELECT with quote_identifier.
CREATE ROLE regress_pgkm_dave;
GRANT USAGE ON SCHEMA "Odd Schema" TO regress_pgkm_dave;
GRANT SELECT ON "Odd Schema"."Odd Table", q TO regress_pgkm_dave;
ALTER TABLE "Odd Schema"."Odd Table" ENABLE ROW LEVEL SECURITY;
CREATE POLICY small ON "Odd Schema"."Odd Table" USING ("My X" < 5 OR "select" = 11);
ALTER TABLE q ENABLE ROW LEVEL SECURITY;
CREATE POLICY all_rows ON q USING (true);
SET ROLE regress_pgkm_dave;
SELECT centroid, size
FROM kmeans_centroids('"Odd Schema"."Odd Table"', ARRAY['My X', 'a"b', 'select'], 2) ORDER BY centroid[1];
SELECT * FROM kmeans('q', ARRAY['x"; DROP TABLE q; --'], 1);
SELECT count(*) FROM kmeans('q', ARRAY['x'], 2);
RESET ROLE;
SELECT count(*) AS q_still_there FROM q;

-- Model names are values, passed as parameters.
SELECT model FROM kmeans_fit('m''; DROP TABLE q; --', 'q', ARRAY['x'], 1);
SELECT kmeans_predict('m''; DROP TABLE q; --', ARRAY[1.5]);
SELECT kmeans_drop_model('m''; DROP TABLE q; --');
SELECT count(*) AS q_still_there FROM q;

DROP TABLE q;
DROP SCHEMA "Odd Schema" CASCADE;
DROP ROLE regress_pgkm_dave;
