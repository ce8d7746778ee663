"""pg_kmeans.threads above the server's usable cores counts as all of them.

Any user may set it (up to 1024), and a run starts that many threads: more
than the cores only wait on each other (k-means++ at 1,024 threads on two
cores took 70 times as long). The progress report names the threads a run
used.
"""
import re

import numpy as np

from conftest import load_table


def threads_used(conn, setting):
    with conn.cursor() as cur:
        cur.execute("SET pg_kmeans.threads = %s" % setting)
        cur.execute("SET pg_kmeans.progress = on")
        del conn.notices[:]
        # k = 256: chunks of 64 rows, so 70,000 rows give work to 1,000 threads and more
        cur.execute("SELECT count(*) FROM kmeans_centroids('pgkm_pytest.threads_setting', "
                    "ARRAY['x1', 'x2'], 256, seed => 1, init => 'random', max_iter => 2, device => 'cpu')")
        cur.execute("RESET pg_kmeans.progress")
        cur.execute("RESET pg_kmeans.threads")
    found = [re.search(r"\((\d+) threads?\)", n) for n in conn.notices]
    used = [int(m.group(1)) for m in found if m]
    assert used, "no progress line names the threads: %r" % conn.notices
    return used[-1]


def test_threads_above_the_cores_count_as_the_cores(conn):
    rng = np.random.default_rng(3)
    load_table(conn, "threads_setting", rng.normal(size=(70000, 2)))
    cores = threads_used(conn, 0)
    assert cores >= 1
    assert threads_used(conn, 1000) == cores
    assert threads_used(conn, cores + 1) == cores
    assert threads_used(conn, 1) == 1
