"""Stored models under concurrent sessions.

- Two concurrent kmeans_drop_model of one model: the second fails with 42704.
- kmeans_predict in a PL/pgSQL loop under READ COMMITTED uses the model each
  statement's snapshot sees: another session's committed refit (2 -> 3
  features) and revoke take effect inside the loop.
- Two roles fitting one new name at once: the second gets 42501 and the
  first role's model stays as fitted; two sessions of one role: the second
  refits the model, leaving one token.
- No role can block another role's fit, predict, grant or drop: whatever
  locks it may take, the owner's calls succeed under lock_timeout.
"""
from conftest import report
from model_env import (Background, cluster, connect, execute, failed_with,  # noqa: F401
                       outcome_after_change, outcome_after_commit, sqlstate_of)

FIT2 = "SELECT k FROM kmeans_fit(%s, 'pts', ARRAY['x', 'y'], 3, seed => 1)"
FIT3 = "SELECT k FROM kmeans_fit(%s, 'pts', ARRAY['x', 'y', 'z'], 4, seed => 1)"


def test_concurrent_drop_second_gets_42704(conn, cluster):
    db = cluster.database("conc_drop")
    alice = cluster.role("alice")
    a1, a2 = connect(db, alice), connect(db, alice)
    execute(a1, FIT2, ("m",))
    a1.autocommit = False
    execute(a1, "SELECT kmeans_drop_model('m')")
    outcome = outcome_after_commit(conn, a1, Background(a2, "SELECT kmeans_drop_model('m')"))
    assert failed_with(outcome, "42704"), outcome
    assert execute(connect(db), "SELECT count(*) FROM kmeans_model_store") == [(0,)]
    report("models: of two concurrent drops the second got 42704")


PREDICT_LOOP = """
DO $$
DECLARE
  dd integer;
  c integer;
BEGIN
  FOR i IN 1..800 LOOP
    -- one statement, one snapshot: d and the model predict uses agree
    SELECT d, kmeans_predict('refit', array_fill(1::float8, ARRAY[d])) INTO dd, c
    FROM kmeans_models WHERE model = 'refit';
    IF dd = 3 THEN
      RETURN;
    END IF;
    PERFORM pg_sleep(0.02);
  END LOOP;
  RAISE EXCEPTION 'the loop never saw the refit';
END $$"""


def test_predict_sees_refit_committed_during_a_loop(conn, cluster):
    db = cluster.database("conc_refit")
    alice = cluster.role("alice")
    loop_conn, refit_conn = connect(db, alice), connect(db, alice)
    execute(refit_conn, FIT2, ("refit",))
    # The loop predicts with the 2-feature model many times before the refit.
    outcome = outcome_after_change(Background(loop_conn, PREDICT_LOOP),
                                   lambda: execute(refit_conn, FIT3, ("refit",)))
    assert outcome is not None and outcome[0] == "ok", outcome
    report("models: a PL/pgSQL predict loop picked up a refit committed by another session")


REVOKED_LOOP = """
DO $$
DECLARE
  c integer;
BEGIN
  FOR i IN 1..800 LOOP
    c := kmeans_predict('shared', ARRAY[1, 1]::float8[]);
    PERFORM pg_sleep(0.02);
  END LOOP;
END $$"""


def test_predict_loses_a_model_revoked_during_a_loop(conn, cluster):
    db = cluster.database("conc_revoke")
    alice, bob = cluster.role("alice"), cluster.role("bob")
    owner = connect(db, alice)
    execute(owner, FIT2, ("shared",))
    execute(owner, "SELECT kmeans_grant_model('shared', %s)", (bob,))
    outcome = outcome_after_change(Background(connect(db, bob), REVOKED_LOOP),
                                   lambda: execute(owner, "SELECT kmeans_revoke_model('shared', %s)", (bob,)))
    assert failed_with(outcome, "42704"), outcome


def test_two_roles_fitting_one_new_name(conn, cluster):
    db = cluster.database("conc_fit")
    alice, eve = cluster.role("alice"), cluster.role("eve")
    a, e = connect(db, alice, autocommit=False), connect(db, eve)
    execute(a, FIT3, ("race",))  # not committed yet: Eve's pre-check sees no model
    outcome = outcome_after_commit(conn, a, Background(e, FIT2, ("race",)))
    assert failed_with(outcome, "42501"), outcome
    assert execute(connect(db), "SELECT owner::text, k, d FROM kmeans_models") == [(alice, 4, 3)]


def test_one_role_fitting_one_new_name_twice(conn, cluster):
    db = cluster.database("conc_refit_race")
    alice = cluster.role("alice")
    a1, a2 = connect(db, alice, autocommit=False), connect(db, alice)
    execute(a1, FIT3, ("race",))
    # The second fit finds the name taken once the first commits, and refits it.
    outcome = outcome_after_commit(conn, a1, Background(a2, FIT2, ("race",)))
    assert outcome == ("ok", [(3,)]), outcome
    admin = connect(db)
    assert execute(admin, "SELECT owner::text, k, d FROM kmeans_models") == [(alice, 3, 2)]
    # The token the second fit made for its insert was unlinked: one model, one token.
    assert execute(admin, "SELECT count(*) FROM pg_largeobject_metadata WHERE lomowner = %s::regrole",
                   (alice,)) == [(1,)]


def test_no_role_blocks_the_owner(conn, cluster):
    db = cluster.database("conc_block")
    alice, eve = cluster.role("alice"), cluster.role("eve")
    owner = connect(db, alice)
    execute(owner, FIT2, ("mine",))
    execute(owner, "SELECT kmeans_grant_model('mine', %s)", (eve,))
    # Eve takes every lock she can on what pg_kmeans uses, and holds them.
    hold = connect(db, eve, autocommit=False)
    for sql in ["LOCK TABLE kmeans_models IN ACCESS EXCLUSIVE MODE",
                "LOCK TABLE kmeans_models IN SHARE MODE",
                "LOCK TABLE kmeans_model_store IN ACCESS SHARE MODE",
                "LOCK TABLE pg_largeobject_metadata IN SHARE MODE",
                "SELECT * FROM kmeans_models FOR KEY SHARE"]:
        execute(hold, "SAVEPOINT s")
        assert sqlstate_of(hold, sql) == "42501", sql
        execute(hold, "ROLLBACK TO SAVEPOINT s")
    execute(hold, "LOCK TABLE kmeans_models IN ACCESS SHARE MODE")
    execute(hold, "LOCK TABLE pg_largeobject_metadata IN ACCESS SHARE MODE")
    assert execute(hold, "SELECT count(*) FROM kmeans_models") == [(1,)]
    assert execute(hold, "SELECT kmeans_predict('mine', ARRAY[1, 1]::float8[]) IS NOT NULL") == [(True,)]
    execute(hold, "SELECT k FROM kmeans_fit('evesown', 'pts', ARRAY['x'], 2)")
    # The owner's calls go through while Eve's transaction stays open.
    execute(owner, "SET lock_timeout = '3s'")
    execute(owner, FIT3, ("mine",))
    execute(owner, FIT2, ("another",))
    assert execute(owner, "SELECT kmeans_predict('mine', ARRAY[1, 1, 1]::float8[]) IS NOT NULL") == [(True,)]
    execute(owner, "SELECT kmeans_revoke_model('mine', %s)", (eve,))
    execute(owner, "SELECT kmeans_drop_model('another')")
    execute(owner, "SELECT kmeans_drop_model('mine')")
    hold.rollback()
    report("models: the owner fitted, predicted, revoked and dropped while another role held its locks")
