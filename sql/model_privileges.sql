-- pg_kmeans model privileges: a model is usable by its owner, by roles that
-- have the owner's privileges, by superusers and by the roles it was
-- granted to; nobody else can read, change, lock, forge or delete it.
CREATE ROLE regress_pgkm_alice;
CREATE ROLE regress_pgkm_bob;
CREATE ROLE regress_pgkm_eve;
CREATE ROLE regress_pgkm_team IN ROLE regress_pgkm_alice;	-- inherits Alice's privileges
CREATE ROLE regress_pgkm_noinherit NOINHERIT IN ROLE regress_pgkm_alice;
CREATE ROLE regress_pgkm_readers;
GRANT regress_pgkm_readers TO regress_pgkm_bob;

-- Runs a statement and shows its SQLSTATE and message with OIDs masked
-- (large object numbers differ from run to run).
CREATE FUNCTION regress_try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9]{4,}', 'N', 'g');
END $$;

-- Alice's rows are hers by row-level security; k = 4 on her 4 rows makes
-- centroids that are exactly her rows.
CREATE TABLE p_pts (who name, x float8, y float8);
INSERT INTO p_pts VALUES
  ('regress_pgkm_alice', 1, 2), ('regress_pgkm_alice', 3, 4), ('regress_pgkm_alice', 5, 6),
  ('regress_pgkm_alice', 7, 8), ('regress_pgkm_eve', 100, 100), ('regress_pgkm_eve', 200, 200),
  ('regress_pgkm_bob', 50, 50);
ALTER TABLE p_pts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON p_pts
  USING (EXISTS (SELECT FROM pg_roles r WHERE r.rolname = who AND pg_has_role(r.oid, 'USAGE')));
GRANT SELECT ON p_pts TO PUBLIC;

SET ROLE regress_pgkm_alice;
SELECT model, owner, grantees, k, n_rows
FROM kmeans_fit('regress_secret', 'p_pts', ARRAY['x', 'y'], 4, seed => 1);
SELECT centroid FROM kmeans_model_centroids('regress_secret') ORDER BY centroid[1];
RESET ROLE;
SELECT token AS secret_token FROM kmeans_models WHERE model = 'regress_secret' \gset

-- Eve sees nothing of it, through any function or the view.
SET ROLE regress_pgkm_eve;
SELECT count(*) AS visible FROM kmeans_models;
SELECT * FROM kmeans_model_centroids('regress_secret');
SELECT kmeans_predict('regress_secret', ARRAY[1, 2]::float8[]);
SELECT kmeans_drop_model('regress_secret');
SELECT kmeans_grant_model('regress_secret', 'regress_pgkm_eve');
SELECT kmeans_revoke_model('regress_secret', 'regress_pgkm_eve');
-- Her own conditions on the view see her rows only (security_barrier),
-- whatever the plan: a hash join would scan the whole store.
SELECT model, owner FROM kmeans_fit('regress_eves', 'p_pts', ARRAY['x', 'y'], 1);
CREATE FUNCTION pg_temp.peek(m text, c float8[]) RETURNS boolean LANGUAGE plpgsql COST 0.000001 AS $$
BEGIN RAISE NOTICE 'peeked at % %', m, c; RETURN true; END $$;
SET enable_nestloop = off;
SET enable_mergejoin = off;
SELECT model FROM kmeans_models WHERE pg_temp.peek(model, centroids);
RESET enable_nestloop;
RESET enable_mergejoin;
-- The store and the private view are closed to her.
SELECT count(*) FROM kmeans_model_store;
SELECT count(*) FROM kmeans_model_owners;
-- She can change nothing: not through the view, not in the store.
UPDATE kmeans_models SET k = 1;
DELETE FROM kmeans_models;
UPDATE kmeans_model_store SET k = 1;
DELETE FROM kmeans_model_store;
TRUNCATE kmeans_model_store;
INSERT INTO kmeans_model_store (model, token, nonce, relation, columns, k, d, method, options,
    centroids, sizes, cluster_inertia, inertia, iterations, converged, elapsed_s, device, n_rows, trained_at)
VALUES ('regress_forged', 1, '\x00000000000000000000000000000000', 'p_pts', '{x}', 1, 1, 'lloyd', '{}',
    '{{0}}', '{1}', '{0}', 0, 1, true, 0, 'cpu', 1, now());
