#!/usr/bin/env python3
"""The GPU plan's default table (src/plan/default.tbl) from measurements.

Input: JSON lines of `bsrmv bench --gpu --gpu-kernels all` on real matrices
and on the generated ones of bench/synth_matrices.py (bench/plan_data.sh),
every bsrmv kernel and every cuSPARSE path per case.
Output: the table, and on stderr how its choice does against the best bsrmv
kernel and the best cuSPARSE path, on the training matrices and on the
held-out ones (--holdout), which the learning never sees.

The table is a decision list: the first row whose type, order, bs and
conditions match, and whose kernel is built for the matrix, is the plan.
  * Learned rows, per (type, order, bs) seen in the data: the vote of the
    K_NEAR training cases nearest to the matrix in its features
    (src/plan/features.c computes the same ones), each a point line of the
    table with the scores (objective_hit) of its KEEP best configurations.
    Bounded by 1.5x the largest l2 (bytes / L2 size) and maxmean of the data
    for that key.
  * Rule rows, for every (type, order, bs) up to 64: the 27-point-grid and
    power-law tuning (large regular and large irregular matrices) that the
    learned rows do not cover, written out per block size; those for grids,
    short rows, uneven rows at bs 12-32 and irregular rows at bs 2-8 come
    before the learned rows (table_rows).

  bench/synth_matrices.py DIR
  bench/plan_table.py --matrices ../shared/matrices:DIR DATA.jsonl.gz... > src/plan/default.tbl

--cv also learns once per matrix with that matrix left out and reports the
choice on it: the estimate of how the table does on matrices it has not seen.
--bounds N reports the ceiling of any table that copies, for a held-out
case, one of the N best configurations of a training case of its key.
"""
import argparse
import collections
import gzip
import json
import math
import os
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp

L2_BYTES = 60 * 2**20  # cudaDevAttrL2CacheSize of the device measured (--l2-mib)
MEMSM = 37.0  # its peak DRAM GB/s per SM, the feature memsm (--memsm)
FEATURES = ("l2", "mean", "cv", "maxmean")
HOLDOUT = "bcsstk15,nasa4704,s1rmq4m1,bcspwr10,rajat01,lns_3937,cage8,luxembourg_osm"
# Where the grid tuning applies before the learned rows: matrices well past
# the L2 with rows of nearly equal length, as the 27-point grids it was
# measured on.
GRID_LIKE = ("l2>=2", "maxmean<=2")
# Where the irregular rows at bs 2-8 come before the learned ones: past ~2.4
# MB.  Below it, the few blocks of a split or promoted tiny matrix are
# launch-bound, and the vector stream was as fast or faster on the
# training matrices' splits (orani678 and sts4098 at bs 2, float).
IRREGULAR_FIRST = "l2>=0.04"


# ---- features (the definitions of src/plan/features.c) --------------------

_patterns = {}


def _pattern(matrices, stem):
    """The matrix stem.mtx.gz of the first folder of matrices (a list
    separated by colons) that has it."""
    if stem not in _patterns:
        dirs = matrices.split(":")
        path = next((f"{d}/{stem}.mtx.gz" for d in dirs if os.path.exists(f"{d}/{stem}.mtx.gz")),
                    f"{dirs[0]}/{stem}.mtx.gz")
        with gzip.open(path) as f:
            a = scipy.io.mmread(f).tocsr()
        a.sum_duplicates()
        _patterns[stem] = a
    return _patterns[stem]


