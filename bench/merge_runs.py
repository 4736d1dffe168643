#!/usr/bin/env python3
"""One run directory from the parts of a suite run made by several processes.

  bench/merge_runs.py --out DIR [--label L] [--commit C] [--command TEXT]
                      [--note TEXT]... [--concurrent] PART...

A GPU suite run split over processes (by --sets, --matrices DIR and
GPU_REAL_ORDERS, one process per GPU of a machine: bench/README.md) leaves
one directory per part.  The records of the parts are concatenated per file
name in the order given (matrices.jsonl without repeats, stream.jsonl the
first part's alone: one measurement of the device), each written gzipped as
the committed runs are; suite.log holds each part's log under a header.
meta.json is the first part's with elapsed_s and failed_commands summed,
start_utc the earliest, load_end the last part's, budget_s 0 unless a part
ran out of its budget, and the notes added.  --concurrent: the parts ran at
the same time, each counting the others as other load, so no other_load is
kept (else the largest part's).  bench/report.py then reads DIR as one run.
"""
import argparse
import gzip
import json
import os
import sys


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [line if line.endswith("\n") else line + "\n" for line in f if line.strip()]


def part_files(part):
    """{name.jsonl: path} of one part (plain or gzipped)."""
    out = {}
    for name in sorted(os.listdir(part)):
        if name.endswith(".jsonl") or name.endswith(".jsonl.gz"):
            out[name[:-3] if name.endswith(".gz") else name] = os.path.join(part, name)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("parts", nargs="+", help="the parts' result directories (each with meta.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", help="the run's label (default: the first part's)")
    ap.add_argument("--commit", help="the commit of the code that ran (default: the first part's)")
    ap.add_argument("--command", help="how the parts were run (default: the first part's command)")
    ap.add_argument("--note", action="append", default=[], help="a line for the run's notes (repeatable)")
    ap.add_argument("--concurrent", action="store_true", help="the parts ran at the same time")
    a = ap.parse_args()

    metas = []
    for part in a.parts:
        try:
            with open(os.path.join(part, "meta.json")) as f:
                metas.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"merge_runs: {part}: no readable meta.json ({e})", file=sys.stderr)
            return 1
    modes = {m.get("mode") for m in metas}
    if len(modes) != 1:
        print(f"merge_runs: the parts are of different modes {sorted(map(str, modes))}", file=sys.stderr)
        return 1

    records, logs = {}, []
    for part in a.parts:
        for name, path in part_files(part).items():
            lines = read_lines(path)
            have = records.setdefault(name, [])
            if name == "stream.jsonl" and have:
                continue
            if name == "matrices.jsonl":
                lines = [line for line in lines if line not in have]
            have += lines
        log = os.path.join(part, "suite.log")
        if os.path.exists(log):
            with open(log) as f:
                logs.append(f"suite: ==== part {os.path.basename(os.path.normpath(part))} ====\n" + f.read())

    os.makedirs(a.out, exist_ok=True)
    for name, lines in records.items():
        with gzip.open(os.path.join(a.out, name + ".gz"), "wt") as f:
            f.writelines(lines)
    with open(os.path.join(a.out, "suite.log"), "w") as f:
        f.writelines(logs)

    meta = dict(metas[0])
    meta["elapsed_s"] = sum(m.get("elapsed_s", 0) for m in metas)
    meta["failed_commands"] = sum(m.get("failed_commands", 0) for m in metas)
    meta["start_utc"] = min(m.get("start_utc", "") for m in metas)
    meta["load_end"] = metas[-1].get("load_end", "")
    ran_out = any('"time budget' in line for line in records.get("skipped.jsonl", []))
    meta["budget_s"] = max(m.get("budget_s", 0) for m in metas) if ran_out else 0
    loads = [m["other_load"] for m in metas if "other_load" in m]
    meta.pop("other_load", None)
    if loads and not a.concurrent:
        meta["other_load"] = max(loads)
    for key in ("label", "commit", "command"):
        if getattr(a, key):
            meta[key] = getattr(a, key)
    meta["notes"] = list(meta.get("notes", [])) + a.note
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(meta, f, separators=(",", ":"))
    print(f"merge_runs: {len(a.parts)} parts, {sum(map(len, records.values()))} records, "
          f"{meta['elapsed_s']} s -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
