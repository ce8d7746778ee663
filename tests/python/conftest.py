"""Shared fixtures for the Python correctness comparison.

The tests connect with psycopg2 using the usual libpq variables (PGHOST,
PGPORT, PGUSER, PGDATABASE; scripts/test.sh exports them) and keep their
tables in the schema pgkm_pytest. Data is stored as `real` so that the
float32 buffer pg_kmeans clusters and the float64 array given to
scikit-learn hold exactly the same values.
"""
import io

import numpy as np
import psycopg2
import pytest

REPORT = []  # lines printed in the terminal summary (ARI, inertia ratios)


def report(line):
    REPORT.append(line)


def pytest_terminal_summary(terminalreporter):
    if REPORT:
        terminalreporter.section("pg_kmeans correctness report")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def conn():
    c = psycopg2.connect("")
    c.autocommit = True
    with c.cursor() as cur:
        cur.execute("SET client_min_messages = warning")
        cur.execute("CREATE EXTENSION IF NOT EXISTS pg_kmeans")
        cur.execute("DROP SCHEMA IF EXISTS pgkm_pytest CASCADE")
        cur.execute("CREATE SCHEMA pgkm_pytest")
    yield c
    with c.cursor() as cur:
        cur.execute("DROP SCHEMA IF EXISTS pgkm_pytest CASCADE")
    c.close()


def load_table(conn, name, X, labels=None, as_array=False):
    """Create pgkm_pytest.<name>(id, [label], features) from X (rounded to float32).

    Returns (qualified table name, feature column list for pg_kmeans).
    Features go in columns x1..xd, or one real[] column v when as_array.
    """
    X = np.asarray(X, dtype=np.float32)
    n, d = X.shape
    table = "pgkm_pytest." + name
    cols = ["v"] if as_array else ["x%d" % (j + 1) for j in range(d)]
    defs = ["id integer"]
    if labels is not None:
        defs.append("label integer")
    defs += ["v real[]"] if as_array else ["%s real" % c for c in cols]
    buf = io.StringIO()
    for i in range(n):
        fields = [str(i)]
        if labels is not None:
            fields.append(str(int(labels[i])))
        vals = ["%.9g" % x for x in X[i]]  # 9 significant digits round-trip float32
        fields += ["{" + ",".join(vals) + "}"] if as_array else vals
        buf.write("\t".join(fields) + "\n")
    buf.seek(0)
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS %s" % table)
        cur.execute("CREATE TABLE %s (%s)" % (table, ", ".join(defs)))
        cur.copy_expert("COPY %s FROM STDIN" % table, buf)
        cur.execute("ANALYZE %s" % table)
    return table, cols


def read_back(conn, table, cols):
    """The table's features as float64, in id order (casts are exact)."""
    with conn.cursor() as cur:
        if cols == ["v"]:
            cur.execute("SELECT v::float8[] FROM %s ORDER BY id" % table)
            return np.array([r[0] for r in cur.fetchall()], dtype=np.float64)
        cur.execute("SELECT %s FROM %s ORDER BY id" % (", ".join(c + "::float8" for c in cols), table))
        return np.array(cur.fetchall(), dtype=np.float64)


def sql_array(cols):
    return "ARRAY[%s]" % ", ".join("'%s'" % c for c in cols)