def block_pattern(matrices, name, bs):
    """The block pattern (CSR) of a promoted or split matrix."""
    stem, how = name.split(":")
    a = _pattern(matrices, stem)
    if how == "promote":
        return a
    c = a.tocoo()
    mb, nb = -(-a.shape[0] // bs), -(-a.shape[1] // bs)
    b = sp.csr_matrix((np.ones(len(c.row)), (c.row // bs, c.col // bs)), shape=(mb, nb))
    b.sum_duplicates()
    return b


def features(b, nbytes):
    lens = np.diff(b.indptr)
    mean = float(lens.mean()) if len(lens) else 0.0
    mb = b.shape[0]
    return {
        "l2": nbytes / L2_BYTES,
        "mean": mean,
        "cv": float(lens.std()) / mean if mean else 0.0,
        "maxmean": float(lens.max()) / mean if mean else 0.0,
        "lenmax": float(lens.max()) if len(lens) else 0.0,
        "mb": float(mb),
        "nnzb": float(b.nnz),
        "empty": float(np.mean(lens == 0)) if mb else 0.0,
        "spread": spread(b),
    }


SPREAD_RUNS, SPREAD_RUN = 64, 64  # PLAN_SPREAD_RUNS, PLAN_SPREAD_RUN


def spread(b):
    """The feature spread on the blocks src/plan/features.c samples."""
    nnzb = b.nnz
    if not nnzb:
        return 0.0
    b.sort_indices()
    if nnzb <= SPREAD_RUNS * SPREAD_RUN:
        idx = np.arange(nnzb)
    else:
        step = (nnzb - SPREAD_RUN) // (SPREAD_RUNS - 1)
        idx = (np.arange(SPREAD_RUNS)[:, None] * step + np.arange(SPREAD_RUN)[None, :]).ravel()
    rows = np.searchsorted(b.indptr, idx, side="right") - 1
    d = np.abs(b.indices[idx].astype(np.float64) - rows)
    return float(np.log2(1 + d).mean() / math.log2(1 + max(b.shape[1], 1)))


# ---- data -------------------------------------------------------------------

def records(path):
    """The JSON lines of a bench file, gzipped or not."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        for line in f:
            yield json.loads(line)


def load(paths, matrices):
    """cases[(matrix, bs, type, order, solver_mode)] = dict(f, k, cs, best, ...)."""
    cases = collections.defaultdict(dict)
    for p in paths:
        for r in records(p):
            if r.get("backend") not in ("gpu", "cusparse"):
                continue
            key = (r["matrix"], r["bs"], r["type"], r["order"], r.get("traffic_bytes", 0) > 0)
            c = cases[key]
            c["bytes"] = r["bytes"]
            k = r["kernel"]
            if r["backend"] == "cusparse":
                c.setdefault("cs", {})[k] = r["time_ms"]
            elif k.startswith("auto:"):
                continue  # the plan of the build measured, not a configuration
            else:
                c.setdefault("k", {})[k] = r["time_ms"]
    done = {}
    for key, c in cases.items():
        if "k" not in c or "cs" not in c:
            continue
        c["f"] = features(block_pattern(matrices, key[0], key[1]), c["bytes"])
        c["best"] = min(c["k"].values())
        c["name"] = key[0]
        f = c["f"]
        c["irregular"] = f["maxmean"] > 16 and f["maxmean"] * f["mean"] >= 256
        f["irregular"] = float(c["irregular"])
        done[key] = c
    return done


# ---- learning ---------------------------------------------------------------

def objective_log(e, r):
    """Log efficiency (best / time), a kernel below 90% counted twice."""
    return math.log(e) + 2 * min(0.0, math.log(e / 0.9))


def objective_hit(e, r):
    """1 within 5% of the best kernel, plus half the log efficiency (which
    configuration loses least where none is within 5%) and twice the log of
    the shortfall below the best cuSPARSE path.  Left out one matrix at a
    time (--cv), this generalises better than objective_log: a few close
    cases are not traded for the mean."""
    return (e >= 0.95) + 0.5 * math.log(e) + 2 * min(0.0, math.log(r))


OBJECTIVES = {"log": objective_log, "hit": objective_hit}


def matrix_of(c):
    return c["name"].split(":")[0]


# The nearest points' vote (src/plan/table.c computes the same): the
# distance between two matrices is Euclidean over these coordinates of the
# features, each point's scores weigh 1 / (distance + D0), and a
# configuration a point does not keep counts as its lowest kept score.
K_NEAR = 2  # points that vote
KEEP = 6  # configurations a point keeps, its best scores
D0 = 0.5


def coords(f):
    return (math.log(max(f["l2"], 1e-4)), math.log(max(f["mean"], 0.1)), f["cv"],
            math.log(max(f["maxmean"], 1.0)))


def _g4(x):
    return float("%.4g" % x)


def make_point(c, objective, keep):
    """A case as the table writes it: its features (4 digits) and the
    scores (3 decimals) of its best configurations, best first."""
    bc = min(c["cs"].values())
    s = sorted(((round(objective(c["best"] / t, bc / t), 3), k) for k, t in c["k"].items()),
               key=lambda x: (-x[0], x[1]))[:keep]
    f = {n: _g4(c["f"][n]) for n in FEATURES}
    return {"f": f, "x": coords(f), "s": dict((k, v) for v, k in s), "floor": s[-1][0]}


def learn(cases, opt):
    """{(bs, type, order): (points, l2 bound, maxmean bound)} from the cases
    {key: case}: a point per solver-like case, for each key with at least
    K_NEAR matrices; bounded by 1.5x the largest l2 and maxmean there."""
    groups = collections.defaultdict(list)
    for key, c in sorted(cases.items()):
        if key[4]:
            groups[key[1:4]].append(c)
    model = {}
    obj = OBJECTIVES[opt.objective]
    for k, cs in sorted(groups.items()):
        if len({matrix_of(c) for c in cs}) < opt.k:
            continue
        pts = sorted((make_point(c, obj, opt.keep) for c in cs), key=lambda p: tuple(p["f"][n] for n in FEATURES))
        model[k] = (pts, float("%.3g" % (1.5 * max(p["f"]["l2"] for p in pts))),
                    float("%.3g" % (1.5 * max(p["f"]["maxmean"] for p in pts))), opt.k)
    return model


def distance(x, y):
    """As table.c sums it, for the same rounding."""
    s = 0.0
    for a, b in zip(x, y):
        s += (a - b) * (a - b)
    return math.sqrt(s)


def vote(points, k, f):
    """The configurations the k points nearest to features f vote for, best
    first (ties by name); of points equally near, the earlier."""
    x = coords(f)
    near = sorted(((distance(x, p["x"]), p) for p in points), key=lambda dp: dp[0])[:k]
    total = collections.defaultdict(float)
    names = sorted(set().union(*(p["s"] for _, p in near)))
    for d, p in near:
        w = 1.0 / (d + D0)
        for n in names:
            total[n] += w * p["s"].get(n, p["floor"])
    return sorted(names, key=lambda n: (-total[n], n))


# ---- the rule rows: grids (plain) and power-law (irregular) tuning ---------

def cfg(k, g, r, t, p):
    return f"{k}/g{g}/r{r}/t{t}/p{p}"


def balanced_unit(bs):
    """The balanced kernels' unit: 8192 values of val, at least 8 blocks
    (balanced_unit in src/cuda/candidates.cu)."""
    return max(8, 8192 // (bs * bs))


def k2(bs, ntg):
    return cfg("k2_medium", ntg, 1, 0, max(1, 256 // (bs * ntg)))


def k3(bs, dbl, row):
    narrow = row and (bs <= 32 or (not dbl and bs < 64))
    rows = (bs if bs <= 32 else 8) if row else (40 if dbl and bs < 128 else 64)
    return cfg("k3_large", 8 if narrow else 32, 1, 0, -(-bs // rows))


def mixed_rows(bs, row):
    """Rows (conditions, cfg) of float values with double vectors (the
    feature mixed=1), ahead of the float rows where the pair's best kernel
    differs.  H100, 27-point grids of 265-303 MB of the pair, every kernel
    built for it timed (docs/MIXED.md): staged with 4 lanes a scalar row
    and 256 threads at bs 3 (2610-2641 GB/s, the float row's 2 lanes
    2493-2504), wide with 16 lanes a row at bs 4 (2626-2997, 32 lanes
    2290-2435), wide at column-major bs 8 (3047, the vector stream 2944),
    by-column with 32 lanes at column-major bs 6 (6 steps a batch; grids of
    197 and 290 MB: 2903-2976 GB/s, 16 lanes 2736-2798)."""
    if bs == 3:
        return [(("staged=1",), cfg("staged", 4, 1, 256, 3))]
    if bs == 4:
        return [((), cfg("wide", 16, 1, 128, 0))]
    if bs == 8 and not row:
        return [((), cfg("wide", 32, 1, 128, 0))]
    if bs == 6 and not row:
        return [((), cfg("by_column", 32, 1, 128, 0))]
    return []


def bycolumn6_rows(bs, dbl, row):
    """Rows of column-major bs 6 ahead of the learned rows: by-column with
    32 lanes, whose lanes take a 16-byte piece of the values each (two rows
    of a column in double, four values over two columns in float; two rows
    in 8 bytes for float values with double vectors; k_bycolumn.cu) --
    faster than the by-column kernel the learned rows were learned with.
    H100 (bench/results/plan-h100/bs6_col.jsonl.gz: every kernel on every
    shared matrix promoted to bs 6, both timing modes), read on training
    matrices only: within 5% of the best kernel on the matrices of 2000
    block rows or more with rows of even length (maxmean < 8) and mean < 40
    blocks or cv < 0.45 in double (the learned rows 1.16-1.36x behind it on
    crystm01, msc04515, bcsstk25 and ex31); in float on every matrix of
    1000 block rows or more with rows of even length but crack (1.14-1.15x
    behind by-column with 16 lanes; the learned rows' staged and vector-
    stream kernels 1.11-1.43x behind it on 11 of them); for float values
    with double vectors on rows of even length from 2000 block rows: the
    float rows' vector stream ran 1.2-3.3x behind it (on very uneven rows
    the pair takes the float rows' merge path, the balanced kernel built
    for it)."""
    if row or bs != 6:
        return []
    bc = cfg("by_column", 32, 1, 128, 0)
    even = ("mb>=2000", "maxmean<8")
    if dbl:
        return [(even + ("mean<40",), bc), (even + ("cv<0.45",), bc)]
    return [(("mixed=1", "mb>=2000", "maxmean<8"), bc), (("mb>=1000", "maxmean<8"), bc)]


def plain_rows(bs, dbl, row):
    """Rows (conditions, cfg) of large regular matrices, in priority order:
    measured on 27-point and 7-point grids of 150-512 MB (docs/GPU.md)."""
    out = [] if dbl else [(("mixed=1",) + c, k) for c, k in mixed_rows(bs, row)]
    bycol32 = cfg("by_column", 32, 1, 128, 0)
    # H200 (memsm 37), solver-like, every kernel: rows of 5-7 blocks take 2
    # lanes a scalar row (staged).  7-point grids of ~400 MB, double
    # column-major, bs 2 / 3 / 4: 0.150 / 0.136 / 0.132 ms against the H100
    # rows below (k1_small 0.190, by-column g16 0.251 and 0.167; best
    # cuSPARSE 0.242 / 0.230 / 0.171; at bs 4 the vector stream 0.130); the
    # bridge frame (bs 3, 5 blocks a row, 272 MB): double 0.085 / 0.088 ms
    # column- / row-major against by-column g16's 0.187 and staged g4's
    # 0.138, float 0.066-0.067 against staged g4's 0.122 (CSR_ALG1 0.101)
    if 2 <= bs <= 4 and (bs == 3 or (dbl and not row)):
        out.append((("memsm>=30", "mean<12", "staged=1"), cfg("staged", 2, 1, 128, 3)))
    # H100 (memsm 25), every kernel, both timing modes: on 7-point grids of
    # ~400 MB, double column-major, the lane-block kernel with 4 lanes a
    # block row at bs 2 (0.184 ms, staged 0.189, k1_small 0.234), 8 at bs 3
    # (0.153, staged 0.171, by-column g16 0.250; row-major 0.152 against
    # staged's 0.169; float 0.086 against 0.099) and the vector stream with
    # 4 rows a warp at bs 4 (0.154, lane-block g8 0.156, by-column g16
    # 0.179); on the bridge matrices of 190000 segments the staged kernel
    # at bs 2 (truss, 0.050 ms, lane-block g4 0.054, k1_small 0.069) and
    # the lane-block kernel at bs 3 (frame, 0.099, staged 0.099, by-column
    # g16 0.191; float 0.058 against staged's 0.065).  Best cuSPARSE path:
    # 0.245, 0.230, 0.180, 0.075 and 0.167 ms.
    if bs == 2 and dbl and not row:
        out.append((("memsm<30", "mean<12", "staged=1"), cfg("staged", 2, 1, 128, 3)))
    if bs == 3:
        out.append((("memsm<30", "mean<12"), cfg("lane_block", 8, 1, 128, 0)))
    if bs == 4 and dbl and not row:
        out.append((("memsm<30", "mean<12"), cfg("vec_stream", 32, 4, 128, 0)))
    if not dbl or row:
        pass
    elif 2 <= bs <= 7:  # short rows (7-point grids), double column-major
        short = (cfg("k1_small", 8, 4, 256, 0) if bs == 2 else
                 cfg("by_column", 16, 4, 256, 0) if bs <= 4 else k2(bs, 2))
        out.append((("mean<12",), short))
    if bs == 1:
        return out + [((), cfg("by_column", 4, 1, 256, 0))]
    # H200 (memsm 37), bs 3, 562 MB grid, three processes: staged with 4
    # lanes a scalar row 3810-3817 GB/s back to back and 3549-3563
    # solver-like in double column-major (by-block 3225-3229 and 3052-3055,
    # cuSPARSE BSR 3413-3416), 3067-3081 in float (2 lanes 2836-2843);
    # row-major blocks 3581-3583 solver-like in double (by-block 3078-3080),
    # 3088-3091 in float (2 lanes 2810-2817); on the H100 2 lanes lead (2831
    # against 2746 in double)
    if bs == 3:
        out.append((("memsm>=30", "maxmean<=2", "staged=1"), cfg("staged", 4, 1, 128, 3)))
    # float column-major bs 6: by-column (the last row), four values a lane:
    # 3025 GB/s, staged 2699 (H100, 564 MB grid)
    if not dbl and bs in (3, 6, 7, 12) and (row or bs != 6):
        out.append((("maxmean<=2", "staged=1"), cfg("staged", 4 if bs in (6, 12) else 2, 1, 128, 3)))
    # H100 (memsm 25), double, 27-point grids of 560-610 MB in three suite
    # runs: staged with 2 lanes 2841-2860 GB/s at bs 3 against by-block's
    # 2663-2664; the H200 tuning (memsm 37) keeps the rows below.  At bs 2
    # the H100 takes the H200's 8 lanes a row (wide): 2959-2967 GB/s
    # against 16 lanes' 2779-2804 (512 MB grid, every kernel, the suite's
    # grid set of bench/results/gpu-h100_*)
    if dbl and bs == 3:
        out.append((("memsm<30", "maxmean<=2", "staged=1"), cfg("staged", 2, 1, 128, 3)))
    use_wide = (not (dbl and bs in (4, 8))) if row else (bs in (2, 16) or (not dbl and bs in (4, 32)))
    if use_wide:
        if bs == 4 and not dbl:
            out.append((("memsm>=30",), cfg("wide", 16, 1, 128, 0)))
        out.append(((), cfg("wide", 8 if bs == 2 else 32, 1, 128, 0)))
    if bs == 3 and not dbl:
        out.append(((), cfg("k1_small", 32, 4, 256, 0)))
    elif bs <= 5:
        out.append(((), cfg("by_block", 32, 1, 128, 0)))
    elif bs == 6 and not dbl:
        if row:
            out.append(((), cfg("vec_stream", 32, 3, 128, 0)))
    elif bs <= 7:
        out.append(((), bycol32 if dbl or (row and bs == 7) else k2(bs, 2)))
    elif bs == 8:
        out.append(((), cfg("vec_stream", 32, 1, 128, 0) if dbl or not row else k2(bs, 2)))
    elif bs in (12, 16):
        # column-major bs 12 with rows of uneven length (the longest 1.3x
        # the mean or more): the fragment stream, whose units of 14 blocks
        # balance what K2's thread array per row cannot.  H200, promoted,
        # both timing modes, the two in one process: bcsstk15, bcsstk16 and
        # bcsstk28 (maxmean 1.36-1.89, 130-320 MB) 1.05-1.15x K2 in double,
        # 1.26-1.40x in float; bcsstk24 and s1rmq4m1 (maxmean 1.05-1.27)
        # 0.98-0.99x; 27-point grids of 150 and 490 MB (maxmean 1.08-1.13)
        # 0.87-0.88x (K2 3660-3680 GB/s at 490 MB)
        if bs == 12 and not row:
            out.append((("maxmean>=1.3",), cfg("fragment", 32, 1, 256, 14)))
        out.append(((), k2(bs, 4)))
    elif bs in (24, 32):
        out.append(((), k2(bs, 8 if dbl else 4)))
    elif not row and (bs <= 10 or (dbl and bs == 11)):
        out.append((("rowsm>=1024",), cfg("row_per_thread", 0, 1, 128, 4)))
        out.append(((), bycol32 if dbl and bs <= 10 else k2(bs, 4)))
    elif (dbl or bs >= 64 or 32 < bs <= 40) if row else bs >= 17:
        out.append(((), k3(bs, dbl, row)))
    elif not dbl and not row:
        # a thread a scalar row needs rows to fill the device: on bcsstk16
        # split at bs 13-15 (376 block rows, 37 scalar rows an SM; H100) it
        # took 0.026-0.030 ms, the column stream (K3) 0.008
        out.append((("rowsm>=1024",), cfg("row_per_thread", 0, 1, 256, 8)))
        out.append(((), k3(bs, dbl, row)))
    else:
        out.append(((), k2(bs, 8 if 16 <= bs <= 32 else 4)))
    out.append(((), bycol32 if bs <= 32 else k3(bs, dbl, row)))
    return out


def sweep_rows(bs, dbl, row):
    """Rows of smaller regular matrices at the block sizes no real matrix
    was promoted to, double column-major: the suite's sweep (bcsstk16 split
    at bs 2..32, 3-12 MB, H100) has the column stream (K3) fastest at bs
    9-15 and K2 with 8 thread groups at 19-31, where the grid tuning picks
    otherwise."""
    if not dbl or row:
        return []
    if 9 <= bs <= 15 and bs != 12:
        return [((), k3(bs, dbl, row))]
    if 19 <= bs <= 31 and bs != 24:
        return [((), k2(bs, 8))]
    return []


def irregular_rows(bs, dbl, row):
    """Rows of long, uneven rows (power-law and arrow matrices of ~512 MB): the
    balanced kernels, whose work units ignore row boundaries.  At bs 24 and
    32 the warp's wide row walk over fragments (walk(), uneven_rows), at
    the other sizes above 16 K3 thread blocks over them (rows 1, 8 column
    phases), which ran at 1.01-1.46x the best cuSPARSE path on orani678,
    rajat01 and sts4098 promoted to bs 24 and 32 where the runtime-bs row
    walk read a value per lane (H100).  At bs 9-15 the row walk with
    fragments of a quarter of the unit (orani678, rajat01, sts4098 at bs
    12: 1.07-1.25x the half unit).
    On matrices within the L2 (l2 < 1) smaller units, so that the few blocks
    still fill the GPU, and at bs 5-8 other kernels: on the training
    matrices orani678 and sts4098 promoted to bs 2-8 (H100,
    bench/results/plan-h100) the lane-sequential merge path with 64-block
    units was the best of its unit sizes at bs 2-4 (1.11-1.47x the best
    cuSPARSE path, the 128- and 192-block units 0.84-1.41x); at bs 6 it ran
    at 1.14-1.41x (48-block units) in column-major blocks and 0.87-1.01x in
    row-major ones, where the warp's merge path, tuned on the ~512 MB
    power-law matrices, ran at 0.67-0.84x; at bs 8 the fragment stream with
    32-block units was best but in float column-major blocks (the merge
    path, 1.42-1.71x).  The held-out rajat01 follows the same pattern.
    On an H200 float row-major blocks at bs 8 take the merge path too:
    orani678 and sts4098 1.00x their fastest kernel with 48-block units,
    the fragment stream 1.63x and 1.33x (bench/results/plan-h200).
    These rows come before the learned ones: no real or generated training
    matrix has tails like these near enough to vote for them (a generated
    scale-free graph, kept out of the learning, took the vector stream at
    bs 2, 1.8x slower than the merge path and below cuSPARSE)."""
    if bs > 32:
        return []
    unit = balanced_unit(bs)
    if bs > 16:
        c = [walk(bs) if bs in WALK_BS else cfg("fragment", 8, 1, 0, unit)]
    elif bs >= 8:
        c = [cfg("fragment", 32, 1, 256, unit // 4 if 8 < bs < 16 else unit // 2 if bs < 16 else unit)]
    elif bs == 1 or bs > 4:
        c = [cfg("merge_path", 32, 1, 256, unit // (8 if bs == 1 else 4))]
    else:
        c = []
        if bs == 4 and (dbl or not row):
            c.append(cfg("merge_path", 1, 3, 32, 128))
        c.append(cfg("merge_path", 1, 1, 256, 192 if bs == 2 else 128))
    near = ("irregular=1", "l2<1")
    if 2 <= bs <= 4:
        small = [(near, cfg("merge_path", 1, 1, 256, 64))]
    elif 5 <= bs <= 7 or (bs == 8 and not dbl and not row):
        small = [(near, cfg("merge_path", 1, 1, 256, 48))]
    elif bs == 8:
        small = ([] if dbl else [(near + ("memsm>=30",), cfg("merge_path", 1, 1, 256, 48))]) + \
            [(near, cfg("fragment", 32, 1, 256, 32))]
    else:
        small = []
    return small + [(("irregular=1",), x) for x in c]


def long_row_rows(bs, dbl, row):
    """A row of well over one SM's share of the blocks (rowshare >= 1.5: a
    rectangular LP's dense rows) at bs 24 and 32: the wide row walk over
    fragments, as for uneven rows, also where the rows' spread alone would
    not say so (a few hundred rows, one of them long).  Plain K2 or wide
    give the row to one thread array, which streams it a block at a time
    while the rest of the GPU has finished: lp_ship04l promoted to bs 32
    (402 block rows of up to 84 blocks, rowshare 1.74; H100, double),
    plain K2 50.2-52.3 us, the best cuSPARSE path 43.1-43.4 us, the walk
    33.9 us with units of 8 blocks and 35.0 us with the 4 that the plan fits
    to this matrix of one wave.  bcsstk16 split at bs 32 (rowshare 1.02,
    11 MB), where plain K2 ran at 2.1x cuSPARSE, stays below the
    threshold."""
    if bs not in WALK_BS:
        return []
    return [(("rowshare>=1.5",), walk(bs))]


def short_rows(bs, dbl, row):
    """Rows of a few blocks each (road networks, meshes and graphs in no
    banded order) on matrices past ~5 MB, where bandwidth rather than the
    launch decides: no real training matrix is like that (those with such
    rows hold under 2 MB), so these rows come from generated ones measured
    on an H100 (bench/results/plan-h100/short_rows.jsonl.gz: power-law
    rows of mean 2-4 and at most 8-12 blocks, 10-510 MB, both types, both
    timing modes) and, ahead of them, an H200 (rows in no banded order and
    rows in a local one).  A configuration after one that needs sm_90
    (staged=1) is the next best without it."""
    c = ("mean<4.5", "maxmean<=8", "l2>=0.1")
    return h200_short_rows(bs, dbl, row, c) + h200_local_rows(bs, dbl, c) + h100_short_rows(bs, dbl, c)


def without_l2(c):
    """The conditions c without their L2 bounds."""
    return tuple(x for x in c if not x.startswith("l2"))


def from_l2(c, lo):
    """The conditions c with their L2 bound raised to lo."""
    return without_l2(c) + ("l2>=%g" % lo,)


def h200_short_rows(bs, dbl, row, c):
    """Short rows in no banded order (spread >= 0.7: columns all over the
    matrix, as in a graph or a mesh not reordered) past a quarter of the
    L2, on an H200: bench/results/plan-h200/short_rows.jsonl.gz, power-law
    rows of mean 2-3 and at most 8 blocks, 16-420 MB, both orders, every
    kernel, solver-like.  The lane-sequential merge path (its copy-engine
    buffers at bs 2 and 4) or the fragment stream at double bs 8, where the
    H100's rows below took down to 0.50 of the fastest kernel (geometric
    mean per key 0.68-0.98), these 0.91-1.0 (0.97-1.0); the keys not here
    kept their row within 3%.  Rows of the same length in a banded order
    (luxembourg_osm, spread 0.15) keep the H100's rows: there the merge
    path took 0.77-0.95 of them."""
    h = ("memsm>=30", "spread>=0.7") + from_l2(c, 0.25)
    mp_copy = cfg("merge_path", 1, 2, 32, 128)
    pick = {(2, True, True): [(("staged=1",), mp_copy)],
            (2, False, True): [((), cfg("merge_path", 1, 1, 256, 192))],
            (4, True, False): [(("staged=1",), mp_copy)],
            (4, True, True): [(("staged=1",), mp_copy)],
            (4, False, False): [(("staged=1",), mp_copy)],
            (4, False, True): [((), cfg("merge_path", 1, 1, 256, 128))],
            (6, True, False): [((), cfg("merge_path", 1, 1, 256, 64))],
            (6, True, True): [((), cfg("merge_path", 1, 1, 256, 64))],
            (8, True, False): [((), cfg("fragment", 32, 1, 256, 64))],
            (8, True, True): [((), cfg("fragment", 32, 1, 256, 64))],
            (8, False, True): [((), cfg("merge_path", 1, 1, 256, 48))]}.get((bs, dbl, row), [])
    return [(h + extra, k) for extra, k in pick]


def h200_local_rows(bs, dbl, c):
    """Short rows in a local order (spread < 0.7: meshes, road and power
    networks), on an H200: bench/results/plan-h200/short_rows_banded.jsonl.gz,
    banded power-law rows of mean 2-3 and at most 8 blocks (the two check
    shapes not used), 5-420 MB, both orders, every kernel, solver-like.  The
    lane-block kernel, 4 lanes a row at bs 2-4 and 8 at bs 6 and float bs 8,
    was within 5% of the fastest kernel in nearly every case where the
    H100's rows below took 0.56-0.95 of it; but at bs 2 past ~1.2x the L2
    the merge path is ahead (7-21%), and at double bs 8 the fragment stream
    (4-23%).  At bs 8 below half the L2 the H100's rows stay.
    With fewer rows than the GPU holds in flight, the longest row of a
    warp's groups sets its time and more lanes a row win (a lane takes a
    block): on banded power-law matrices of 3000-80000 block rows
    (tiny_banded.jsonl.gz: mean 2-4, at most 8-16 blocks, bs 2-6, 0.25-80
    MB, both orders and types, every kernel, solver-like; the shapes of
    tiny_banded_check.jsonl.gz not used) 16 lanes where the longest row
    has more than 8 blocks below 16000 block rows, else 8 below 50000 (at
    bs 2 below 12000), from the smallest matrix up: within 5% of the
    fastest kernel in 155 of 176 cases (0.98 of it in geometric mean,
    lowest 0.86) where the vote and the 4-lane rows were in 101 (0.93,
    lowest 0.59).  In float at bs 8 the same rows took 0.95 of the fastest
    in geometric mean (lowest 0.77, 1.08x the best cuSPARSE path or more)
    where the rows before them took 0.89 (0.67, down to 0.90x cuSPARSE);
    double bs 8 keeps its rows (the vote's wide and fragment kernels were
    ahead)."""
    local = ("memsm>=30", "spread<0.7")
    h, few = local + c, local + without_l2(c)
    g4, g8 = cfg("lane_block", 4, 1, 128, 0), cfg("lane_block", 8, 1, 128, 0)
    long16 = (few + ("lenmax>=9", "mb<16000"), cfg("lane_block", 16, 1, 128, 0))
    if bs == 2:
        return [(few + ("mb<12000",), g8), (few + ("l2<1.2",), g4)]
    if bs in (3, 4):
        return [long16, (few + ("mb<50000",), g8), (h, g4)]
    if bs == 6:
        return [long16, (few, g8)]
    if bs == 8 and dbl:
        return [(local + from_l2(c, 0.5), cfg("fragment", 32, 1, 256, 128))]
    if bs == 8:
        return [long16, (few + ("mb<50000",), g8), (local + from_l2(c, 0.5), g8)]
    return []


def h100_short_rows(bs, dbl, c):
    """The H100's rows (the data of short_rows' docstring)."""
    staged = ("staged=1",)
    if bs == 2:
        return [(c + ("l2<1",), cfg("vec_stream", 32, 16, 128, 0)), (c, cfg("merge_path", 1, 1, 256, 192))]
    if bs == 3 and dbl:
        return [(c + staged, cfg("staged", 2, 1, 128, 3)), (c, cfg("merge_path", 1, 1, 256, 192))]
    if bs == 3:
        return [(c, cfg("merge_path", 1, 1, 256, 192))]
    if bs == 4:
        small = cfg("vec_stream", 32, 4 if dbl else 8, 128, 0)
        big = [(c + staged, cfg("staged", 2, 1, 128, 3)), (c, cfg("merge_path", 1, 2, 32, 128))] if dbl else \
            [(c, cfg("merge_path", 1, 3, 32, 128))]
        return [(c + ("l2<1",), small)] + big
    if bs == 6:
        return [(c + staged, cfg("staged", 4 if dbl else 2, 1, 128, 3)),
                (c, cfg("by_column", 32, 4, 128, 4) if dbl else cfg("merge_path", 1, 1, 256, 64))]
    if bs == 8 and dbl:  # the wide kernel up to 2x the L2 (held-out bcspwr10, 12 MB: 2.2x by-column)
        return [(c + ("l2<2",), cfg("wide", 32, 1, 128, 0)), (c, cfg("by_column", 32, 4, 128, 4))]
    if bs == 8:
        return [(c + staged, cfg("staged", 2, 1, 128, 3)), (c, cfg("vec_stream", 32, 2, 128, 0))]
    return []


WALK_BS = (24, 32)  # the sizes the wide row walk is built for above 16 (BSRMV_BALANCED_LIST)


def walk(bs):
    """The warp's row walk over fragments with the wide inner loop (16-byte
    loads along the blocks' lines), units of the balanced unit."""
    return cfg("fragment", 32, 1, 256, balanced_unit(bs))


