#!/usr/bin/env python3
"""Per-kernel table of an `ncu --csv --print-units base` run that collected
gpu__time_duration.sum and dram__bytes_{read,write}.sum: launches, mean time,
mean DRAM bytes and the DRAM GB/s each kernel reached, so the time of a solver
iteration can be placed kernel by kernel against the read bandwidth.  Any
other metric collected (occupancy, stall reasons, L2 bytes) is shown as its
mean per launch."""
import csv
import re
import sys
from collections import OrderedDict


def short(name):
    name = re.sub(r"\(.*", "", name)          # drop the argument list
    name = re.sub(r"bsrmv_cuda::|\(anonymous namespace\)::", "", name)
    return name[:60]


def tag_of(metric):
    """A column head for a metric: its counter name without the unit prefix,
    the rollup and the common words, e.g. sm__warps_active.avg.pct_of_peak_
    sustained_active -> warps_active, smsp__warp_issue_stalled_long_
    scoreboard_per_warp_active.pct -> stall_long_scoreboard."""
    t = re.sub(r"^(smsp|sm|lts|launch)__", "", metric.split(".")[0])
    t = re.sub(r"^warp_issue_stalled_", "stall_", t)
    return re.sub(r"_per_warp_active$", "", t)[:22]


def main(path):
    rows = [r for r in csv.reader(open(path)) if r]
    head = next(i for i, r in enumerate(rows) if "Metric Name" in r)
    cols = rows[head]
    ix = {c: cols.index(c) for c in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    per = OrderedDict()
    for r in rows[head + 1:]:
        if len(r) < len(cols):
            continue
        k = per.setdefault(r[ix["ID"]], {"name": short(r[ix["Kernel Name"]])})
        try:
            k[r[ix["Metric Name"]]] = float(r[ix["Metric Value"]].replace(",", ""))
        except ValueError:
            pass
    fixed = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")
    extra = list(OrderedDict.fromkeys(m for k in per.values() for m in k if m not in fixed + ("name",)))
    agg = OrderedDict()
    for k in per.values():
        a = agg.setdefault(k["name"], {"n": 0})
        a["n"] += 1
        for m in fixed + tuple(extra):
            a[m] = a.get(m, 0.0) + k.get(m, 0.0)
    total = sum(a["gpu__time_duration.sum"] for a in agg.values()) or 1
    # other metrics (occupancy, stalls, ...) as means, headed by a short name
    tag = [tag_of(m) for m in extra]
    print(f"{'kernel':60} {'n':>4} {'us':>9} {'%time':>6} {'MB rd':>8} {'MB wr':>8} {'GB/s':>7}" +
          "".join(f" {t:>{max(len(t), 9)}}" for t in tag))
    for name, a in agg.items():
        n, t = a["n"], a["gpu__time_duration.sum"]
        rd, wr = a["dram__bytes_read.sum"], a["dram__bytes_write.sum"]
        print(f"{name:60} {n:4d} {t / n / 1e3:9.1f} {100 * t / total:6.1f} {rd / n / 1e6:8.1f} "
              f"{wr / n / 1e6:8.1f} {(rd + wr) / t if t else 0:7.0f}" +
              "".join(f" {a[m] / n:{max(len(t), 9)}.4g}" for m, t in zip(extra, tag)))

if __name__ == "__main__":
    main(sys.argv[1])
