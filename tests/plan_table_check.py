#!/usr/bin/env python3
"""The built-in GPU plan table against bench/plan_table.py and its data.

1. src/plan/default.tbl is what bench/plan_table.py makes from
   bench/results/plan-h200 (the command of its README, with the generated
   matrices of bench/synth_matrices.py written to a temporary folder): the
   table in the library is the learned one, and the learning is
   deterministic.
2. The choice plan_table.py evaluates (its statistics, --cv, --measured) is
   the table's: for every measured case, the configurations of the rows of
   the table text whose type, order, bs and conditions match, in row order
   (a nearest row's in vote order), each once, those measured on the case
   (the C ranking, src/plan/table.c), are plan_table.rank's, and the first
   is plan_table.predict's.

  plan_table_check.py REPO MATRICES
Exit 0 pass, 1 fail, 77 skipped (no numpy/scipy or no shared matrices).
"""
import argparse
import collections
import glob
import io
import os
import sys
import tempfile


def main():
    repo, matrices = sys.argv[1], sys.argv[2]
    try:
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError:
        print("plan_table_check: skipped (no numpy or scipy)")
        return 77
    if not glob.glob(os.path.join(matrices, "*.mtx.gz")):
        print("plan_table_check: skipped (no matrices in %s)" % matrices)
        return 77
    sys.path.insert(0, os.path.join(repo, "bench"))
    import plan_table as P
    import synth_matrices

    data = os.path.join(repo, "bench", "results", "plan-h200")
    files = sorted(glob.glob(os.path.join(data, "col_*.jsonl.gz"))) + [
        os.path.join(data, "row_solver.jsonl.gz"), os.path.join(data, "synth_solver.jsonl.gz")]
    with tempfile.TemporaryDirectory() as synth:
        synth_matrices.write_all(synth)
        cases = P.load(files, matrices + ":" + synth)
    held = set(P.HOLDOUT.split(","))
    opt = argparse.Namespace(k=P.K_NEAR, keep=P.KEEP, objective="hit")
    model = P.learn({k: c for k, c in cases.items() if P.matrix_of(c) not in held}, opt)
    text = io.StringIO()
    P.write_table(text, model, "NVIDIA H200", len(held))
    with open(os.path.join(repo, "src", "plan", "default.tbl")) as f:
        built_in = f.read()
    if text.getvalue() != built_in:
        print("FAIL: src/plan/default.tbl is not what bench/plan_table.py makes from %s" % data)
        return 1

    rows = collections.defaultdict(list)
    points = collections.defaultdict(list)
    for line in built_in.splitlines():
        tok = line.split("#")[0].split()
        if tok and tok[0] == "point":
            f = dict(zip(P.FEATURES, map(float, tok[4:8])))
            s = {cs.split("=")[0]: float(cs.split("=")[1]) for cs in tok[8:]}
            points[(tok[1], tok[2], int(tok[3]))].append({"x": P.coords(f), "s": s, "floor": min(s.values())})
        elif tok and tok[0] != "*":
            rows[(tok[0], tok[1], int(tok[2]))].append((tok[3], tok[4:]))

    def configs(key, row, f):
        """A row's configurations for the features f, in the order tried."""
        if row.startswith("nearest/"):
            return P.vote(points[(key[2], key[3], key[1])], int(row.split("/")[1]), f)
        return [row]

    bad = 0
    for key, c in sorted(cases.items()):
        ranked = []
        for row, conds in rows[(key[2], key[3], key[1])]:
            if all(P._cond(cd, c["f"], key) for cd in conds):
                ranked += [cf for cf in configs(key, row, c["f"]) if cf in c["k"] and cf not in ranked]
        if not ranked or ranked != P.rank(model, key, c) or ranked[0] != P.predict(model, key, c):
            bad += 1
            if bad <= 5:
                print("FAIL: %s: the table ranks %s, plan_table.rank %s" % (key, ranked[:4], P.rank(model, key, c)[:4]))
    if bad:
        print("FAIL: %d of %d cases" % (bad, len(cases)))
        return 1
    print("plan_table_check: ok (%d cases, %d learned keys, %d points)"
          % (len(cases), len(model), sum(map(len, points.values()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
