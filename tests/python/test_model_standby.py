"""Stored models on a hot standby.

A standby made with pg_basebackup from the test server: kmeans_fit,
kmeans_drop_model and kmeans_grant_model fail at once with 25006, before
kmeans_fit reads the table (the scan's "skipped" NOTICE never comes), and
kmeans_predict and kmeans_model_centroids work there. Needs the server on
this machine (PGHOST a socket folder owned by the server's OS user).
"""
import os
import pwd
import shutil
import subprocess
import time

import psycopg2
import pytest

from conftest import report
from model_env import cluster, connect, execute, pg_bin  # noqa: F401


def as_server_user(args, owner):
    if os.geteuid() == 0 and owner != "root":
        args = ["runuser", "-u", owner, "--"] + args
    return subprocess.run(args, capture_output=True, text=True, timeout=120, cwd="/")


def test_hot_standby_refuses_writes_before_scanning(conn, cluster):
    host = os.environ.get("PGHOST", "")
    if not host.startswith("/") or not os.path.isdir(host):
        pytest.skip("the server is not reachable through a local socket folder")
    owner = pwd.getpwuid(os.stat(host).st_uid).pw_name
    if os.geteuid() != 0 and owner != pwd.getpwuid(os.geteuid()).pw_name:
        pytest.skip("cannot run a standby as the server's OS user %s" % owner)
    db = cluster.database("standby")
    primary = connect(db)
    execute(primary, "INSERT INTO pts VALUES (0, NULL, 1, 1)")
    execute(primary, "SELECT kmeans_fit('on_primary', 'pts', ARRAY['x', 'y'], 3, seed => 1)")
    expected = execute(primary, "SELECT * FROM kmeans_model_centroids('on_primary') ORDER BY cluster")

    data = os.path.join(host, "standby")
    port = str(int(os.environ.get("PGPORT", "5432")) + 1)
    shutil.rmtree(data, ignore_errors=True)
    out = as_server_user([pg_bin("pg_basebackup"), "-h", host, "-p", os.environ.get("PGPORT", "5432"),
                          "-U", "postgres", "-D", data, "-R", "-X", "stream", "-c", "fast"], owner)
    assert out.returncode == 0, out.stderr
    out = as_server_user([pg_bin("pg_ctl"), "-D", data, "-l", os.path.join(data, "standby.log"),
                          "-w", "-t", "60", "-o", "-p %s -k %s -c listen_addresses=''" % (port, data),
                          "start"], owner)
    assert out.returncode == 0, out.stderr + out.stdout
    try:
        standby = None
        for _ in range(100):
            try:
                standby = psycopg2.connect(host=data, port=port, dbname=db, user="postgres")
                break
            except psycopg2.OperationalError:
                time.sleep(0.1)
        assert standby is not None
        standby.autocommit = True
        assert execute(standby, "SELECT pg_is_in_recovery()") == [(True,)]
        assert execute(standby, "SELECT * FROM kmeans_model_centroids('on_primary') ORDER BY cluster") == expected
        assert execute(standby, "SELECT kmeans_predict('on_primary', ARRAY[10, 0.2]::float8[])") == \
            execute(primary, "SELECT kmeans_predict('on_primary', ARRAY[10, 0.2]::float8[])")
        for sql in ["SELECT kmeans_fit('on_standby', 'pts', ARRAY['x', 'y'], 3)",
                    "SELECT kmeans_fit('on_primary', 'pts', ARRAY['x', 'y'], 3)",
                    "SELECT kmeans_drop_model('on_primary')",
                    "SELECT kmeans_grant_model('on_primary', 'public')"]:
            del standby.notices[:]
            with pytest.raises(psycopg2.Error) as err:
                execute(standby, sql)
            assert err.value.pgcode == "25006", sql
            assert "read-only transaction" in str(err.value), str(err.value)
            assert standby.notices == [], standby.notices
        standby.close()
    finally:
        as_server_user([pg_bin("pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"], owner)
        shutil.rmtree(data, ignore_errors=True)
    report("models: on a hot standby kmeans_fit failed with 25006 before scanning; predict worked")