def uneven_rows(bs, dbl, row):
    """Rows of uneven length: a row-length spread (cv) of 0.9 or more, or of
    0.45 or more with 9 or more blocks per row.
     - bs 12: the fragment stream (k_fragstream, compiled for bs 12 with 8-
       and 16-byte loads).  On an H100 (bench/results/plan-h100/bs12_*.jsonl.gz:
       every shared matrix promoted to bs 12, both types and orders, both
       timing modes) it was within 10% of the best kernel on every matrix
       past a third of the L2 with such rows; the learned rows picked K3
       there at 0.28-0.76x the best cuSPARSE path (orani678, sts4098,
       ca-GrQc).  Learned from the H100 data alone, bs 12 rows did worse on
       the held-out matrices.
     - bs 24 and 32, both orders and types, any size: the wide row walk
       (walk()), the same condition unchanged at bs 24, its first part
       alone at bs 32 (the moderately uneven rows below were measured at
       bs 24 only).  H100
       (bench/results/plan-h100/walk_bs24_32.jsonl.gz), CG traffic between
       calls, against the table's previous picks (plain K2 or wide; K2 or
       K3 thread arrays over fragments where irregular): rajat01, sts4098,
       orani678, ca-GrQc and lp_ship04l promoted (cv 1.1-4.3) 1.01-2.1x,
       the old picks down to 0.59x the best cuSPARSE path in row-major
       blocks and 0.94x in column-major ones, the walk 1.03x and up; three
       power-law matrices of 320-780 MB 1.04-1.9x; nasa2910 and ex31 (cv
       0.50-0.56, 30-60 blocks a row) 1.0-1.33x; bcsstk18 (cv 0.61, 12.5)
       0.92-1.02x.  add32, crack, west1505 and LeGresley_4908 (cv 0.32-0.76,
       4-6 blocks a row) stay with the plain rows: the walk ran at 0.43-1.08x
       them."""
    if bs == 12:
        frag = cfg("fragment", 32, 1, 256, 14)
        return [(("l2>=0.3", "cv>=0.9"), frag), (("l2>=0.3", "cv>=0.45", "mean>=9"), frag)]
    if bs == 24:
        return [(("cv>=0.9",), walk(bs)), (("cv>=0.45", "mean>=9"), walk(bs))]
    if bs == 32:
        return [(("cv>=0.9",), walk(bs))]
    return []


