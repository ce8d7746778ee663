#!/usr/bin/env python3
"""gpu_torch_bench.py: pg_kmeans' CUDA plugin vs what a user would write instead,
on the same data and the same initial centroids, in one run on one GPU.

- ours: the plugin through its C ABI (ctypes), data resident, per-iteration
  wall time of iterate() (synchronous; includes the per-iteration D2H of sums).
- torch: Lloyd in PyTorch, data on the GPU: chunked x @ C.T, argmin, index_add_
  in fp32 (chunked so the n x k matrix fits); timed with CUDA events.
- torch tf32: the same with torch.backends.cuda.matmul.allow_tf32 = True (one
  TF32 product: labels off where TF32's error exceeds the gap; ours, 3xTF32 on
  the GEMM path, labels like fp32, see cuda/DESIGN.md).
- sklearn: KMeans(lloyd, n_init=1, init=given, tol=0, max_iter=ITERS) on all
  cores (threadpoolctl default), seconds per iteration.
Inertia (after the timed iterations, vs the centroids before the last update)
is printed next to each speed.
Usage: gpu_torch_bench.py PLUGIN [--quick] [--shapes n:d:k,...] [--no-sklearn]
(--shapes: only those shapes, in the order given, data generated once per (n, d))
"""
import ctypes as C
import os
import sys
import time

import numpy as np
import torch

PLUGIN = sys.argv[1]
QUICK = "--quick" in sys.argv
SKLEARN = "--no-sklearn" not in sys.argv
SHAPES = None
if "--shapes" in sys.argv:
    SHAPES = [tuple(int(v) for v in t.split(":")) for t in sys.argv[sys.argv.index("--shapes") + 1].split(",")]
ITERS = 5


ABI_VERSION = 6  # cuda/pgkm_cuda_api.h: these structures mirror that version


class Cfg(C.Structure):
    _fields_ = [("memory_limit", C.c_int64), ("deterministic", C.c_int32), ("device_ordinal", C.c_int32),
                ("interrupt", C.c_void_p), ("interrupt_ctx", C.c_void_p), ("method", C.c_int32),
                ("force_path", C.c_int32), ("gemm_product", C.c_int32), ("sums", C.c_int32),
                ("gemm_blocks_per_sm", C.c_int32), ("gemm_tile_mb", C.c_int32)]


class Iter(C.Structure):
    _fields_ = [("inertia", C.c_double), ("moved", C.c_int64), ("distances", C.c_int64), ("method", C.c_int32)]


ERR = C.c_char_p
class Api(C.Structure):
    _fields_ = [("abi_version", C.c_uint32), ("struct_size", C.c_uint32),
                ("probe", C.CFUNCTYPE(C.c_int, C.c_char_p, C.c_size_t)),
                ("create", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int64, C.c_int32, C.c_int32, C.POINTER(Cfg),
                                       C.POINTER(C.c_void_p), C.c_char_p, C.c_size_t)),
                ("init_kmeanspp", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_uint64, C.c_void_p, C.POINTER(C.c_int32),
                                              C.c_char_p, C.c_size_t)),
                ("set_centroids", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_char_p, C.c_size_t)),
                ("iterate", C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(Iter), C.c_void_p, C.c_void_p,
                                        C.c_char_p, C.c_size_t)),
                ("assign", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p,
                                       C.c_char_p, C.c_size_t)),
                ("destroy", C.CFUNCTYPE(None, C.c_void_p))] + \
        [(name, C.c_void_p) for name in ("kernel_plan", "kernel_create", "kernel_build", "kernel_rows",
                                         "kernel_pass", "kernel_destroy",  # kernel k-means (unused here)
                                         "set_method")]  # ABI 6 (unused here: Lloyd's passes)


lib = C.CDLL(PLUGIN, mode=os.RTLD_LOCAL | os.RTLD_NOW)
lib.pgkm_cuda_get_api.restype = C.POINTER(Api)
api = lib.pgkm_cuda_get_api().contents
if api.abi_version != ABI_VERSION or api.struct_size != C.sizeof(Api):
    sys.exit(f"{PLUGIN}: plugin ABI {api.abi_version} (struct size {api.struct_size}), "
             f"this script speaks {ABI_VERSION} ({C.sizeof(Api)})")


def make_data(n, d, seed):
    rng = np.random.default_rng(seed)
    cen = rng.uniform(-10, 10, size=(64, d)).astype(np.float32)
    x = np.empty((n, d), dtype=np.float32)
    step = 1 << 20
    for i in range(0, n, step):
        m = min(step, n - i)
        lab = rng.integers(0, 64, size=m)
        x[i:i + m] = cen[lab] + rng.standard_normal((m, d), dtype=np.float32)
    return x