-- She cannot lock beyond ACCESS SHARE (which blocks nothing pg_kmeans does).
BEGIN;
LOCK TABLE kmeans_models IN ACCESS EXCLUSIVE MODE;
ROLLBACK;
BEGIN;
LOCK TABLE kmeans_models IN ROW EXCLUSIVE MODE;
ROLLBACK;
BEGIN;
LOCK TABLE kmeans_model_store IN ACCESS SHARE MODE;
ROLLBACK;
SELECT model FROM kmeans_models FOR SHARE;
SELECT model FROM kmeans_models FOR KEY SHARE;
-- The token is Alice's: Eve can neither read, write, unlink, take nor grant it.
SELECT regress_try(format('SELECT lo_get(%s)', :secret_token));
SELECT regress_try(format('SELECT lo_put(%s, 0, ''\x00'')', :secret_token));
SELECT regress_try(format('SELECT lo_unlink(%s)', :secret_token));
SELECT regress_try(format('ALTER LARGE OBJECT %s OWNER TO regress_pgkm_eve', :secret_token));
SET client_min_messages = error;
SELECT regress_try(format('GRANT SELECT ON LARGE OBJECT %s TO regress_pgkm_eve', :secret_token));
RESET client_min_messages;
SELECT model FROM kmeans_models;
-- Her name clash with Alice's model is refused before any scan.
SELECT model FROM kmeans_fit('regress_secret', 'p_pts', ARRAY['x', 'y'], 1);
-- Her own model cannot be made to look like Alice's.
SELECT regress_try(format('ALTER LARGE OBJECT %s OWNER TO regress_pgkm_alice', token))
FROM kmeans_models WHERE model = 'regress_eves';
SELECT kmeans_drop_model('regress_eves');
RESET ROLE;

-- Granted to Bob: he may see and use it, but not change, drop or pass it on.
SET ROLE regress_pgkm_alice;
SELECT kmeans_grant_model('regress_secret', 'regress_pgkm_bob');
SELECT kmeans_grant_model('regress_secret', 'regress_pgkm_bob');	-- granting twice is harmless
SELECT kmeans_grant_model('regress_secret', 'regress_pgkm_nobody');
SELECT model, owner, grantees FROM kmeans_models;
RESET ROLE;
SET ROLE regress_pgkm_bob;
SELECT model, owner, grantees FROM kmeans_models;
SELECT kmeans_predict('regress_secret', ARRAY[5, 6]::float8[]) = kmeans_predict('regress_secret', ARRAY[5.1, 6]::float8[]) AS same;
SELECT count(*) FROM kmeans_model_centroids('regress_secret');
SELECT model FROM kmeans_fit('regress_secret', 'p_pts', ARRAY['x', 'y'], 1);
SELECT kmeans_drop_model('regress_secret');
SELECT kmeans_grant_model('regress_secret', 'regress_pgkm_eve');
SELECT kmeans_revoke_model('regress_secret', 'regress_pgkm_bob');
SELECT regress_try(format('SELECT lo_unlink(%s)', :secret_token));
RESET ROLE;
-- Revoked, he sees nothing again; granted to a group he is in, he does.
SET ROLE regress_pgkm_alice;
SELECT kmeans_revoke_model('regress_secret', 'regress_pgkm_bob');
SELECT kmeans_revoke_model('regress_secret', 'regress_pgkm_bob');	-- revoking twice is harmless
RESET ROLE;
SET ROLE regress_pgkm_bob;
SELECT count(*) AS visible FROM kmeans_models;
SELECT kmeans_predict('regress_secret', ARRAY[5, 6]::float8[]);
RESET ROLE;
SET ROLE regress_pgkm_alice;
SELECT kmeans_grant_model('regress_secret', 'regress_pgkm_readers');
RESET ROLE;
SET ROLE regress_pgkm_bob;
SELECT model, grantees FROM kmeans_models;
RESET ROLE;
-- 'public' is every role, in any case (as GRANT ... TO PUBLIC).
SET ROLE regress_pgkm_alice;
SELECT kmeans_grant_model('regress_secret', 'PUBLIC');
RESET ROLE;
SET ROLE regress_pgkm_eve;
SELECT model, grantees FROM kmeans_models;
SELECT count(*) FROM kmeans_model_centroids('regress_secret');
RESET ROLE;
SET ROLE regress_pgkm_alice;
SELECT kmeans_revoke_model('regress_secret', 'Public');
SELECT kmeans_revoke_model('regress_secret', 'regress_pgkm_readers');
RESET ROLE;
SET ROLE regress_pgkm_eve;
SELECT count(*) AS visible FROM kmeans_models;
RESET ROLE;