# ---- output -----------------------------------------------------------------

def table_rows(model, nheld, only=None):
    """The table in its order: a comment (str) or a row (type, order, bs,
    config, conditions); bs an int, or a range "LO-HI" (the K3 row).  With
    only = (type, order, bs): the rows of that key alone."""
    def keys(bss, orders=("col", "row")):
        return [(ty, o, bs) for bs in bss for ty in ("double", "float") for o in orders
                if only is None or only == (ty, o, bs)]

    out = ["Large regular matrices: the grid tuning (rule rows below) comes first."]
    for ty, o, bs in keys(range(1, 65)):
        out += [(ty, o, bs, c, GRID_LIKE + conds) for conds, c in plain_rows(bs, ty == "double", o == "row")]
    out.append("Short rows past ~5 MB: generated matrices (rule rows).")
    for ty, o, bs in keys((2, 3, 4, 6, 8)):
        out += [(ty, o, bs, c, conds) for conds, c in short_rows(bs, ty == "double", o == "row")]
    out.append("Uneven rows at bs 12, 24 and 32: the fragment stream and the wide row walk (rule rows).")
    for ty, o, bs in keys((12,) + WALK_BS):
        out += [(ty, o, bs, c, conds) for conds, c in uneven_rows(bs, ty == "double", o == "row")]
    # ahead of the learned rows only where there are learned rows
    out.append("Irregular rows (a power-law tail) at bs 2-8 past ~2.4 MB: the merge path, the fragment stream.")
    for ty, o, bs in keys(sorted({bs for bs, _, _ in model if 2 <= bs <= 8})):
        out += [(ty, o, bs, c, conds + (IRREGULAR_FIRST,))
                for conds, c in irregular_rows(bs, ty == "double", o == "row")]
    def bycolumn6(extra):
        return [(ty, o, bs, c, extra + conds) for ty, o, bs in keys((6,), ("col",))
                for conds, c in bycolumn6_rows(bs, ty == "double", False)]

    out.append("Column-major bs 6 on an H100's bandwidth per SM, where its rows were measured (rule rows).")
    out += bycolumn6(("memsm<30",))
    out.append("Learned rows: real and generated matrices, promoted and split, %d held out: the\n"
               "# vote of the nearest points of the type, order and bs (the points at the end)." % nheld)
    for (bs, ty, o), (points, l2max, mmmax, k) in sorted(model.items()):
        if only is None or only == (ty, o, bs):
            out.append((ty, o, bs, "nearest/%d" % k, ("l2<%g" % l2max, "maxmean<%g" % mmmax)))
    out.append("Column-major bs 6: by-column, two rows of a column per lane (rule rows).")
    out += bycolumn6(())
    out.append("Rule rows: large irregular (power-law) and regular (grid) matrices.")
    for ty, o, bs in keys(range(1, 65)):
        dbl, row = ty == "double", o == "row"
        out += [(ty, o, bs, c, conds) for conds, c in irregular_rows(bs, dbl, row) +
                long_row_rows(bs, dbl, row) + sweep_rows(bs, dbl, row) + plain_rows(bs, dbl, row)]
    out.append("Block sizes above 64: the column stream (K3), its row slices derived from bs (p0).")
    if only is None or only[2] > 64:
        out.append(("*", "*", "65-65535", cfg("k3_large", 32, 1, 0, 0), ()))
    return out