def ours(x, c0):
    n, d = x.shape
    k = c0.shape[0]
    err = C.create_string_buffer(512)
    h = C.c_void_p()
    cfg = Cfg(0, 1, -1, None, None, 0, 0, 0, 0, 0, 0)  # method lloyd, production switches
    rc = api.create(x.ctypes.data, n, d, k, C.byref(cfg), C.byref(h), err, 512)
    if rc:
        return float("nan"), float("nan"), err.value.decode()
    c = c0.astype(np.float64).copy()
    api.set_centroids(h, c.ctypes.data, err, 512)
    sizes = np.zeros(k, dtype=np.int64)
    it = Iter()
    ts = []
    for i in range(ITERS + 1):
        a = time.perf_counter()
        rc = api.iterate(h, C.byref(it), c.ctypes.data, sizes.ctypes.data, err, 512)
        ts.append(time.perf_counter() - a)
        if rc:
            break
    api.destroy(h)
    return float(np.median(ts[1:])), it.inertia, ""


def torch_lloyd(xg, c0):
    n, d = xg.shape
    k = c0.shape[0]
    c = torch.tensor(c0, device="cuda", dtype=torch.float32)
    chunk = max(1, min(n, (1 << 28) // max(k, d)))  # n x k distances and x*x temporaries <= 1 GiB
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ts = []
    inertia = 0.0
    for i in range(ITERS + 1):
        ev[0].record()
        sums = torch.zeros(k, d, device="cuda", dtype=torch.float32)
        cnt = torch.zeros(k, device="cuda", dtype=torch.float32)
        inert = torch.zeros((), device="cuda", dtype=torch.float64)
        cn = (c * c).sum(1)
        for s in range(0, n, chunk):
            xb = xg[s:s + chunk]
            dist = cn[None, :] - 2.0 * (xb @ c.T)
            val, lab = dist.min(1)
            inert += (val + (xb * xb).sum(1)).double().sum()
            sums.index_add_(0, lab, xb)
            cnt.index_add_(0, lab, torch.ones_like(val))
        nz = cnt > 0
        c = torch.where(nz[:, None], sums / cnt.clamp(min=1)[:, None], c)
        ev[1].record()
        torch.cuda.synchronize()
        ts.append(ev[0].elapsed_time(ev[1]) / 1e3)
        inertia = inert.item()
    return float(np.median(ts[1:])), inertia


def sk_lloyd(x, c0, iters):
    from sklearn.cluster import KMeans
    km = KMeans(n_clusters=c0.shape[0], init=c0, n_init=1, max_iter=iters, tol=0, algorithm="lloyd")
    a = time.perf_counter()
    km.fit(x)
    t = (time.perf_counter() - a) / max(1, km.n_iter_)
    return t, km.inertia_


def main():
    info = C.create_string_buffer(256)
    api.probe(info, 256)
    print("device:", info.value.decode(), "| torch", torch.__version__, flush=True)
    print(f"{'n':>9} {'d':>4} {'k':>5} | {'ours_ms':>9} {'torch_ms':>9} {'x_torch':>7} | {'tf32_ms':>9} {'x_tf32':>6} | "
          f"{'sk_ms':>9} | {'ours_inertia/n':>14} {'torch_inertia/n':>15} {'tf32_inertia/n':>14} {'sk_inertia/n':>13}",
          flush=True)
    ns = [1_000_000] if QUICK else [1_000_000, 10_000_000]
    shapes = SHAPES or [(n, d, k) for n in ns for d in (2, 16, 128, 768) for k in (8, 64, 1024)]
    data_key, x = None, None
    for n, d, k in shapes:
        if data_key != (n, d):
            x = None  # free the previous data first
            x = make_data(n, d, 7 + d)
            data_key = (n, d)
        c0 = x[np.linspace(0, n - 1, k).astype(np.int64)].copy()
        t_ours, i_ours, e = ours(x, c0)
        xg = torch.from_numpy(x).cuda()
        t_t, i_t = torch_lloyd(xg, c0)
        torch.backends.cuda.matmul.allow_tf32 = True
        t_tc, i_tc = torch_lloyd(xg, c0)
        torch.backends.cuda.matmul.allow_tf32 = False
        del xg
        torch.cuda.empty_cache()
        t_sk, i_sk = float("nan"), float("nan")
        work = n * k * d
        if SKLEARN and n <= 1_000_000 and work <= 1e9 * 128:
            t_sk, i_sk = sk_lloyd(x, c0, 3)
        print(f"{n:>9} {d:>4} {k:>5} | {t_ours*1e3:9.3f} {t_t*1e3:9.3f} {t_t/t_ours:7.2f} | {t_tc*1e3:9.3f} "
              f"{t_tc/t_ours:6.2f} | {t_sk*1e3:9.1f} | {i_ours/n:14.6g} {i_t/n:15.6g} {i_tc/n:14.6g} {i_sk/n:13.6g} {e}",
              flush=True)

main()
