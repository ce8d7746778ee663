#!/bin/bash
# tests/gpu/ptx_diff.sh: compares the PTX of every CUDA kernel of the working
# tree with that of a git revision (default main), so that a change meant to
# leave the kernels' arithmetic alone (a refactor, a host-side change) can be
# shown to, without a GPU: same PTX (branch labels renumbered, the source
# path's hash taken out of internal names) means ptxas
# emits the same code. Needs nvcc; runs from the repository root.
#   usage: [PTX_IGNORE_PARAMS=1] bash tests/gpu/ptx_diff.sh [REV]
# PTX_IGNORE_PARAMS=1 masks the kernel parameters' sizes and offsets (for an
# argument struct that gained fields: every other instruction still counts).
# Prints one line per kernel that differs or exists on one side only, then
# "ptx_diff: N kernels identical, M different"; exit status 1 when M > 0.
set -euo pipefail
rev=${1:-main}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/base" "$work/ptx/base" "$work/ptx/tree"
git archive "$rev" cuda src/engine | tar -x -C "$work/base"
ptx() {  # ptx ROOT OUTDIR
  for f in "$1"/cuda/*.cu; do
    "$NVCC" -arch=sm_90 --ptx -O3 --extended-lambda -std=c++17 -I"$1/cuda" -I"$1/src/engine" "$f" \
      -o "$2/$(basename "$f" .cu).ptx"
  done
}
ptx "$work/base" "$work/ptx/base"
ptx "$PWD" "$work/ptx/tree"
python3 - "$work/ptx/base" "$work/ptx/tree" "$rev" "${PTX_IGNORE_PARAMS:-0}" <<'PY'
import glob, re, sys
ignore_params = sys.argv[4] == "1"

def kernels(folder):
    out = {}
    for f in glob.glob(folder + "/*.ptx"):
        for m in re.finditer(r"\.entry\s+(\S+)\((.*?)\n\}\n", open(f).read(), re.S):
            body = re.sub(r"\$L__BB\d+_", "$L__BB_", m.group(0))
            # internal-linkage names carry a hash of the source path, which differs between the trees
            body = re.sub(r"_ZN\d+_INTERNAL_[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+", "_ZN_INTERNAL_", body)
            if ignore_params:
                body = re.sub(r"(_param_\d+)(\[\d+\]|\+\d+)", r"\1[P]", body)
                body = re.sub(r"(ld\.param\.\w+\s+%\w+, \[%rd\d+)\+\d+\]", r"\1+P]", body)
            out[m.group(1)] = body
    return out

base, tree = kernels(sys.argv[1]), kernels(sys.argv[2])
diff = 0
for name in sorted(set(base) | set(tree)):
    if name not in tree:
        print(f"only in {sys.argv[3]}: {name}")
    elif name not in base:
        print(f"only in the working tree: {name}")
    elif base[name] != tree[name]:
        print(f"different: {name}")
    else:
        continue
    diff += 1
same = sum(1 for name in base.keys() & tree.keys() if base[name] == tree[name])
print(f"ptx_diff: {same} kernels identical, {diff} different")
sys.exit(1 if diff else 0)
PY