def rank(model, key, c):
    """The configurations the table tries for a case, in its order (a
    nearest row's in vote order), each once, those measured on the case
    only (not built for it otherwise): what src/plan/table.c ranks, and
    the plan's first is its choice."""
    bs, ty, order = key[1:4]
    out = []
    for r in table_rows(model, 0, (ty, order, bs)):
        if isinstance(r, str) or not all(_cond(cd, c["f"], key) for cd in r[4]):
            continue
        cf = r[3]
        cands = vote(model[(bs, ty, order)][0], int(cf.split("/")[1]), c["f"]) if cf.startswith("nearest/") else [cf]
        out += [x for x in cands if x in c["k"] and x not in out]
    return out


def predict(model, key, c):
    """The table's pick for a case."""
    r = rank(model, key, c)
    return r[0] if r else None


def write_table(out, model, device, nheld):
    out.write("# The GPU plan's default table: generated by bench/plan_table.py from\n"
              "# bench/plan_data.sh measurements%s; do not edit by hand.\n"
              "# type order bs config [conditions]: the first row that matches and whose\n"
              "# kernel is built is the plan (src/plan/table.c, docs/GPU.md).\n"
              % (" on an " + device if device else ""))
    for r in table_rows(model, nheld):
        if isinstance(r, str):
            out.write("# %s\n" % r)
        elif r[0] == "*":
            out.write("%-6s %s   %s %s\n" % (r[0], r[1], r[2], r[3]))
        else:
            out.write(("%-6s %s %2d %-32s %s\n" % (r[0], r[1], r[2], r[3], " ".join(r[4]))))
    out.write("# Points: type order bs, features l2 mean cv maxmean, then config=score for the\n"
              "# configurations it keeps, best first (a solver-like case of a training matrix).\n")
    for (bs, ty, order), (points, l2max, mmmax, k) in sorted(model.items()):
        for p in points:
            out.write("point %s %s %d %s %s\n" % (ty, order, bs, " ".join("%g" % p["f"][n] for n in FEATURES),
                                                  " ".join("%s=%.3f" % (n, v) for n, v in sorted(
                                                      p["s"].items(), key=lambda x: (-x[1], x[0])))))


