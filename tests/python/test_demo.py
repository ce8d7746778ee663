"""scripts/demo.sql (what scripts/demo.sh shows a newcomer) runs and finds the blobs.

It runs in a scratch database; the adjusted Rand index it prints against the
five true blobs must be >= 0.99, and every section must have produced rows.
"""
import os
import re
import subprocess

import psycopg2

from conftest import report

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "demo.sql")


def test_demo_sql(conn):
    with conn.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS pgkm_demo")
        cur.execute("CREATE DATABASE pgkm_demo")
    try:
        env = dict(os.environ, PGDATABASE="pgkm_demo")
        out = subprocess.run(["psql", "-X", "-q", "-f", DEMO], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        m = re.search(r"adjusted_rand_index\s*\n-+\s*\n\s*([0-9.]+)", out.stdout)
        assert m, out.stdout
        ari = float(m.group(1))
        report("demo.sql: 100,000 points, 5 blobs, adjusted Rand index %.6f" % ari)
        assert ari >= 0.99
        assert "demo_model | 5 | 4" in out.stdout
        # kmeans_centroids printed five clusters: "  c | {x,y,z,w} | size | inertia"
        assert len(re.findall(r"^\s+[0-4] \| \{[-0-9.,]+\}\s+\| +\d+ \|", out.stdout, re.M)) == 5, out.stdout
    finally:
        with conn.cursor() as cur:
            cur.execute("DROP DATABASE IF EXISTS pgkm_demo")
