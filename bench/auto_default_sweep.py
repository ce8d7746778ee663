#!/usr/bin/env python3
"""
auto_default_sweep.py: is method 'auto' ever slower than 'lloyd' with the
SQL defaults (k-means++ init, tol 1e-4, max_iter 300)? Issue 11 makes 'auto'
the default only if it never is by more than 5 %.

Runs build/bench/engine_file_bench (the CPU engine, no SQL) with
PGKM_BENCH_METHOD=lloyd and =auto on the same rows, alternated, ROUNDS
rounds (the order flips each round), at each thread count, and prints per
shape the iterations, each method's best total time (create .. result:
statistics, k-means++, iterations, final assignment) and the median over
rounds of lloyd's total / auto's (above 1: auto faster). Both methods must
give the same labels (hash), iterations and inertia, or the row says so.

  python3 bench/auto_default_sweep.py [--threads 16,2] [--rounds 3]
      [--exe build/bench/engine_file_bench] [--data-dir /tmp/pgkm-auto-sweep]
      [--set full|quick] [--shapes "n,d,k ..."] [--kinds blobs,uniform]
      [--device cpu|gpu] [--out runs.jsonl]

--device gpu runs the CUDA plugin named by PGKM_CUDA_PLUGIN (threads are
then only the CPU's k-means++ and statistics).

Data (numpy, seeded, written once into --data-dir as float32 files):
blobs (k centres uniform in [-10, 10]^d, unit spread: clusters to find) and
uniform (every feature uniform in [-10, 10]: no clusters, the worst case for
pruning).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

# (n, d, k): issue 13's shapes, then the edges of auto's choices: k = 4
# (the smallest it prunes), k = 16 (Yinyang's smallest), d = 6-8 (Lloyd's
# direct kernel below), small n, large k.
FULL = [
    (1000000, 2, 8), (1000000, 16, 64), (200000, 128, 256), (100000, 768, 100),
    (245760, 32, 32), (200000, 8, 4), (200000, 8, 16), (200000, 6, 32),
    (20000, 16, 64), (2000, 16, 16), (100000, 32, 1024), (500000, 64, 256),
]
QUICK = [(245760, 32, 32), (200000, 8, 16), (20000, 16, 64), (2000, 16, 16)]


def data_file(data_dir, kind, n, d, k):
    path = os.path.join(data_dir, f"{kind}_n{n}_d{d}_k{k}.f32")
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(n * 1000003 + d * 1009 + k)
    if kind == "blobs":
        centres = rng.uniform(-10, 10, size=(k, d))
        x = centres[rng.integers(0, k, size=n)] + rng.standard_normal((n, d))
    else:
        x = rng.uniform(-10, 10, size=(n, d))
    os.makedirs(data_dir, exist_ok=True)
    x.astype(np.float32).tofile(path + ".tmp")
    os.replace(path + ".tmp", path)
    return path


def run(exe, path, n, d, k, threads, method, device):
    env = dict(os.environ, PGKM_BENCH_METHOD=method, PGKM_BENCH_DEVICE=device)
    out = subprocess.run([exe, path, str(n), str(d), str(k), str(threads), "300", "1e-4", "pp"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--exe", default="build/bench/engine_file_bench")
    ap.add_argument("--data-dir", default="/tmp/pgkm-auto-sweep")
    ap.add_argument("--set", default="full", choices=["full", "quick"])
    ap.add_argument("--kinds", default="blobs,uniform")
    ap.add_argument("--out", default="")
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--shapes", default="", help="n,d,k ... instead of --set's")
    a = ap.parse_args()
    shapes = FULL if a.set == "full" else QUICK
    if a.shapes:
        shapes = [tuple(int(v) for v in sh.split(",")) for sh in a.shapes.split()]
    log = open(a.out, "a") if a.out else None
    print("| n x d, k | data | threads | its | lloyd total s | auto total s | lloyd/auto (median; per round) "
          "| same result | auto ran |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = None
    for n, d, k in shapes:
        for kind in a.kinds.split(","):
            path = data_file(a.data_dir, kind, n, d, k)
            for threads in [int(t) for t in a.threads.split(",")]:
                runs = {"lloyd": [], "auto": []}
                for r in range(a.rounds):
                    order = ["lloyd", "auto"] if r % 2 == 0 else ["auto", "lloyd"]
                    for m in order:
                        j = run(a.exe, path, n, d, k, threads, m, a.device)
                        j.update(method=m, round=r, threads=threads, data=kind, n=n, d=d, device=a.device)
                        runs[m].append(j)
                        if log:
                            log.write(json.dumps(j) + "\n")
                            log.flush()
                lt = [j["total_s"] for j in runs["lloyd"]]
                at = [j["total_s"] for j in runs["auto"]]
                ratios = [x / y for x, y in zip(lt, at)]
                med = statistics.median(ratios)
                same = all(x["labels_hash"] == y["labels_hash"] and x["iterations"] == y["iterations"]
                           and x["inertia"] == y["inertia"] for x in runs["lloyd"] for y in runs["auto"])
                j0 = runs["auto"][0]
                print(f"| {n:,} x {d}, {k} | {kind} | {threads} | {j0['iterations']} | {min(lt):.4f} | "
                      f"{min(at):.4f} | **{med:.3f}**; {', '.join(f'{x:.2f}' for x in ratios)} | "
                      f"{'yes' if same else 'NO'} | {j0['method_used']} |")
                sys.stdout.flush()
                if worst is None or med < worst[0]:
                    worst = (med, n, d, k, kind, threads)
    if worst:
        print(f"\nlowest median lloyd/auto: {worst[0]:.3f} at n={worst[1]}, d={worst[2]}, k={worst[3]}, "
              f"{worst[4]}, {worst[5]} threads")


if __name__ == "__main__":
    main()
