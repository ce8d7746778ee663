/* pg_kmeans 0.1: k-means clustering of table rows. */
\echo Use "CREATE EXTENSION pg_kmeans" to load this file. \quit

-- Stored models. One row per model name; kmeans_fit() inserts or replaces.
-- Clusters are numbered from 0 everywhere; centroids is a k x d array, row
-- c+1 being cluster c. cluster_inertia[c+1] is cluster c's own sum of squared
-- distances; the sum over clusters is inertia.
CREATE TABLE kmeans_models (
    model             text PRIMARY KEY CHECK (model <> ''),
    owner             name NOT NULL DEFAULT current_user,
    relation          text NOT NULL,
    columns           text[] NOT NULL,
    k                 integer NOT NULL CHECK (k >= 1),
    d                 integer NOT NULL CHECK (d >= 1),
    method            text NOT NULL,
    options           jsonb NOT NULL,
    centroids         double precision[] NOT NULL
                      CHECK (array_ndims(centroids) = 2
                             AND array_length(centroids, 1) = k
                             AND array_length(centroids, 2) = d),
    initial_centroids double precision[],
    sizes             bigint[] NOT NULL CHECK (cardinality(sizes) = k),
    cluster_inertia   double precision[] NOT NULL CHECK (cardinality(cluster_inertia) = k),
    inertia           double precision NOT NULL,
    iterations        integer NOT NULL,
    converged         boolean NOT NULL,
    elapsed_s         double precision NOT NULL,
    device            text NOT NULL,
    n_rows            bigint NOT NULL,
    n_skipped         bigint NOT NULL DEFAULT 0,
    trained_at        timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE kmeans_models IS 'k-means models stored by kmeans_fit(); readable by everyone, changed only by each model''s owner';

-- pg_dump keeps the models (the table belongs to the extension).
SELECT pg_catalog.pg_extension_config_dump('kmeans_models', '');

-- Everyone may fit, read and use models (the functions are SECURITY
-- INVOKER, so they need these privileges); row-level security lets only a
-- model's owner replace or drop it.
GRANT SELECT, INSERT, UPDATE, DELETE ON kmeans_models TO PUBLIC;
ALTER TABLE kmeans_models ENABLE ROW LEVEL SECURITY;
CREATE POLICY kmeans_models_read ON kmeans_models FOR SELECT USING (true);
CREATE POLICY kmeans_models_insert ON kmeans_models FOR INSERT
    WITH CHECK (owner = current_user);
CREATE POLICY kmeans_models_update ON kmeans_models FOR UPDATE
    USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY kmeans_models_delete ON kmeans_models FOR DELETE
    USING (owner = current_user);

CREATE FUNCTION kmeans(
    relation regclass, columns text[], k integer,
    method text DEFAULT 'lloyd', max_iter integer DEFAULT 300,
    tol double precision DEFAULT 1e-4, init text DEFAULT 'k-means++',
    n_init integer DEFAULT 1, seed bigint DEFAULT 0, device text DEFAULT 'auto')
RETURNS TABLE (ctid tid, cluster integer, distance double precision, tableoid oid)
AS 'MODULE_PATHNAME', 'pgkm_kmeans'
LANGUAGE C STRICT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans(regclass, text[], integer, text, integer, double precision, text, integer, bigint, text)
    IS 'k-means labels: one row per clustered row (ctid, 0-based cluster, Euclidean distance to its centroid, the row''s table: join back on tableoid and ctid)';

CREATE FUNCTION kmeans_centroids(
    relation regclass, columns text[], k integer,
    method text DEFAULT 'lloyd', max_iter integer DEFAULT 300,
    tol double precision DEFAULT 1e-4, init text DEFAULT 'k-means++',
    n_init integer DEFAULT 1, seed bigint DEFAULT 0, device text DEFAULT 'auto')
RETURNS TABLE (cluster integer, centroid double precision[], size bigint, inertia double precision)
AS 'MODULE_PATHNAME', 'pgkm_kmeans_centroids'
LANGUAGE C STRICT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans_centroids(regclass, text[], integer, text, integer, double precision, text, integer, bigint, text)
    IS 'k-means centroids: one row per cluster (0-based cluster, centroid, size, the cluster''s own sum of squared distances)';

CREATE FUNCTION kmeans_fit(
    model text, relation regclass, columns text[], k integer,
    method text DEFAULT 'lloyd', max_iter integer DEFAULT 300,
    tol double precision DEFAULT 1e-4, init text DEFAULT 'k-means++',
    n_init integer DEFAULT 1, seed bigint DEFAULT 0, device text DEFAULT 'auto')
RETURNS kmeans_models
AS 'MODULE_PATHNAME', 'pgkm_kmeans_fit'
LANGUAGE C STRICT VOLATILE SECURITY INVOKER PARALLEL UNSAFE;
COMMENT ON FUNCTION kmeans_fit(text, regclass, text[], integer, text, integer, double precision, text, integer, bigint, text)
    IS 'fit k-means and store (or replace) the model in kmeans_models; returns the stored row';

CREATE FUNCTION kmeans_predict(model text, features double precision[])
RETURNS integer
AS 'MODULE_PATHNAME', 'pgkm_kmeans_predict'
LANGUAGE C STRICT STABLE SECURITY INVOKER PARALLEL SAFE;
COMMENT ON FUNCTION kmeans_predict(text, double precision[])
    IS '0-based cluster of the nearest centroid of a stored model (NULL when a feature is NULL)';

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
    IS 'delete a stored model (only its owner may)';
