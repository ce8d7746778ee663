/* pg_kmeans 0.1: k-means clustering of table rows. */
\echo Use "CREATE EXTENSION pg_kmeans" to load this file. \quit

-- Stored models. Clusters are numbered from 0 everywhere; centroids is a
-- k x d array, row c+1 being cluster c. cluster_inertia[c+1] is cluster c's
-- own sum of squared distances; the sum over clusters is inertia. method is
-- the method asked for, method_used what ran in the winning run (for
-- 'auto' its choice, e.g. 'yinyang, then lloyd from iteration 4').
--
-- Who may see and use a model (README, "Models: who can see and use them"):
-- every model has a token, an empty-but-for-a-nonce large object owned by the
-- model's owner. PostgreSQL then tracks the owner by OID: DROP ROLE refuses
-- while the role owns models, REASSIGN OWNED moves them, DROP OWNED drops
-- them, and pg_dump keeps owner and grants (by role name). A model is usable
-- by the roles that have the privileges of its token's owner (so superusers)
-- and by the roles granted SELECT on its token (kmeans_grant_model). The
-- nonce, also kept in the model's row, tells the token apart from a large
-- object created later with the same OID.

-- True when the stored values make a model: k x d finite centroids (and
-- initial centroids, when present), k positive sizes, k finite non-negative
-- cluster inertias and a finite non-negative total. The store's CHECK and
-- the readers (kmeans_predict, kmeans_model_centroids) use the same test.
CREATE FUNCTION kmeans_model_values_ok(
    k integer, d integer, centroids double precision[],
    initial_centroids double precision[], sizes bigint[],
    cluster_inertia double precision[], inertia double precision)
RETURNS boolean
AS 'MODULE_PATHNAME', 'pgkm_kmeans_model_values_ok'
LANGUAGE C IMMUTABLE SECURITY INVOKER PARALLEL SAFE;
COMMENT ON FUNCTION kmeans_model_values_ok(integer, integer, double precision[], double precision[], bigint[], double precision[], double precision)
    IS 'whether stored k-means model values are complete and finite (used by the model store''s CHECK)';

