#!/usr/bin/env python3
"""restructure_compare.py: the before/after engine tables of one interleaved GPU log.

    restructure_compare.py LOG

LOG holds gpu_bench runs between "=== BEGIN <build> round <r> ..." and
"=== END <build> round <r> ..." lines, <build> being "before" or "after"
(bench/gpu_restructure_h100.log). For every engine-table shape, each run's
inertia/n, path and launches per iteration must be the same in every run; the
time is compared as mean(after) / mean(before) over the rounds, beside the
same build's round-to-round spread (the noise). A round that ran --papers is
compared with tests/gpu/compare_suite.py's parser (results identical, B5 times).
Prints a Markdown table; exit status 1 when a result differs.
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
import compare_suite  # noqa: E402

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+) \|\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+\S+\s+(\d+) \|.*\|\s+\S+\s+(\S+) \| (\S+)$")


def runs(text):
    """{(build, round): text of that run}."""
    out, cur, buf = {}, None, []
    for line in text.splitlines():
        m = re.match(r"=== BEGIN (before|after) round (\d+)", line)
        if m:
            cur, buf = (m.group(1), int(m.group(2))), []
            continue
        if cur and re.match(r"=== END (before|after) round", line):
            out[cur] = "\n".join(buf)
            cur = None
            continue
        if cur:
            buf.append(line)
    return out


def engine_rows(text):
    rows = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            n, d, k, ms, launches, inertia, path = m.groups()
            rows[(int(n), int(d), int(k))] = {"ms": float(ms), "launches": launches, "inertia": inertia,
                                              "path": path}
    return rows


def short(n):
    return f"{n // 1000000}M" if n % 1000000 == 0 else str(n)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    all_runs = runs(open(sys.argv[1]).read())
    tables = {key: engine_rows(t) for key, t in all_runs.items()}
    tables = {key: rows for key, rows in tables.items() if rows}
    rounds = sorted({r for (b, r) in tables if (("before", r) in tables and ("after", r) in tables)})
    if not rounds:
        print("no round with both engine tables")
        return 1
    shapes = sorted(tables[("before", rounds[0])])
    bad = []
    ratios, noise = [], []
    print("| n | d | k | path | launches/iter | inertia/n | before ms (" + ", ".join(f"r{r}" for r in rounds)
          + ") | after ms (" + ", ".join(f"r{r}" for r in rounds) + ") | after/before | "
          + " | ".join(f"r{r} after/before" for r in rounds) + " |")
    print("|---" * (9 + len(rounds)) + "|")
    for s in shapes:
        got = [tables[(b, r)].get(s) for r in rounds for b in ("before", "after")]
        if any(g is None for g in got):
            bad.append(f"{s}: missing in a run")
            continue
        for f in ("inertia", "path", "launches"):
            vals = {g[f] for g in got}
            if len(vals) > 1:
                bad.append(f"{s}: {f} differs: {sorted(vals)}")
        bt = [tables[("before", r)][s]["ms"] for r in rounds]
        at = [tables[("after", r)][s]["ms"] for r in rounds]
        q = statistics.mean(at) / statistics.mean(bt)
        ratios.append(q)
        if len(rounds) > 1:
            noise += [max(bt) / min(bt), max(at) / min(at)]
        per = [a / b for a, b in zip(at, bt)]
        g = got[0]
        print(f"| {short(s[0])} | {s[1]} | {s[2]} | {g['path']} | {g['launches']} | {g['inertia']} | "
              + ", ".join(f"{x:.3f}" for x in bt) + " | " + ", ".join(f"{x:.3f}" for x in at)
              + f" | {q:.3f} | " + " | ".join(f"{x:.3f}" for x in per) + " |")
    print()
    print(f"engine table: {len(shapes)} shapes x {len(rounds)} rounds per build; "
          f"inertia/n, path and launches identical in every run: {'yes' if not bad else 'NO'}")
    print(f"after/before (mean of rounds): median {statistics.median(ratios):.3f}, "
          f"min {min(ratios):.3f}, max {max(ratios):.3f}")
    if noise:
        print(f"same build, slowest round / fastest round: median {statistics.median(noise):.3f}, "
              f"max {max(noise):.3f}")
    engine_rounds = {r for (_, r) in tables}
    papers = [r for r in sorted({r for (_, r) in all_runs})
              if r not in engine_rounds and ("before", r) in all_runs and ("after", r) in all_runs]
    for r in papers:
        ref, _ = compare_suite.parse(all_runs[("before", r)])
        new, _ = compare_suite.parse(all_runs[("after", r)])
        same, b5 = 0, []
        for key, a in ref.items():
            b = new.get(key)
            if b is None:
                bad.append(f"papers {' '.join(key)}: missing after")
                continue
            if key[0] == "B1" and a["at"] != b["at"]:
                continue    # the CPU engine stopped at another iteration: not comparable
            diff = [f for f in ("inertia", "iterations") if f in a and a[f] != b.get(f)]
            if diff:
                bad.append(f"papers {' '.join(key)}: {diff}: {[a.get(f) for f in diff]} -> {[b.get(f) for f in diff]}")
            else:
                same += 1
            if key[0] == "B5":
                b5.append((key, a["iterations"], a["ms"], b["ms"]))
        print(f"papers (round {r}): {same} results identical before/after")
        for key, its, ma, mb in b5:
            print(f"  B5 k={key[1]} sigma2={key[2]}: {its}, per iteration {ma:.4f} -> {mb:.4f} ms ({mb / ma:.3f})")
    for b in bad:
        print(f"DIFFERENT: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
