-- pg_kmeans runs no operator or function of another role's: every statement
-- it runs names its schema, even when a hostile schema comes before
-- pg_catalog on search_path.
CREATE ROLE regress_pgkm_mallory;
CREATE ROLE regress_pgkm_victim;
CREATE SCHEMA regress_evil AUTHORIZATION regress_pgkm_mallory;
GRANT USAGE ON SCHEMA regress_evil TO PUBLIC;
CREATE TABLE s_pts (x float8, y float8);
INSERT INTO s_pts VALUES (0, 0), (0, 1), (10, 10), (10, 11);
GRANT SELECT ON s_pts TO PUBLIC;

-- Mallory's traps: any call is written down in regress_evil.calls.
SET ROLE regress_pgkm_mallory;
CREATE TABLE regress_evil.calls (what text, by_role name);
GRANT INSERT ON regress_evil.calls TO PUBLIC;
CREATE FUNCTION regress_evil.trap(what text) RETURNS void LANGUAGE sql AS
  $$ INSERT INTO regress_evil.calls VALUES (what, current_user) $$;
CREATE FUNCTION regress_evil.eq(a text, b text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT regress_evil.trap('text = text'); SELECT a OPERATOR(pg_catalog.=) b $$;
CREATE OPERATOR regress_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil.eq);
CREATE FUNCTION regress_evil.eq(a oid, b oid) RETURNS boolean LANGUAGE sql AS
  $$ SELECT regress_evil.trap('oid = oid'); SELECT a OPERATOR(pg_catalog.=) b $$;
CREATE OPERATOR regress_evil.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = regress_evil.eq);
CREATE FUNCTION regress_evil.eq(a bytea, b bytea) RETURNS boolean LANGUAGE sql AS
  $$ SELECT regress_evil.trap('bytea = bytea'); SELECT a OPERATOR(pg_catalog.=) b $$;
CREATE OPERATOR regress_evil.= (LEFTARG = bytea, RIGHTARG = bytea, FUNCTION = regress_evil.eq);
CREATE FUNCTION regress_evil.now() RETURNS timestamptz LANGUAGE sql AS
  $$ SELECT regress_evil.trap('now'); SELECT pg_catalog.now() $$;
CREATE FUNCTION regress_evil.lo_from_bytea(oid, bytea) RETURNS oid LANGUAGE sql AS
  $$ SELECT regress_evil.trap('lo_from_bytea'); SELECT pg_catalog.lo_from_bytea($1, $2) $$;
CREATE FUNCTION regress_evil.lo_unlink(oid) RETURNS integer LANGUAGE sql AS
  $$ SELECT regress_evil.trap('lo_unlink'); SELECT pg_catalog.lo_unlink($1) $$;
CREATE FUNCTION regress_evil.pg_has_role(oid, text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT regress_evil.trap('pg_has_role'); SELECT true $$;
RESET ROLE;

-- The victim (and a superuser) use every function with the traps first on
-- search_path.
SET ROLE regress_pgkm_victim;
SET search_path = regress_evil, pg_catalog, public;
SELECT 'a'::text = 'a'::text AS trap_armed;
RESET ROLE;
SELECT what, by_role FROM regress_evil.calls;
TRUNCATE regress_evil.calls;
SET ROLE regress_pgkm_victim;
SELECT model, owner FROM public.kmeans_fit('regress_sp', 's_pts', ARRAY['x', 'y'], 2, seed => 1);
SELECT model, owner FROM public.kmeans_fit('regress_sp', 's_pts', ARRAY['x', 'y'], 2, seed => 2);
SELECT public.kmeans_predict('regress_sp', ARRAY[0, 0]::float8[]) IS NOT NULL AS predicted;
SELECT count(*) FROM public.kmeans_model_centroids('regress_sp');
SELECT public.kmeans_grant_model('regress_sp', 'regress_pgkm_mallory');
SELECT public.kmeans_revoke_model('regress_sp', 'regress_pgkm_mallory');
SELECT model FROM public.kmeans_models;
SELECT public.kmeans_drop_model('regress_sp');
SELECT public.kmeans_drop_model('regress_sp');
RESET ROLE;
SET search_path = regress_evil, pg_catalog, public;
SELECT model FROM public.kmeans_fit('regress_sp_super', 's_pts', ARRAY['x', 'y'], 2, seed => 1);
SELECT public.kmeans_predict('regress_sp_super', ARRAY[0, 0]::float8[]) IS NOT NULL AS predicted;
SELECT public.kmeans_drop_model('regress_sp_super');
RESET search_path;
SELECT what, by_role, count(*) FROM regress_evil.calls GROUP BY 1, 2;

DROP TABLE s_pts;
DROP SCHEMA regress_evil CASCADE;
DROP ROLE regress_pgkm_mallory, regress_pgkm_victim;