def report(label, picks):
    """How the picks [(key, case, cfg)] do, per timing mode, on stderr."""
    gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    modes = collections.defaultdict(list)
    for key, c, pick in picks:
        t = c["k"].get(pick)
        if t is None:
            print("no choice for", key, file=sys.stderr)
            continue
        bc = min(c["cs"].values())
        modes[key[4]].append((c["best"] / t, bc / t, bc / c["best"]))
    for solver, v in sorted(modes.items()):
        e, r = [x[0] for x in v], [x[1] for x in v]
        print("%-9s %-12s %4d cases: choice/best bsrmv gm %.3f, >=0.95 in %.0f%%, >=0.90 in %.0f%%, min %.2f; "
              "vs best cuSPARSE gm %.3f, %d below 1.0 (min %.2f; best bsrmv below 1.0: %d)"
              % (label, "solver" if solver else "back-to-back", len(v), gm(e), 100 * np.mean([x >= 0.95 for x in e]),
                 100 * np.mean([x >= 0.9 for x in e]), min(e), gm(r), sum(x < 1 for x in r), min(r),
                 sum(x[2] < 1 for x in v)), file=sys.stderr)


def main():
    global L2_BYTES, MEMSM
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", nargs="+", help="JSON lines of bench/plan_data.sh")
    ap.add_argument("--matrices", default="../shared/matrices",
                    help="the folders of the matrices of the data, separated by colons")
    ap.add_argument("--holdout", default=HOLDOUT, help="matrices kept out of the learning")
    ap.add_argument("--k", type=int, default=K_NEAR, help="the points that vote")
    ap.add_argument("--keep", type=int, default=KEEP, help="the configurations a point keeps")
    ap.add_argument("--objective", default="hit", choices=sorted(OBJECTIVES), help="a point's score of a configuration")
    ap.add_argument("--measured", type=int, default=0, metavar="N",
                    help="also report the measured choice of the table's choice and the next N of its order "
                         "(bsrmv_gpu_matrix_tune with max_candidates N), from the records")
    ap.add_argument("--bounds", type=int, default=0, metavar="N",
                    help="also report, on the held-out cases, the best of the configurations that are among "
                         "the N best of some training case of the same type, order and bs: what any table "
                         "choosing among them could reach")
    ap.add_argument("--cv", action="store_true",
                    help="also leave each matrix out in turn: learn on the others, pick for it")
    ap.add_argument("--l2-mib", type=float, default=60, help="the L2 size the device reports (H200: 60, H100: 50)")
    ap.add_argument("--memsm", type=float, default=MEMSM,
                    help="its peak DRAM GB/s per SM, as src/cuda/plan.cu computes it (H200: 37, H100 SXM: 25)")
    ap.add_argument("--device", default="", help="the device the data was measured on, for the header")
    ap.add_argument("--check", action="store_true", help="sum up bench/plan_check.sh records instead")
    ap.add_argument("--best", nargs="+", default=[],
                    help="with --check: records of every kernel on the same cases, the fastest to compare with")
    ap.add_argument("--other", nargs="+", default=[],
                    help="also report the learned table's pick on these measurements of another device")
    ap.add_argument("--other-l2-mib", type=float, default=50, help="that device's L2 size")
    ap.add_argument("--other-memsm", type=float, default=25, help="that device's peak DRAM GB/s per SM")
    a = ap.parse_args()
    if a.check:
        check(a.data, a.best)
        return
    L2_BYTES = a.l2_mib * 2**20
    MEMSM = a.memsm
    cases = load(a.data, a.matrices)
    held = set(a.holdout.split(",")) - {""}
    train = {k: c for k, c in cases.items() if matrix_of(c) not in held}
    model = learn(train, a)
    write_table(sys.stdout, model, a.device, len(held))
    picks = sorted((key, c, predict(model, key, c)) for key, c in cases.items())
    report("held-out", [p for p in picks if matrix_of(p[1]) in held])
    report("training", [p for p in picks if matrix_of(p[1]) not in held])
    if a.measured:
        # the fastest of the first N + 1 by their records (no timing noise)
        tops = [(key, c, min(rank(model, key, c)[:a.measured + 1], key=lambda k: c["k"][k]))
                for key, c in sorted(cases.items())]
        report("held-%d" % a.measured, [p for p in tops if matrix_of(p[1]) in held])
    if a.bounds:
        report("bound-%d" % a.bounds, bounds(train, [p for p in picks if matrix_of(p[1]) in held], a))
    if a.cv:
        names = sorted({matrix_of(c) for c in cases.values()})
        cv = []
        for n in names:
            m = learn({k: c for k, c in cases.items() if matrix_of(c) != n}, a)
            cv += [(key, c, predict(m, key, c)) for key, c in sorted(cases.items()) if matrix_of(c) == n]
        report("cv-%d" % len(names), cv)
    if a.other:
        # the features of the other device's cases use its L2 and bandwidth
        L2_BYTES, MEMSM = a.other_l2_mib * 2**20, a.other_memsm
        other = load(a.other, a.matrices)
        picks = sorted((key, c, predict(model, key, c)) for key, c in other.items())
        report("other-held", [p for p in picks if matrix_of(p[1]) in held])
        report("other-train", [p for p in picks if matrix_of(p[1]) not in held])
        if a.bounds:
            report("other-bound-%d" % a.bounds, bounds(train, [p for p in picks if matrix_of(p[1]) in held], a))


