"""The same call gives the same result whatever scans of the table ran before.

PostgreSQL lets a sequential scan of a table larger than a quarter of
shared_buffers start where another scan of it is (synchronize_seqscans), so
the rows come in another order; k-means++'s sample and random init depend on
that order. pg_kmeans reads from the first block whatever the setting, on
its direct path and through the query it runs under row-level security. The
table here is made just over that size for the cluster's shared_buffers, and
a partial scan (LIMIT) leaves the shared scan position in its middle.
"""
import hashlib

import pytest

CALLS = [
    "SELECT cluster, centroid, size, inertia FROM kmeans_centroids("
    "'pgkm_pytest.syncscan', ARRAY['a', 'b'], 6, seed => 3, max_iter => 5, init => '{init}') ORDER BY cluster",
    "SELECT ctid::text, cluster FROM kmeans('pgkm_pytest.syncscan', ARRAY['a', 'b'], 6, seed => 3, "
    "max_iter => 5, init => '{init}') ORDER BY ctid",
]


def digest(cur, sql):
    cur.execute(sql)
    return hashlib.md5(repr(cur.fetchall()).encode()).hexdigest()


@pytest.fixture(scope="module")
def big_table(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT setting::bigint FROM pg_settings WHERE name = 'shared_buffers'")
        quarter = cur.fetchone()[0] // 4  # pages: scans of larger tables may start mid-table
        cur.execute("SELECT setseed(0.25)")
        # about 30 rows a page with the padding
        cur.execute("CREATE TABLE pgkm_pytest.syncscan AS SELECT random() AS a, random() AS b, "
                    "repeat('x', 220) AS pad FROM generate_series(1, %s)", ((quarter * 5 // 4 + 64) * 30,))
        cur.execute("SELECT pg_relation_size('pgkm_pytest.syncscan') / 8192")
        assert cur.fetchone()[0] > quarter, "the table must be large enough to be scanned in sync"
        cur.execute("SHOW synchronize_seqscans")
        assert cur.fetchone()[0] == "on"
    yield "pgkm_pytest.syncscan"
    with conn.cursor() as cur:
        cur.execute("DROP TABLE pgkm_pytest.syncscan")


@pytest.fixture
def reader(conn, big_table):
    """A role under a row-level security policy: pg_kmeans reads the table through a query."""
    with conn.cursor() as cur:
        cur.execute("DROP ROLE IF EXISTS pgkm_scan_order_reader")
        cur.execute("CREATE ROLE pgkm_scan_order_reader")
        cur.execute("GRANT USAGE ON SCHEMA pgkm_pytest TO pgkm_scan_order_reader")
        cur.execute("GRANT SELECT ON pgkm_pytest.syncscan TO pgkm_scan_order_reader")
        cur.execute("ALTER TABLE pgkm_pytest.syncscan ENABLE ROW LEVEL SECURITY")
        cur.execute("CREATE POLICY everyone ON pgkm_pytest.syncscan USING (true)")
    yield "pgkm_scan_order_reader"
    with conn.cursor() as cur:
        cur.execute("RESET ROLE")
        cur.execute("DROP POLICY everyone ON pgkm_pytest.syncscan")
        cur.execute("ALTER TABLE pgkm_pytest.syncscan DISABLE ROW LEVEL SECURITY")
        cur.execute("REVOKE ALL ON pgkm_pytest.syncscan FROM pgkm_scan_order_reader")
        cur.execute("REVOKE ALL ON SCHEMA pgkm_pytest FROM pgkm_scan_order_reader")
        cur.execute("DROP ROLE pgkm_scan_order_reader")


def same_after_partial_scans(cur, init):
    for call in CALLS:
        sql = call.format(init=init)
        first = digest(cur, sql)
        assert digest(cur, sql) == first
        for limit in (40000, 150000):
            cur.execute("SELECT count(*) FROM (SELECT * FROM pgkm_pytest.syncscan LIMIT %s) s", (limit,))
            assert digest(cur, sql) == first, "after a scan stopped at row %d" % limit
    cur.execute("SHOW synchronize_seqscans")
    assert cur.fetchone()[0] == "on", "the caller's setting is left as it was"


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_same_result_after_a_partial_scan(conn, big_table, init):
    with conn.cursor() as cur:
        same_after_partial_scans(cur, init)


def test_same_result_through_the_query_path(conn, reader):
    with conn.cursor() as cur:
        cur.execute("SET ROLE " + reader)
        same_after_partial_scans(cur, "random")
        cur.execute("RESET ROLE")