-- Members that inherit Alice's privileges act as her; others after SET ROLE.
SET ROLE regress_pgkm_team;
SELECT model, owner FROM kmeans_models;
SELECT model, owner, grantees FROM kmeans_fit('regress_secret', 'p_pts', ARRAY['x', 'y'], 1);
SELECT kmeans_grant_model('regress_secret', 'regress_pgkm_bob');
RESET ROLE;
SET ROLE regress_pgkm_noinherit;
SELECT count(*) AS visible FROM kmeans_models;
SELECT kmeans_drop_model('regress_secret');
SET ROLE regress_pgkm_alice;
SELECT count(*) AS visible FROM kmeans_models;
RESET ROLE;

-- A superuser sees and may refit every model; the owner and grants stay.
SELECT model, owner, grantees, k FROM kmeans_models;
SELECT model, owner, grantees, k FROM kmeans_fit('regress_secret', 'p_pts', ARRAY['x', 'y'], 2);

-- Ownership is by role OID: a rename keeps it, a new role with the old name
-- gets nothing.
ALTER ROLE regress_pgkm_alice RENAME TO regress_pgkm_alice_renamed;
CREATE ROLE regress_pgkm_alice;
SET ROLE regress_pgkm_alice;
SELECT count(*) AS visible FROM kmeans_models;
SELECT kmeans_drop_model('regress_secret');
RESET ROLE;
SELECT model, owner FROM kmeans_models;
-- A role that owns models, or was granted one, cannot be dropped.
\set VERBOSITY terse
DROP ROLE regress_pgkm_alice_renamed;
DROP ROLE regress_pgkm_bob;
\set VERBOSITY default
-- REASSIGN OWNED moves the models, grants included.
REASSIGN OWNED BY regress_pgkm_alice_renamed TO regress_pgkm_eve;
SELECT model, owner, grantees FROM kmeans_models;
SET ROLE regress_pgkm_eve;
SELECT count(*) AS visible FROM kmeans_models;
RESET ROLE;
-- DROP OWNED BY a grantee takes its grants back.
DROP OWNED BY regress_pgkm_bob;
SELECT model, owner, grantees FROM kmeans_models;
-- DROP OWNED BY the owner drops the models; then the role can be dropped.
SET ROLE regress_pgkm_eve;
SELECT model, owner FROM kmeans_fit('regress_other', 'p_pts', ARRAY['x', 'y'], 1);
RESET ROLE;
SELECT model, owner FROM kmeans_fit('regress_superusers', 'p_pts', ARRAY['x', 'y'], 1);
DROP OWNED BY regress_pgkm_eve;
SELECT model, owner FROM kmeans_models ORDER BY model;
SELECT kmeans_predict('regress_secret', ARRAY[5, 6]::float8[]);
DROP ROLE regress_pgkm_eve;
-- A large object created later with the dropped token's OID does not bring
-- the model back: it lacks the token's content.
SET ROLE regress_pgkm_bob;
SELECT lo_create(:secret_token) = :secret_token AS same_oid;
SELECT count(*) AS visible FROM kmeans_models;
SELECT kmeans_predict('regress_secret', ARRAY[5, 6]::float8[]);
SELECT lo_unlink(:secret_token);
-- The name is free again: a new model of Bob's, fitted on what Bob sees.
SELECT model, owner, k, n_rows FROM kmeans_fit('regress_secret', 'p_pts', ARRAY['x', 'y'], 1);
SELECT kmeans_drop_model('regress_secret');
RESET ROLE;
SELECT kmeans_drop_model('regress_superusers');
SELECT count(*) AS models, (SELECT count(*) FROM kmeans_model_store) AS stored FROM kmeans_models;

DROP TABLE p_pts;
DROP FUNCTION regress_try(text);
DROP ROLE regress_pgkm_alice, regress_pgkm_alice_renamed, regress_pgkm_bob, regress_pgkm_team,
          regress_pgkm_noinherit, regress_pgkm_readers;
