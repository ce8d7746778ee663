#!/usr/bin/env python3
"""compare_suite.py: a GPU suite run against a reference run (bench/gpu_suite_h100.log).

    compare_suite.py REFERENCE_LOG NEW_LOG [NEW_LOG ...]

Both sides are read as one text each (the suite's combined log, or the
per-step logs of tests/gpu/run_gpu_suite.sh: gpu_bench.log, torch_bench.log,
sql_e2e.log). Compared, wherever both sides have the row:
  - results, which must be identical: inertia/n and path of every engine-table
    shape, inertia and path of every --paths variant, the papers' inertia/n
    (B1 where both stopped at the same iteration, B2, B5 with its iteration
    counts, B6), PyTorch-bench "ours" inertia/n, and the SQL end-to-end
    iteration counts (not its inertia: bench/gpu_sql_e2e.sh inserts the rows
    from parallel sessions, so the heap order and with it the random start
    differ from run to run; earlier logs show 1.94123e+07 and 1.94732e+07 for
    the same table);
  - times, reported as new/reference per row (engine table, paths, B5, ours in
    the PyTorch bench), with the rows slower than SLOW (1.10) listed; timing
    noise decides nothing here, so slower rows do not fail the comparison.
A section found on one side only is listed as not compared (a run split in
two, e.g. --no-bench then --bench-only, has each half's sections in its own
logs). Exit status 1 when a result differs or a row of a compared section is
missing.
"""
import re
import sys

SLOW = 1.10


def sections(text):
    """Split a log into (section, line) pairs by the headers the benchmarks print."""
    sec = None
    for line in text.splitlines():
        if line.startswith("(floor_ms and ratio"):
            sec = "engine"
        elif line.startswith("== paths:"):
            sec = "paths"
        elif line.startswith("== summary paths"):
            sec = None
        elif line.startswith("== B1 "):
            sec = "B1"
        elif line.startswith("== B2 "):
            sec = "B2"
        elif line.startswith("== B5 "):
            sec = "B5"
        elif line.startswith("== B6 "):
            sec = "B6"
        elif line.startswith("device:"):
            sec = "torch" if " | torch " in line else None
        yield sec, line


def parse(text):
    rows = {}
    e2e = []
    for sec, line in sections(text):
        m = re.search(r"pg_kmeans done: (\d+) iterations, inertia (\S+),", line)
        if m:
            e2e.append(m.groups())
            continue
        f = [x.strip() for x in line.split("|")]
        if sec == "engine" and len(f) == 5:
            m = re.match(r"(\d+)\s+(\d+)\s+(\d+)$", f[0])
            if m:
                t = f[1].split()
                rows[("engine",) + m.groups()] = {"ms": float(t[0]), "inertia": f[3].split()[-1], "path": f[4]}
        elif sec == "paths":
            m = re.match(r"\s+(\S.*?)\s+d=\s*(\d+) k=\s*(\d+)\s+([\d.]+) ms\s+launches\s+\d+\s+inertia (\S+)\s+path (\S+)",
                         line)
            if m:
                rows[("paths", m.group(1), m.group(2), m.group(3))] = {
                    "ms": float(m.group(4)), "inertia": m.group(5), "path": m.group(6)}
        elif sec == "B1" and len(f) == 5:
            m = re.match(r"(\d+)\s+(\d+)\s+(\d+)$", f[0])
            t = f[4].split()
            if m and len(t) == 3:
                rows[("B1",) + m.groups()] = {"at": t[0], "inertia": t[1] + " " + t[2]}
        elif sec == "B2" and len(f) >= 3:
            m = re.match(r"(\d+) (GPU plugin ABI|CPU engine .*)$", f[0])
            if m:
                rows[("B2", m.group(1), m.group(2))] = {"inertia": f[1].split()[-1]}
        elif sec == "B5" and len(f) >= 4:
            m = re.match(r"(\d+)\s+([\d.]+)$", f[0])
            if m:
                it = f[1].split()
                rows[("B5",) + m.groups()] = {"iterations": it[0] + " converged " + it[1], "inertia": f[3],
                                              "ms": float(f[2].split()[1])}
        elif sec == "B6" and len(f) >= 3:
            m = re.match(r"(\d+) (GPU plugin ABI|CPU \d+ threads)$", f[0])
            if m:
                rows[("B6", m.group(1), m.group(2))] = {"inertia": f[-1]}
        elif sec == "torch" and len(f) == 5:
            m = re.match(r"(\d+)\s+(\d+)\s+(\d+)$", f[0])
            if m:
                rows[("torch",) + m.groups()] = {"ms": float(f[1].split()[0]), "inertia": f[4].split()[0]}
    return rows, e2e


