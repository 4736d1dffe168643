"""bsrmv on the GPU from Python (CuPy input) against CuPy's own CSR `@` on
the scalar expansion of the same matrix, and PyTorch's BSR addmv where it
runs; 27-point grids, same process, same device, same vectors.

Each timing is the median over batches of back-to-back calls on the current
stream between two CUDA events (calls queue ahead of the GPU, as in a solver
loop), every call allocating its result as `A @ x` does.
"""
from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

import bsrmv
import bsrmv.gpu as bg


def nodes_for(mbytes: float, bs: int, itemsize: int) -> int:
    per_node = 27 * (bs * bs * itemsize + 4) + 8
    return max(2, round((mbytes * 1e6 / per_node) ** (1 / 3)))


def gpu_time(cupy, f, reps: int, batches: int) -> float:
    for _ in range(3):
        f()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    per = []
    for _ in range(batches):
        start.record()
        for _ in range(reps):
            f()
        end.record()
        end.synchronize()
        per.append(cupy.cuda.get_elapsed_time(start, end) / 1e3 / reps)
    return statistics.median(per)


def scalar_csr(cupy, csp, d, ci, rp, shape, bs):
    """CSR of the scalar entries of a row-major-block BSR matrix, on the GPU."""
    mb = rp.shape[0] - 1
    brow = cupy.repeat(cupy.arange(mb, dtype=cupy.int64), cupy.diff(rp).astype(cupy.int64))
    r = cupy.arange(bs, dtype=cupy.int64)
    rows = (brow[:, None, None] * bs + r[None, :, None]) + cupy.zeros((1, 1, bs), cupy.int64)
    cols = (ci.astype(cupy.int64)[:, None, None] * bs + r[None, None, :]) \
        + cupy.zeros((1, bs, 1), cupy.int64)
    coo = csp.coo_matrix((d.ravel(), (rows.ravel().astype(cupy.int32),
                                      cols.ravel().astype(cupy.int32))), shape=shape)
    del rows, cols, brow
    return coo.tocsr()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bs", default="2,3,4,6,8")
    p.add_argument("--mbytes", type=float, default=400.0)
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--batches", type=int, default=7)
    args = p.parse_args()
    import cupy
    import cupyx.scipy.sparse as csp

    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    dtype = np.dtype(args.dtype)
    dev = cupy.cuda.Device()
    print(f"# {cupy.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}, cupy "
          f"{cupy.__version__}, torch {torch.__version__ if have_torch else '(none)'}, "
          f"{dtype}; times per call, GB/s of the BSR bytes (val+col_idx+row_ptr+x+y)")
    print(f"{'bs':>3} {'grid':>5} {'MB':>6} {'kernel':>28} {'bsrmv us':>9} {'GB/s':>6} "
          f"{'cupy csr us':>11} {'GB/s':>6} {'torch bsr us':>12} {'GB/s':>6} {'x cupy':>6} "
          f"{'x torch':>7}")
    for bs in (int(b) for b in args.bs.split(",")):
        n = nodes_for(args.mbytes, bs, dtype.itemsize)
        A = bsrmv.grid(n, bs, dtype=dtype, order="row")
        row, col, val = A._arrays()
        d, ci, rp = cupy.asarray(val), cupy.asarray(col), cupy.asarray(row)
        G = bg.GpuBSRMatrix.from_arrays(d, ci, rp, A.shape)
        x = cupy.asarray(np.random.default_rng(bs).uniform(-1, 1, A.shape[1]).astype(dtype))
        y_ref = G @ x
        res = {"bs": bs, "grid": n, "mbytes": A.nbytes / 1e6, "kernel": G.kernel}
        res["bsrmv_us"] = gpu_time(cupy, lambda: G @ x, args.reps, args.batches) * 1e6
        scale = float(cupy.max(cupy.abs(y_ref)))

        C = scalar_csr(cupy, csp, d, ci, rp, A.shape, bs)
        res["cupy_diff"] = float(cupy.max(cupy.abs(C @ x - y_ref))) / scale
        res["cupy_us"] = gpu_time(cupy, lambda: C @ x, args.reps, args.batches) * 1e6
        del C
        res["torch_us"] = None
        if have_torch:
            try:
                tdt = getattr(torch, dtype.name)
                T = torch.sparse_bsr_tensor(torch.as_tensor(rp.astype(cupy.int32), device="cuda"),
                                            torch.as_tensor(ci, device="cuda"),
                                            torch.as_tensor(d, device="cuda"), size=A.shape,
                                            dtype=tdt)
                xt = torch.as_tensor(x, device="cuda")
                yt = torch.zeros(A.shape[0], dtype=tdt, device="cuda")
                out = torch.addmv(yt, T, xt)
                res["torch_diff"] = float(cupy.max(cupy.abs(cupy.asarray(out) - y_ref))) / scale
                res["torch_us"] = gpu_time(cupy, lambda: torch.addmv(yt, T, xt), args.reps,
                                           args.batches) * 1e6
                del T
            except Exception as e:  # report why it did not run, keep going
                res["torch_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        gb = A.nbytes / 1e9
        t_us = res["torch_us"]
        t_cols = (f"{t_us:.1f}", f"{gb / t_us * 1e6:.0f}", f"{t_us / res['bsrmv_us']:.2f}") \
            if t_us else ("-", "-", "-")
        print(f"{bs:>3} {n:>5} {res['mbytes']:>6.0f} {res['kernel']:>28} {res['bsrmv_us']:>9.1f} "
              f"{gb / res['bsrmv_us'] * 1e6:>6.0f} {res['cupy_us']:>11.1f} "
              f"{gb / res['cupy_us'] * 1e6:>6.0f} {t_cols[0]:>12} {t_cols[1]:>6} "
              f"{res['cupy_us'] / res['bsrmv_us']:>6.2f} {t_cols[2]:>7}")
        print(json.dumps(res))
        del G, d, ci, rp, x, y_ref, A
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
