#!/usr/bin/env python3
"""Table of scripts/gpu_ab.sh records: per case and bsrmv kernel, GB/s of
each variant; the best cuSPARSE path and the gather bound of each
variant's run as noise references (they do not change between variants);
the last column is the largest error against the CPU reference that any
variant's check of that kernel gave (NaN or none counts as inf)."""
import json
import sys
from collections import OrderedDict, defaultdict


def main(path):
    recs = [json.loads(l) for l in open(path) if l.startswith("{")]
    variants = list(OrderedDict.fromkeys(r["variant"] for r in recs))
    read = {r["variant"]: r["gbps"] for r in recs if r.get("kernel") == "gpu_read"}
    cell = defaultdict(dict)  # (case, kernel) -> variant -> gbps
    worst = defaultdict(float)  # (case, kernel) -> largest rel_err of any variant
    for r in recs:
        if "matrix" not in r or r.get("backend") not in ("gpu", "cusparse", "bound"):
            continue
        case = "%s bs%d" % (r["matrix"], r["bs"])
        if (r.get("type"), r.get("order")) != ("double", "col"):
            case += " %s %s" % (r.get("type"), r.get("order"))
        k = "cuSPARSE best" if r["backend"] == "cusparse" else r["kernel"]
        prev = cell[(case, k)].get(r["variant"], 0)
        cell[(case, k)][r["variant"]] = max(prev, r["gbps"])
        if r["backend"] == "gpu":
            e = r.get("rel_err")
            worst[(case, k)] = max(worst[(case, k)], float("inf") if e is None or e != e else e)
    print("read-only kernel: " + "  ".join("%s %.0f" % (v, read.get(v, 0)) for v in variants))
    print("%-48s %-34s " % ("case", "kernel") + " ".join("%9s" % v for v in variants) +
          "   " + " ".join("%7s" % ("/" + v) for v in variants[1:]) + "  max rel_err")
    for (case, k), d in cell.items():
        base = d.get(variants[0])
        ratios = ["%7.3f" % (d[v] / base) if base and v in d else "      -" for v in variants[1:]]
        print("%-48s %-34s " % (case[:48], k[:34]) +
              " ".join("%9.0f" % d[v] if v in d else "        -" for v in variants) + "   " + " ".join(ratios) +
              ("  %.1e" % worst[(case, k)] if (case, k) in worst else ""))


if __name__ == "__main__":
    main(sys.argv[1])