def device(text):
    m = re.search(r"^device: (.*?)(\s*\|.*)?$", text, re.M)
    return m.group(1) if m else "?"


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ref_text = open(sys.argv[1]).read()
    new_text = ""
    for p in sys.argv[2:]:
        try:
            new_text += open(p).read() + "\n"
        except OSError as e:
            print(f"(skipped {p}: {e.strerror})")
    ref, ref_e2e = parse(ref_text)
    new, new_e2e = parse(new_text)
    print(f"reference: {sys.argv[1]} ({device(ref_text)}); new: {' '.join(sys.argv[2:])} ({device(new_text)})")
    bad, slow, same, skipped, ratios, absent = [], [], 0, 0, {}, []
    kinds = sorted({k[0] for k in ref} | {k[0] for k in new})
    for kind in kinds:
        r_keys = [k for k in ref if k[0] == kind]
        n_keys = [k for k in new if k[0] == kind]
        if not n_keys or not r_keys:
            absent.append(f"{kind} ({'not in the new logs' if r_keys else 'not in the reference'})")
            continue
        for key in r_keys:
            if key not in new:
                bad.append(f"{' '.join(key)}: row missing in the new run")
                continue
            a, b = ref[key], new[key]
            if kind == "B1" and a["at"] != b["at"]:
                skipped += 1    # the CPU engine stopped at another iteration: not comparable
                continue
            diff = [f"{f} {a[f]} -> {b[f]}" for f in ("inertia", "path", "iterations") if f in a and a[f] != b.get(f)]
            if diff:
                bad.append(f"{' '.join(key)}: " + "; ".join(diff))
            else:
                same += 1
            if "ms" in a and "ms" in b and a["ms"] > 0:
                q = b["ms"] / a["ms"]
                ratios.setdefault(kind, []).append(q)
                if q > SLOW:
                    slow.append(f"{' '.join(key)}: {a['ms']:.3f} -> {b['ms']:.3f} ms ({q:.2f}x)")
    if not new_e2e or not ref_e2e:
        absent.append("SQL end to end")
    else:
        ref_it, new_it = [it for it, _ in ref_e2e], [it for it, _ in new_e2e]
        if ref_it == new_it:
            same += len(ref_it)
        else:
            bad.append(f"SQL end to end (iterations): {ref_it} -> {new_it}")
    for kind, qs in ratios.items():
        qs = sorted(qs)
        print(f"{kind:7s} time new/reference over {len(qs)} rows: median {qs[len(qs) // 2]:.3f}, "
              f"min {qs[0]:.3f}, max {qs[-1]:.3f}")
    for s in slow:
        print(f"slower than {SLOW:.2f}x: {s}")
    for b in bad:
        print(f"DIFFERENT: {b}")
    if absent:
        print("not compared: " + ", ".join(absent))
    if skipped:
        print(f"B1: {skipped} rows not compared (the CPU engine stopped at another iteration than in the reference)")
    print(f"compare_suite: {same} results identical, {len(bad)} different, {len(slow)} rows slower than {SLOW:.2f}x")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
