#!/usr/bin/env python3
"""Summary tables of the JSON lines from bench/cpu_peers.sh.

  table.py RESULTS.jsonl

Per bs and thread count: each library's GB/s (best of its rounds: on a
shared machine the fastest call set is the least disturbed one), then
bsrmv / best peer twice: "best" compares best rounds, "median" the median
rounds.  bsrmv in the ratios is the in-process library run (bsrmv(lib)),
timed in the same process, interleaved with PETSc SeqBAIJ and librsb and
with as many rounds as they; bsrmv(cli) (`bsrmv bench`) is shown beside it.  A second table lists
every round, so the spread (noise) is visible.  Records whose rel_err is
above 1e-8 are flagged and left out of the best.
"""
import json
import sys
from collections import defaultdict

PEERS = ["petsc-baij", "petsc-aij", "petsc-mpibaij", "librsb", "scipy-bsr", "scipy-csr"]
COLS = [("bsrmv", "cli"), ("bsrmv", "lib")] + [(p, None) for p in PEERS]
TOL = 1e-8


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def label(c):
    b, via = c
    return f"{b}({via})" if via else b


def main():
    recs = []
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("backend") in ("bsrmv",) + tuple(PEERS):
                    recs.append(r)
    runs = defaultdict(list)  # (bs, threads, col) -> [gbps ...] in order
    bad = []
    grids = {}
    for r in recs:
        col = (r["backend"], r.get("via")) if r["backend"] == "bsrmv" else (r["backend"], None)
        if not (r["rel_err"] <= TOL):
            bad.append(r)
            continue
        runs[(r["bs"], r["threads"], col)].append(r["gbps"])
        grids[r["bs"]] = (r["matrix"], r["nnzb"], r["bytes"])
    keys = sorted({(bs, t) for (bs, t, _) in runs})

    w = 12
    head = f"{'bs':>3} {'thr':>3} " + " ".join(f"{label(c):>{w}}" for c in COLS)
    head += f" {'best peer':>14} {'ratio best':>10} {'ratio med':>9}"
    print("GB/s (bytes = val + col_idx(4B) + row_ptr(8B) + x + y, bsrmv's count for every"
          " library), best of rounds")
    print(head)
    print("-" * len(head))
    for bs, t in keys:
        cells, best_peer, best_name = [], 0.0, "-"
        for c in COLS:
            v = runs.get((bs, t, c))
            cells.append(f"{max(v):>{w}.2f}" if v else f"{'-':>{w}}")
            if v and c[0] != "bsrmv" and max(v) > best_peer:
                best_peer, best_name = max(v), c[0]
        lib = runs.get((bs, t, ("bsrmv", "lib")))
        med_peer = max((median(v) for (b2, t2, c), v in runs.items()
                        if b2 == bs and t2 == t and c[0] != "bsrmv"), default=0.0)
        ratio = f"{max(lib) / best_peer:>10.2f}" if lib and best_peer > 0 else f"{'-':>10}"
        rmed = f"{median(lib) / med_peer:>9.2f}" if lib and med_peer > 0 else f"{'-':>9}"
        print(f"{bs:>3} {t:>3} " + " ".join(cells) + f" {best_name:>14} {ratio} {rmed}")
    print()
    print("matrices:", "; ".join(f"bs {bs}: {m}, nnzb {n}, {b / 1e6:.0f} MB/SpMV"
                                 for bs, (m, n, b) in sorted(grids.items())))
    print()
    print("every round, GB/s in run order (spread = noise of the shared machine)")
    for bs, t in keys:
        parts = []
        for c in COLS:
            v = runs.get((bs, t, c))
            if v:
                parts.append(f"{label(c)} " + " ".join(f"{x:.1f}" for x in v))
        print(f"bs {bs:>2} threads {t}: " + " | ".join(parts))
    if bad:
        print()
        print(f"WRONG RESULTS (rel_err > {TOL:g}), left out above:")
        for r in bad:
            print(f"  bs {r['bs']} threads {r['threads']} {r['backend']} rel_err {r['rel_err']:.3g}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
