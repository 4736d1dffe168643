#!/usr/bin/env python3
"""scipy.sparse bsr_matrix @ x and csr_matrix @ x on the arrays that
peers_cpu --dump DIR wrote (the matrix every library of the run gets).

  scipy_bsr.py DIR [--reps R] [--rounds K] [--only scipy-bsr,scipy-csr]

csr_matrix holds the scalar expansion of the BSR matrix (explicit zeros of
split blocks kept, as PETSc SeqAIJ and cuSPARSE CSR_ALG1 get it).  One
thread (scipy's sparse matvec is serial; BLAS/OpenMP pinned to 1 by the
driver).  Per round and format (order alternating per round): 3 warm-up
products (the first checked against bsrmv's y), then --reps timed ones; the
median is printed as a JSON line with the keys of `bsrmv bench --json`.
Bytes are bsrmv's count for every format, so GB/s compare as times.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp

WARMUP = 3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="scipy-bsr,scipy-csr")
    a = ap.parse_args()

    meta = {}
    with open(os.path.join(a.dump, "meta.txt")) as f:
        for line in f:
            k, v = line.split()
            meta[k] = v if k == "matrix" else int(v)
    bs, mb, nb, nnzb = meta["bs"], meta["mb"], meta["nb"], meta["nnzb"]
    rd = lambda name, dt: np.fromfile(os.path.join(a.dump, name), dtype=dt)
    indptr = rd("row_ptr.i64", "<i8")
    indices = rd("col_idx.i32", "<i4")
    # bsrmv blocks are column-major: block k, entry (r, c) at k*bs*bs + r + c*bs.
    # scipy's data[k, r, c] is row-major: transpose each block (one copy).
    val = rd("val_colmajor.f64", "<f8").reshape(nnzb, bs, bs)
    data = np.ascontiguousarray(val.transpose(0, 2, 1))
    del val
    x = rd("x.f64", "<f8")
    y_ref = rd("y_bsrmv.f64", "<f8")
    t0 = time.perf_counter()
    A = sp.bsr_matrix((data, indices, indptr), shape=(mb * bs, nb * bs), blocksize=(bs, bs))
    A.has_sorted_indices = True
    mats = {}
    wanted = a.only.split(",")
    if "scipy-bsr" in wanted:
        mats["scipy-bsr"] = ("bsr_matvec", A)
    if "scipy-csr" in wanted:
        C = A.tocsr()
        if C.nnz != nnzb * bs * bs:
            sys.exit(f"scipy_bsr: tocsr kept {C.nnz} of {nnzb * bs * bs} entries")
        mats["scipy-csr"] = ("csr_matvec", C)
    build_ms = (time.perf_counter() - t0) * 1e3
    print(f"scipy_bsr: scipy {scipy.__version__}, index dtype {A.indices.dtype}, "
          f"built in {build_ms:.0f} ms", file=sys.stderr)

    nbytes = meta["bytes"]
    flops = 2.0 * nnzb * bs * bs
    names = list(mats)
    for rnd in range(1, a.rounds + 1):
        for name in names[(rnd - 1) % len(names):] + names[:(rnd - 1) % len(names)]:
            kernel, M = mats[name]
            rel = float("nan")
            for w in range(WARMUP):
                y = M @ x
                if w == 0:
                    rel = float(np.linalg.norm(y - y_ref) / np.linalg.norm(y_ref))
            times = []
            for _ in range(a.reps):
                t = time.perf_counter()
                y = M @ x
                times.append((time.perf_counter() - t) * 1e3)
            ms = float(np.median(times))
            s = ms * 1e-3
            rec = {
                "matrix": meta["matrix"], "bs": bs, "rows": meta["rows"], "cols": meta["cols"],
                "nnzb": nnzb, "bytes": nbytes, "backend": name, "kernel": kernel,
                "threads": 1, "time_ms": ms, "gbps": nbytes / s * 1e-9,
                "gflops": flops / s * 1e-9, "rel_err": rel, "type": "double", "order": "col",
                "round": rnd, "via": "python", "ref": "bsrmv",
            }
            print(json.dumps(rec, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