-- True when a model carries what prediction needs: the fit's single-
-- precision buffer units, float4((value - shift) * 2^scale_log2), as the
-- per-column shift (d finite values, or NULL for none) and scale_log2 (in
-- range; NULL only outside kernel k-means: units unknown); and for method
-- 'kernel', and only then, the n x d training rows as clustered (float4),
-- each row's cluster of the final feature-space centroids (-1: none; every
-- cluster has a row) and the k centroid norms ||c||^2 in the rows' units.
CREATE FUNCTION kmeans_model_kernel_ok(
    method text, k integer, d integer, kernel_rows real[],
    kernel_members integer[], kernel_norms double precision[],
    shift double precision[], scale_log2 integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'pgkm_kmeans_model_kernel_ok'
LANGUAGE C IMMUTABLE SECURITY INVOKER PARALLEL SAFE;
COMMENT ON FUNCTION kmeans_model_kernel_ok(text, integer, integer, real[], integer[], double precision[], double precision[], integer)
    IS 'whether a stored k-means model has valid buffer units and exactly the kernel k-means values its method needs (used by the model store''s CHECK)';

-- True when a model's sums' grid is d exponents (1 / the grid step of each
-- column, a power of two, in the buffer's units) or NULL (none kept: kernel
-- k-means, whose data is not put on a grid).
CREATE FUNCTION kmeans_model_grid_ok(d integer, sum_scale_log2 integer[])
RETURNS boolean
AS 'MODULE_PATHNAME', 'pgkm_kmeans_model_grid_ok'
LANGUAGE C IMMUTABLE SECURITY INVOKER PARALLEL SAFE;
COMMENT ON FUNCTION kmeans_model_grid_ok(integer, integer[])
    IS 'whether a stored k-means model''s sums'' grid is d exponents or NULL (used by the model store''s CHECK)';

-- Every model. Only the C functions write it, after their own checks, as
-- this table's owner. SELECT for the database owner, because pg_dump needs it.
CREATE TABLE kmeans_model_store (
    model             text PRIMARY KEY CHECK (model OPERATOR(pg_catalog.<>) ''),
    token             oid NOT NULL UNIQUE,
    nonce             bytea NOT NULL CHECK (pg_catalog.octet_length(nonce) OPERATOR(pg_catalog.=) 16),
    relation          text NOT NULL,
    columns           text[] NOT NULL,
    k                 integer NOT NULL,
    d                 integer NOT NULL,
    method            text NOT NULL,
    method_used       text NOT NULL,
    options           jsonb NOT NULL,
    centroids         double precision[] NOT NULL,
    initial_centroids double precision[],
    sizes             bigint[] NOT NULL,
    cluster_inertia   double precision[] NOT NULL,
    inertia           double precision NOT NULL,
    iterations        integer NOT NULL,
    converged         boolean NOT NULL,
    elapsed_s         double precision NOT NULL,
    device            text NOT NULL,
    n_rows            bigint NOT NULL,
    n_skipped         bigint NOT NULL DEFAULT 0,
    trained_at        timestamptz NOT NULL,
    kernel_rows       real[],
    kernel_members    integer[],
    kernel_norms      double precision[],
    shift             double precision[],
    scale_log2        integer,
    sum_scale_log2    integer[],
    CONSTRAINT kmeans_model_values
    CHECK (@extschema@.kmeans_model_values_ok(k, d, centroids, initial_centroids, sizes,
                                              cluster_inertia, inertia)),
    CONSTRAINT kmeans_model_kernel_values
    CHECK (@extschema@.kmeans_model_kernel_ok(method, k, d, kernel_rows, kernel_members,
                                              kernel_norms, shift, scale_log2)),
    CONSTRAINT kmeans_model_grid
    CHECK (@extschema@.kmeans_model_grid_ok(d, sum_scale_log2))
);
COMMENT ON TABLE kmeans_model_store IS 'pg_kmeans models (private: read them through kmeans_models)';
REVOKE ALL ON kmeans_model_store FROM PUBLIC;
GRANT SELECT ON kmeans_model_store TO pg_database_owner;

-- pg_dump keeps the models (the table belongs to the extension); the tokens
-- are large objects, which pg_dump keeps by default.
SELECT pg_catalog.pg_extension_config_dump('kmeans_model_store', '');

-- The models whose token is still theirs, with the token's owner and ACL.
-- Private: the C functions read it as the store's owner.
CREATE VIEW kmeans_model_owners AS
SELECT s.model, s.token, l.lomowner AS owner, l.lomacl AS acl
FROM @extschema@.kmeans_model_store s
JOIN pg_catalog.pg_largeobject_metadata l ON l.oid OPERATOR(pg_catalog.=) s.token
WHERE EXISTS (SELECT FROM pg_catalog.pg_largeobject p
              WHERE p.loid OPERATOR(pg_catalog.=) s.token
                AND p.pageno OPERATOR(pg_catalog.=) 0
                AND p.data OPERATOR(pg_catalog.=) s.nonce);
REVOKE ALL ON kmeans_model_owners FROM PUBLIC;

-- The models the current role may use. security_barrier: the caller's own
-- conditions run only on rows that passed this view's, so they cannot
-- observe other roles' models. Everyone may read it; nobody may lock it
-- beyond ACCESS SHARE (which blocks nothing pg_kmeans does).
CREATE VIEW kmeans_models WITH (security_barrier) AS
SELECT s.model, o.owner::pg_catalog.regrole AS owner,
       ARRAY(SELECT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'public'::pg_catalog.name
                         ELSE (SELECT r.rolname FROM pg_catalog.pg_roles r
                               WHERE r.oid OPERATOR(pg_catalog.=) a.grantee) END
             FROM pg_catalog.aclexplode(o.acl) a
             WHERE a.privilege_type OPERATOR(pg_catalog.=) 'SELECT'
               AND a.grantee OPERATOR(pg_catalog.<>) o.owner
             ORDER BY 1) AS grantees,
       s.token, s.relation, s.columns, s.k, s.d, s.method, s.method_used, s.options, s.centroids,
       s.initial_centroids, s.sizes, s.cluster_inertia, s.inertia, s.iterations,
       s.converged, s.elapsed_s, s.device, s.n_rows, s.n_skipped, s.trained_at
FROM @extschema@.kmeans_model_owners o
JOIN @extschema@.kmeans_model_store s ON s.model OPERATOR(pg_catalog.=) o.model
WHERE pg_catalog.pg_has_role(o.owner, 'USAGE')
   OR EXISTS (SELECT FROM pg_catalog.aclexplode(o.acl) a
              WHERE a.privilege_type OPERATOR(pg_catalog.=) 'SELECT'
                AND (a.grantee OPERATOR(pg_catalog.=) 0
                     OR pg_catalog.pg_has_role(a.grantee, 'USAGE')));
COMMENT ON VIEW kmeans_models IS 'the k-means models the current role may use: its own, its roles'', and those granted to it';
REVOKE ALL ON kmeans_models FROM PUBLIC;
GRANT SELECT ON kmeans_models TO PUBLIC;

CREATE FUNCTION kmeans(
    relation regclass, columns text[], k integer,
    method text DEFAULT 'lloyd', max_iter integer DEFAULT 300,
    tol double precision DEFAULT 1e-4, init text DEFAULT 'k-means++',
    n_init integer DEFAULT 1, seed bigint DEFAULT 0, device text DEFAULT 'auto',
    kernel text DEFAULT NULL, gamma double precision DEFAULT NULL,
    coef0 double precision DEFAULT NULL, degree integer DEFAULT NULL)
RETURNS TABLE (ctid tid, cluster integer, distance double precision, tableoid oid)
AS 'MODULE_PATHNAME', 'pgkm_kmeans'
LANGUAGE C CALLED ON NULL INPUT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans(regclass, text[], integer, text, integer, double precision, text, integer, bigint, text, text, double precision, double precision, integer)
    IS 'k-means labels: one row per clustered row (ctid, 0-based cluster, Euclidean distance to its centroid, feature-space for method kernel, the row''s table: join back on tableoid and ctid)';

CREATE FUNCTION kmeans_centroids(
    relation regclass, columns text[], k integer,
    method text DEFAULT 'lloyd', max_iter integer DEFAULT 300,
    tol double precision DEFAULT 1e-4, init text DEFAULT 'k-means++',
    n_init integer DEFAULT 1, seed bigint DEFAULT 0, device text DEFAULT 'auto',
    kernel text DEFAULT NULL, gamma double precision DEFAULT NULL,
    coef0 double precision DEFAULT NULL, degree integer DEFAULT NULL)
RETURNS TABLE (cluster integer, centroid double precision[], size bigint, inertia double precision)
AS 'MODULE_PATHNAME', 'pgkm_kmeans_centroids'
LANGUAGE C CALLED ON NULL INPUT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans_centroids(regclass, text[], integer, text, integer, double precision, text, integer, bigint, text, text, double precision, double precision, integer)
    IS 'k-means centroids: one row per cluster (0-based cluster, centroid, size, the cluster''s own sum of squared distances; for method kernel the input-space mean of its rows and feature-space distances)';

CREATE FUNCTION kmeans_fit(
    model text, relation regclass, columns text[], k integer,
    method text DEFAULT 'lloyd', max_iter integer DEFAULT 300,
    tol double precision DEFAULT 1e-4, init text DEFAULT 'k-means++',
    n_init integer DEFAULT 1, seed bigint DEFAULT 0, device text DEFAULT 'auto',
    kernel text DEFAULT NULL, gamma double precision DEFAULT NULL,
    coef0 double precision DEFAULT NULL, degree integer DEFAULT NULL)
RETURNS kmeans_models
AS 'MODULE_PATHNAME', 'pgkm_kmeans_fit'
LANGUAGE C CALLED ON NULL INPUT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans_fit(text, regclass, text[], integer, text, integer, double precision, text, integer, bigint, text, text, double precision, double precision, integer)
    IS 'fit k-means and store the model (a refit of an existing name keeps its owner and grants); returns its kmeans_models row';

CREATE FUNCTION kmeans_predict(model text, features double precision[])
RETURNS integer
AS 'MODULE_PATHNAME', 'pgkm_kmeans_predict'
LANGUAGE C STRICT STABLE SECURITY INVOKER PARALLEL SAFE;
COMMENT ON FUNCTION kmeans_predict(text, double precision[])
    IS '0-based cluster of the nearest centroid of a stored model, in feature space for a kernel model (NULL when a feature is NULL)';

CREATE FUNCTION kmeans_model_centroids(model text)
RETURNS TABLE (cluster integer, centroid double precision[], size bigint, inertia double precision)
AS 'MODULE_PATHNAME', 'pgkm_kmeans_model_centroids'
LANGUAGE C STRICT STABLE SECURITY INVOKER PARALLEL SAFE;
COMMENT ON FUNCTION kmeans_model_centroids(text)
    IS 'the centroids of a stored model, same rows as kmeans_centroids()';

CREATE FUNCTION kmeans_drop_model(model text)
RETURNS void
AS 'MODULE_PATHNAME', 'pgkm_kmeans_drop_model'
LANGUAGE C STRICT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans_drop_model(text)
    IS 'delete a stored model (its owner, members of the owner and superusers may)';

CREATE FUNCTION kmeans_grant_model(model text, grantee text)
RETURNS void
AS 'MODULE_PATHNAME', 'pgkm_kmeans_grant_model'
LANGUAGE C STRICT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans_grant_model(text, text)
    IS 'let a role (or ''public'': every role) use a stored model; its owner, members of the owner and superusers may grant';

CREATE FUNCTION kmeans_revoke_model(model text, grantee text)
RETURNS void
AS 'MODULE_PATHNAME', 'pgkm_kmeans_revoke_model'
LANGUAGE C STRICT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans_revoke_model(text, text)
    IS 'take back what kmeans_grant_model gave';
