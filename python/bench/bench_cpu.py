"""bsrmv from Python against scipy.sparse.bsr_array @ x, same process, same
matrices (scipy's view shares the library's values), and the Python call
overhead on a tiny matrix against the C call timed in C++.  With --k, products
with k vectors: one bsrmv_spmm call (row- and column-major arrays) against k
SpMV calls on the columns of a Fortran array and scipy's S @ X.

Run with the same page policy for both (the library advises huge pages for
its arrays; numpy's come from malloc):

    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 python python/bench/bench_cpu.py

A benchmark, not a test: it prints a table (and --json lines), nothing fails.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

import bsrmv


def nodes_for(mbytes: float, bs: int, dtype: np.dtype) -> int:
    """Grid edge n whose 27-point matrix holds about `mbytes` MB."""
    per_node = 27 * (bs * bs * dtype.itemsize + 4) + 8
    return max(2, round((mbytes * 1e6 / per_node) ** (1 / 3)))


def median_time(f, reps: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def bench_large(args, dtype):
    rows = []
    for bs in args.bs:
        n = nodes_for(args.mbytes, bs, dtype)
        A = bsrmv.grid(n, bs, dtype=dtype, order="row")
        S = A.to_scipy()
        x = np.random.default_rng(bs).uniform(-1, 1, A.shape[1]).astype(dtype)
        ya, ys = A @ x, S @ x
        err = float(np.max(np.abs(ya - ys)) / max(1e-300, np.max(np.abs(ys))))
        # interleaved, so that drift on a shared machine hits both alike
        ta, ts = [], []
        for _ in range(args.warmup):
            A @ x
            S @ x
        for _ in range(args.reps):
            t0 = time.perf_counter()
            A @ x
            t1 = time.perf_counter()
            S @ x
            t2 = time.perf_counter()
            ta.append(t1 - t0)
            ts.append(t2 - t1)
        t_a, t_s = statistics.median(ta), statistics.median(ts)
        row = {"bench": "large", "bs": bs, "grid": n, "dtype": dtype.name,
               "threads": bsrmv.get_num_threads(), "mbytes": A.nbytes / 1e6,
               "bsrmv_ms": t_a * 1e3, "scipy_ms": t_s * 1e3,
               "bsrmv_gbs": A.nbytes / t_a / 1e9, "scipy_gbs": A.nbytes / t_s / 1e9,
               "speedup": t_s / t_a, "rel_diff": err,
               "bsrmv_spread": (min(ta) * 1e3, max(ta) * 1e3),
               "scipy_spread": (min(ts) * 1e3, max(ts) * 1e3)}
        rows.append(row)
        del A, S
    return rows


def bench_multi(args, dtype):
    rows = []
    for bs in args.bs:
        n = nodes_for(args.mbytes, bs, dtype)
        A = bsrmv.grid(n, bs, dtype=dtype, order="row")
        S = A.to_scipy()
        rng = np.random.default_rng(bs)
        for k in args.k:
            X = rng.uniform(-1, 1, (A.shape[1], k)).astype(dtype)
            F = np.asfortranarray(X)
            Y = np.empty((A.shape[0], k), dtype=dtype)
            YF = np.empty((A.shape[0], k), dtype=dtype, order="F")

            def loop():
                for j in range(k):
                    A._m.spmv(0, 1.0, F[:, j], 0.0, YF[:, j])

            variants = {"spmm_row": lambda: A.matvec(X, y=Y),
                        "spmm_col": lambda: A.matvec(F, y=YF), "spmv_loop": loop,
                        "scipy": lambda: S @ X}
            ref = S @ X
            for f in variants.values():
                f()
                out = Y if f is variants["spmm_row"] else YF
                if f is not variants["scipy"]:
                    assert np.allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
            ts = {v: [] for v in variants}
            for rep in range(args.warmup + args.reps):
                for v, f in variants.items():  # interleaved: drift hits all alike
                    t0 = time.perf_counter()
                    f()
                    if rep >= args.warmup:
                        ts[v].append(time.perf_counter() - t0)
            med = {v: statistics.median(t) for v, t in ts.items()}
            rows.append({"bench": "multi", "bs": bs, "grid": n, "k": k, "dtype": dtype.name,
                         "threads": bsrmv.get_num_threads(), "mbytes": A.nbytes / 1e6,
                         **{f"{v}_ms": t * 1e3 for v, t in med.items()},
                         "spmm_row_vs_loop": med["spmv_loop"] / med["spmm_row"],
                         "spmm_col_vs_loop": med["spmv_loop"] / med["spmm_col"]})
    return rows


def bench_overhead(args, dtype):
    A = bsrmv.grid(2, 2, dtype=dtype, shape3d=(2, 2, 1))  # 4 block rows, 16 blocks
    S = A.to_scipy()
    x = np.ones(A.shape[1], dtype=dtype)
    y = np.empty(A.shape[0], dtype=dtype)
    inner = 2000

    def batch(f):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        return (time.perf_counter() - t0) / inner

    variants = {"matmul": lambda: A @ x, "matvec_y": lambda: A.matvec(x, y=y),
                "binding": lambda: A._m.spmv(0, 1.0, x, 0.0, y), "scipy": lambda: S @ x}
    # batches interleaved, so that load changes on a shared machine hit all alike
    ts = {k: [] for k in variants}
    for rep in range(args.reps + 2):
        for k, f in variants.items():
            t = batch(f)
            if rep >= 2:
                ts[k].append(t)
    t_matmul, t_matvec, t_core, t_scipy = (statistics.median(ts[k]) for k in variants)
    t_c = A._m.time_c_spmv(x, y, args.reps)
    return {"bench": "overhead", "dtype": dtype.name, "shape": A.shape, "nnzb": A.nnzb,
            "threads": bsrmv.get_num_threads(), "c_us": t_c * 1e6,
            "matmul_us": t_matmul * 1e6, "matvec_y_us": t_matvec * 1e6,
            "binding_us": t_core * 1e6, "scipy_us": t_scipy * 1e6,
            "overhead_matmul_us": (t_matmul - t_c) * 1e6,
            "overhead_matvec_y_us": (t_matvec - t_c) * 1e6}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bs", default="2,3,4,6,8")
    p.add_argument("--mbytes", type=float, default=400.0, help="matrix size in MB (default 400)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--json", action="store_true")
    p.add_argument("--skip-large", action="store_true")
    p.add_argument("--k", default="", help="vector counts for the k-vector products, e.g. 4,8")
    args = p.parse_args()
    args.bs = [int(b) for b in args.bs.split(",")]
    args.k = [int(k) for k in args.k.split(",") if k]
    dtype = np.dtype(args.dtype)
    bsrmv.set_num_threads(args.threads)
    print(f"# bsrmv {bsrmv.__version__}, numpy {np.__version__}, scipy "
          f"{__import__('scipy').__version__}, threads {bsrmv.get_num_threads()}, "
          f"GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '(unset)')}")
    if not args.skip_large:
        print(f"{'bs':>3} {'grid':>5} {'MB':>7} {'bsrmv ms':>9} {'scipy ms':>9} "
              f"{'bsrmv GB/s':>10} {'scipy GB/s':>10} {'speedup':>7} {'rel diff':>9}")
        for r in bench_large(args, dtype):
            print(f"{r['bs']:>3} {r['grid']:>5} {r['mbytes']:>7.0f} {r['bsrmv_ms']:>9.2f} "
                  f"{r['scipy_ms']:>9.2f} {r['bsrmv_gbs']:>10.2f} {r['scipy_gbs']:>10.2f} "
                  f"{r['speedup']:>7.2f} {r['rel_diff']:>9.1e}")
            if args.json:
                print(json.dumps(r))
    if args.k:
        print(f"{'bs':>3} {'grid':>5} {'MB':>7} {'k':>3} {'spmm row':>9} {'spmm col':>9} "
              f"{'k spmv':>9} {'scipy':>9}  (ms per k vectors)  row/col vs k spmv")
        for r in bench_multi(args, dtype):
            print(f"{r['bs']:>3} {r['grid']:>5} {r['mbytes']:>7.0f} {r['k']:>3} "
                  f"{r['spmm_row_ms']:>9.2f} {r['spmm_col_ms']:>9.2f} {r['spmv_loop_ms']:>9.2f} "
                  f"{r['scipy_ms']:>9.2f}  {r['spmm_row_vs_loop']:.2f}x "
                  f"{r['spmm_col_vs_loop']:.2f}x")
            if args.json:
                print(json.dumps(r))
    o = bench_overhead(args, dtype)
    print(f"tiny matrix {o['shape'][0]}x{o['shape'][1]} ({o['nnzb']} blocks): C call "
          f"{o['c_us']:.2f} us; A @ x {o['matmul_us']:.2f} us (+{o['overhead_matmul_us']:.2f}); "
          f"A.matvec(x, y=y) {o['matvec_y_us']:.2f} us (+{o['overhead_matvec_y_us']:.2f}); "
          f"binding alone {o['binding_us']:.2f} us; scipy S @ x {o['scipy_us']:.2f} us")
    if args.json:
        print(json.dumps(o))


if __name__ == "__main__":
    main()
