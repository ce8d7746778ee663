"""pg_dump and restore of a database with stored models.

A database owned by a non-superuser holds models of several roles, granted
to a role and to PUBLIC. pg_dump with default options, run by the database
owner, by a pg_read_all_data member and by a superuser, must succeed; a
superuser restores each dump into a new database, and the restore must hold
the same models (every column, centroids exactly), the same owners and
grants, the same predictions, and the same privacy (what each role sees).
"""
import subprocess

import pytest

from conftest import report
from model_env import cluster, connect, execute, pg_bin, sqlstate_of  # noqa: F401

MODELS = ("SELECT model, owner::text, grantees, token, relation, columns, k, d, method, "
          "options::text, centroids, initial_centroids, sizes, cluster_inertia, inertia, "
          "iterations, converged, elapsed_s, device, n_rows, n_skipped, trained_at "
          "FROM kmeans_models ORDER BY model")
PREDICT = ("SELECT model, array_agg(kmeans_predict(model, ARRAY[x, y]) ORDER BY id) "
           "FROM kmeans_models, pts WHERE d = 2 GROUP BY model ORDER BY model")


def populate(db, alice, bob):
    a = connect(db, alice)
    execute(a, "SELECT kmeans_fit('alices', 'pts', ARRAY['x', 'y'], 3, seed => 1)")
    execute(a, "SELECT kmeans_grant_model('alices', %s)", (bob,))
    execute(a, "SELECT kmeans_fit('for_all', 'pts', ARRAY['x', 'y'], 2, seed => 2)")
    execute(a, "SELECT kmeans_grant_model('for_all', 'public')")
    execute(connect(db, bob), "SELECT kmeans_fit('bobs', 'pts', ARRAY['x', 'y', 'z'], 4, init => 'random')")
    execute(connect(db), "SELECT kmeans_fit('superusers', 'pts', ARRAY['y'], 2)")


def seen_by(db, role):
    return [r[0] for r in execute(connect(db, role), "SELECT model FROM kmeans_models ORDER BY model")]


def run(args, **kw):
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)
    assert out.returncode == 0, "%s failed: %s" % (args[0], out.stderr)
    assert "error" not in out.stderr.lower(), out.stderr
    return out


@pytest.mark.parametrize("dumper", ["dbowner", "readalldata", "superuser"])
def test_dump_restore_keeps_models_owners_grants(conn, cluster, tmp_path, dumper):
    dbo, alice, bob, eve = (cluster.role(n) for n in ("dbo", "alice", "bob", "eve"))
    reader = cluster.role("reader", "LOGIN IN ROLE pg_read_all_data")
    src = cluster.database("dump_src", owner=dbo)
    populate(src, alice, bob)
    user = {"dbowner": dbo, "readalldata": reader, "superuser": "postgres"}[dumper]
    before = execute(connect(src), MODELS)
    assert len(before) == 4

    # Default options: plain SQL restored with psql, or the custom format with pg_restore.
    dump = str(tmp_path / "dump")
    fmt = ["-Fc"] if dumper != "superuser" else []
    run([pg_bin("pg_dump"), "-U", user, "-f", dump] + fmt + [src])
    dst = cluster.database("dump_dst", owner=dbo, extension=False)
    if fmt:
        run([pg_bin("pg_restore"), "-U", "postgres", "-d", dst, dump])
    else:
        run([pg_bin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-U", "postgres", "-d", dst, "-f", dump])

    assert execute(connect(dst), MODELS) == before
    assert execute(connect(dst), PREDICT) == execute(connect(src), PREDICT)
    for role in (alice, bob, eve, dbo):
        assert seen_by(dst, role) == seen_by(src, role), role
    assert seen_by(dst, eve) == ["for_all"]
    assert seen_by(dst, bob) == ["alices", "bobs", "for_all"]
    # Ownership is still enforced after the restore.
    assert sqlstate_of(connect(dst, bob), "SELECT kmeans_drop_model('alices')") == "42501"
    assert sqlstate_of(connect(dst, eve), "SELECT * FROM kmeans_model_centroids('bobs')") == "42704"
    execute(connect(dst, alice), "SELECT kmeans_drop_model('alices')")
    report("models: pg_dump by %s and restore kept %d models, owners and grants" % (dumper, len(before)))
