"""Scratch databases and login roles for the stored-model tests.

The server trusts local connections (scripts/pg-cluster.sh), so a test can
connect as any role it created. Roles are cluster-wide: each test module uses
its own prefix and drops its roles (after its databases) when it ends.
"""
import os
import subprocess
import threading
import time

import psycopg2
import pytest


def pg_bin(name):
    """A client program of the server's version (PG_CONFIG's, as `make install` used)."""
    pg_config = os.environ.get("PG_CONFIG", "pg_config")
    bindir = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True,
                            check=True).stdout.strip()
    return os.path.join(bindir, name)


def connect(dbname, user=None, autocommit=True):
    c = psycopg2.connect(dbname=dbname, user=user) if user else psycopg2.connect(dbname=dbname)
    c.autocommit = autocommit
    return c


def execute(c, sql, args=None):
    with c.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall() if cur.description else None


def sqlstate_of(c, sql, args=None):
    """The SQLSTATE the statement fails with (None when it succeeds)."""
    try:
        execute(c, sql, args)
    except psycopg2.Error as e:
        return e.pgcode
    return None


class Cluster:
    """Creates roles and databases, and removes them again in reverse order."""

    def __init__(self, admin, prefix):
        self.admin = admin
        self.prefix = prefix
        self.roles = []
        self.dbs = []

    def role(self, name, options="LOGIN"):
        full = self.prefix + name
        execute(self.admin, "DROP ROLE IF EXISTS %s" % full)
        execute(self.admin, "CREATE ROLE %s %s" % (full, options))
        self.roles.append(full)
        return full

    def database(self, name, owner=None, extension=True):
        full = self.prefix + name
        execute(self.admin, "DROP DATABASE IF EXISTS %s" % full)
        execute(self.admin, "CREATE DATABASE %s%s" % (full, " OWNER " + owner if owner else ""))
        self.dbs.append(full)
        if extension:
            c = connect(full)
            execute(c, "CREATE EXTENSION pg_kmeans")
            execute(c, "CREATE TABLE pts AS SELECT i AS id, (i % 3) * 10 + (i % 7) * 0.1 AS x, "
                       "(i % 5) * 0.1 AS y, (i % 4) * 0.5 AS z FROM generate_series(1, 300) i")
            execute(c, "GRANT SELECT ON pts TO PUBLIC")
            c.close()
        return full

    def close(self):
        for db in reversed(self.dbs):
            execute(self.admin, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % db)
        for role in reversed(self.roles):
            execute(self.admin, "DROP ROLE IF EXISTS %s" % role)


@pytest.fixture
def cluster(conn):
    c = Cluster(conn, "pgkm_pyt_")
    yield c
    c.close()


def wait_until_waiting(admin, pid, timeout=10.0):
    """Until backend pid waits on a lock (so the race the test sets up is real)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if execute(admin, "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                   (pid,)) == [(True,)]:
            return
        time.sleep(0.02)
    raise AssertionError("backend %d never waited on a lock" % pid)


class Background(threading.Thread):
    """Runs one statement on its own connection; result or SQLSTATE in .outcome."""

    def __init__(self, c, sql, args=None):
        super().__init__(daemon=True)
        self.c, self.sql, self.args = c, sql, args
        self.pid = execute(c, "SELECT pg_backend_pid()")[0][0]
        self.outcome = None

    def run(self):
        try:
            self.outcome = ("ok", execute(self.c, self.sql, self.args))
        except psycopg2.Error as e:
            self.outcome = ("error", e.pgcode, str(e))


def outcome_after_commit(admin, holder, statement):
    """Start statement (a Background), wait until it waits on holder's locks,
    commit holder, and return the statement's outcome."""
    statement.start()
    wait_until_waiting(admin, statement.pid)
    holder.commit()
    statement.join(30)
    return statement.outcome


def outcome_after_change(statement, change):
    """Start statement (a Background loop), let it run, make the change from
    another session while it runs, and return the statement's outcome."""
    statement.start()
    time.sleep(0.5)
    assert statement.outcome is None, statement.outcome
    change()
    statement.join(30)
    return statement.outcome


def failed_with(outcome, sqlstate):
    return outcome is not None and outcome[0] == "error" and outcome[1] == sqlstate