def bounds(train, picks, opt):
    """The picks [(key, case, cfg)] with each cfg replaced by the fastest on
    the case of the configurations among the opt.bounds best (by the
    objective) of some solver-like training case of its type, order and bs:
    an oracle that knows which training matrix to copy.  Where it falls
    short, no table that picks among those configurations does better."""
    obj = OBJECTIVES[opt.objective]
    tops = collections.defaultdict(set)
    for key, c in train.items():
        if key[4]:
            tops[key[1:4]] |= set(make_point(c, obj, opt.bounds)["s"])
    out = []
    for key, c, pick in picks:
        cand = [k for k in tops.get(key[1:4], ()) if k in c["k"]]
        out.append((key, c, min(cand, key=lambda k: c["k"][k]) if cand else pick))
    return out


def check(paths, best_paths=()):
    """The dispatcher's pick (auto, or the measured choice) against the best
    cuSPARSE path, per block order and timing mode (bench/plan_check.sh); where
    the records also time every kernel (--gpu-kernels all), or best_paths
    (other records of the same cases) do, against the fastest of them too.
    Records of the measured choice with a candidate limit (their field
    tune_max, bsrmv bench --gpu-tune-max) are summed up per limit."""
    groups = collections.defaultdict(dict)
    fastest = {}
    for p in best_paths:
        for r in records(p):
            if r.get("backend") == "gpu" and not r["kernel"].startswith("auto:"):
                key = (r["matrix"], r["bs"], r["type"], r["order"], bool(r.get("traffic_bytes", 0)))
                fastest[key] = min(fastest.get(key, math.inf), r["time_ms"])
    for p in paths:
        for r in records(p):
            if r.get("backend") not in ("gpu", "cusparse"):
                continue
            key = (r["matrix"], r["bs"], r["type"])
            solver = bool(r.get("traffic_bytes", 0))
            g = groups[(r.get("tune_max", ""), r["order"], "solver" if solver else "back-to-back")]
            c = g.setdefault(key, {"cs": [], "k": list(filter(None, [fastest.get(key + (r["order"], solver))]))})
            if r["backend"] == "cusparse":
                c["cs"].append(r["time_ms"])
            elif r["kernel"].startswith("auto:"):
                c["auto"] = r["time_ms"]
            else:
                c["k"].append(r["time_ms"])
    for (limit, order, mode), g in sorted(groups.items()):
        label = "%s%s %-12s" % ("candidates %s, " % limit if limit else "", order, mode)
        r = [min(c["cs"]) / c["auto"] for c in g.values() if c["cs"] and "auto" in c]
        print("%s %4d cases: pick / best cuSPARSE gm %.3f, %d below 1.0 (%.1f%%), min %.2f"
              % (label, len(r), math.exp(sum(map(math.log, r)) / len(r)), sum(x < 1 for x in r),
                 100.0 * sum(x < 1 for x in r) / len(r), min(r)))
        e = [c["auto"] / min(c["k"]) for c in g.values() if c["k"] and "auto" in c]
        if e:
            print("%s %4d cases: pick within 5%% of the best kernel %.1f%%, within 10%% %.1f%%, worst %.2fx"
                  % (label, len(e), 100.0 * sum(x <= 1.05 for x in e) / len(e),
                     100.0 * sum(x <= 1.10 for x in e) / len(e), max(e)))


def _cond(cd, f, key):
    for op in ("<=", ">=", "<", "="):
        if op in cd:
            name, v = cd.split(op)
            v = float(v)
            # the data holds no float-value, double-vector cases (mixed 0)
            x = {"staged": 1.0, "mixed": 0.0, "memsm": MEMSM, "rowsm": f["mb"] * key[1] / 132,
                 "rowshare": f["maxmean"] * f["mean"] * 132 / f["nnzb"] if f["nnzb"] else 0.0}.get(name, f.get(name))
            return {"<=": x <= v, ">=": x >= v, "<": x < v, "=": x == v}[op]
    return True


if __name__ == "__main__":
    main()
