#!/bin/bash
# bench/hamerly_ncu.sh: per-kernel GPU time of `gpu_bench --hamerly` cases
# (PGKM_BENCH_HAMERLY_CASES, default 6: n = 245,760, d = 32, k = 1024,
# sigma^2 0.05) under Nsight Compute (one metric, clocks as found), summed by
# kernel name, on a CUDA host after tests/gpu/device_run.sh build (or
# tests/gpu/pruned_device_run.sh) built build-gpu/. Output: $OUT/ncu_hamerly.csv and the summary on stdout.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
B=build-gpu
export PGKM_BENCH_HAMERLY_CASES=${PGKM_BENCH_HAMERLY_CASES:-6}
timeout "${NCU_CAP:-120}" ncu --clock-control none --metrics gpu__time_duration.sum --csv \
  "$B/bench/gpu_bench" "$PWD/$B/cuda/pg_kmeans_cuda.so" --hamerly >"$OUT/ncu_hamerly.csv" 2>"$OUT/ncu_hamerly.err"
echo "ncu rc=$?"
python3 - "$OUT/ncu_hamerly.csv" <<'PY'
import csv, sys, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
tot = collections.OrderedDict(); cnt = collections.Counter()
for r in csv.DictReader(rows):
    if r.get("Metric Name") != "gpu__time_duration.sum":
        continue
    name = r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "")[:40]
    v = float(r["Metric Value"].replace(",", ""))
    unit = r.get("Metric Unit", "ns")
    v = v / 1e3 if unit == "nsecond" or unit == "ns" else (v if unit in ("usecond", "us") else v * 1e3)
    tot[name] = tot.get(name, 0) + v; cnt[name] += 1
for n, v in tot.items():
    print(f"{n:42s} {cnt[n]:5d} launches {v/1e3:9.3f} ms total {v/cnt[n]:9.1f} us each")
PY
