"""The SQL examples in README.md run as written.

Every ```sql block of the "SQL usage" section is executed, in order, in a
scratch database, so the README cannot drift from the functions it documents.
"""
import os
import re

import psycopg2
import pytest

from conftest import report

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def sql_blocks():
    text = open(README).read()
    section = text[text.index("## SQL usage"):text.index("### Policies")]
    return re.findall(r"```sql\n(.*?)```", section, re.S)


def test_readme_sql_examples_run(conn):
    blocks = sql_blocks()
    assert len(blocks) >= 5
    with conn.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS pgkm_readme")
        cur.execute("CREATE DATABASE pgkm_readme")
    db = psycopg2.connect(dbname="pgkm_readme")
    db.autocommit = True
    try:
        with db.cursor() as cur:
            for i, block in enumerate(blocks):
                try:
                    cur.execute(block)
                except psycopg2.Error as e:
                    pytest.fail("README SQL block %d failed: %s\n%s" % (i + 1, e, block))
    finally:
        db.close()
        with conn.cursor() as cur:
            cur.execute("DROP DATABASE IF EXISTS pgkm_readme")
    report("README: %d SQL example blocks ran" % len(blocks))
