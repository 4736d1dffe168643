#!/usr/bin/env python3
"""docs/RESULTS.md from the suite's JSON lines (bench/suite.sh).

  bench/report.py [--cpu DIR]... [--gpu DIR]... [--gpu-mpi DIR] [--out docs/RESULTS.md]
                  [--template bench/RESULTS.template.md] [--readme README.md]

Without --cpu/--gpu/--gpu-mpi: the newest full run of each mode in
bench/results/ (a quick run when there is no full one), one per machine
(label: a CPU model, a GPU model); --cpu and --gpu may be given more than
once.  Every (matrix, bs) measured is a
row, with bsrmv / best peer on it, good or bad; geometric means per set;
what was skipped and why; wrong results listed apart.  Values are medians
over the rounds and processes of a run (bsrmv: the in-process library
calls and the CLI together).  With --readme, the headline table replaces
what lies between the README's bench:headline markers.
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchdata as bd  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SET_TITLES = {
    "grid": "27-point grids (past the caches)",
    "real": "Real patterns: promoted (KSPARSE) and split at the natural bs",
    "sweep": "Block-size sweep: one real matrix split at bs 2..32 (Eberhardt & Hoemmen Fig. 9)",
    "generated": "Generated irregular patterns: power-law rows, arrow",
    "bridge": "Bridge stiffness matrices (bsrmv bridge --write-mtx), split at the natural bs",
}


ORDER_NAMES = {"col": "column-major", "row": "row-major"}


def set_title(run, set_):
    """A set's title; where the GPU run also holds other value types and
    block orders of it, with the type and order of this one."""
    base, t, o = bd.config_of(set_)
    if set_ == base and not run.config_sets(base):
        return SET_TITLES[base]
    return f"{SET_TITLES[base]}: {t}, {ORDER_NAMES[o]} blocks"


def peer_name(set_, p):
    """A cuSPARSE column's name in a set's value type (cusparseSbsrmv in float)."""
    return p.replace("Dbsrmv", "Sbsrmv") if bd.config_of(set_)[1] == "float" else p


def fmt(x, nd=1):
    if x is None or x != x:
        return "-"
    return f"{x:.{nd}f}"


def ratio_cell(r):
    if r is None or r != r:
        return "-"
    return f"**{r:.2f}**" if r < 1 else f"{r:.2f}"


def rel(path):
    return os.path.relpath(path, ROOT)


def mb_of(run, set_, case, bs, device):
    for k, c in run.cells.items():
        if k[:4] == (set_, case, bs, device):
            return c["bytes"] / 1e6
    return None


def matrix_label(run, set_, case, bs, device):
    """The CLI's matrix name where it says more than the case (grid sizes)."""
    for k, c in run.cells.items():
        if k[:4] == (set_, case, bs, device):
            return c["matrix"] if set_ in ("grid", "generated", "scaling") else case
    return case


def skipped_lines(run, set_):
    by = defaultdict(list)
    for s in run.skipped:
        if s["set"] == set_:
            by[(s["case"], re.sub(r"~\d+ MB", "~N MB", s["skipped"]))].append(s["bs"])
    return [f"- {case} bs {', '.join(map(str, sorted(set(bss))))}: {why}"
            for (case, why), bss in sorted(by.items())]


# ---- CPU --------------------------------------------------------------------------


def cpu_columns(run, set_):
    """(lib, threads) columns present in a set, in display order."""
    cols = []
    for lib in bd.CPU_LIBS:
        for t in run.threads_of(set_, "cpu", lib):
            cols.append((lib, t))
    return cols


def cpu_table(run, set_, lines, summary):
    rows = run.rows(set_, "cpu")
    if not rows:
        return
    cols = cpu_columns(run, set_)
    nmax = max(t for _, t in cols)
    head = ["matrix", "bs", "MB"] + [f"{lib} {t}t" for lib, t in cols]
    head += ["best peer 1t", "bsrmv/best 1t", f"best peer any t", f"bsrmv {nmax}t/best any"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    r1s, ras = [], []
    small = []
    for case, bs in rows:
        cells = {c: run.cell(set_, case, bs, "cpu", *c) for c in cols}
        row = [matrix_label(run, set_, case, bs, "cpu"), str(bs), fmt(mb_of(run, set_, case, bs, "cpu"))]
        row += [fmt(cells[c]["gbps"]) if cells[c] else "-" for c in cols]
        peers1 = [(cells[c]["gbps"], c[0]) for c in cols if c[0] != "bsrmv" and c[1] == 1 and cells[c]]
        peersa = [(cells[c]["gbps"], f"{c[0]} {c[1]}t") for c in cols if c[0] != "bsrmv" and cells[c]]
        b1 = cells.get(("bsrmv", 1))
        ba = cells.get(("bsrmv", nmax))
        best1 = max(peers1) if peers1 else None
        besta = max(peersa) if peersa else None
        r1 = b1["gbps"] / best1[0] if b1 and best1 else None
        ra = ba["gbps"] / besta[0] if ba and besta else None
        row += [f"{best1[1]} {best1[0]:.1f}" if best1 else "-", ratio_cell(r1),
                f"{besta[1]} {besta[0]:.1f}" if besta else "-", ratio_cell(ra)]
        lines.append("| " + " | ".join(row) + " |")
        if r1:
            r1s.append(r1)
        if ra:
            ras.append(ra)
        if b1 and b1["bytes"] <= bd.SMALL_BYTES["cpu"]:
            small.append((case, bs, cells, best1, besta))
    lines.append("")
    lines.append(f"Geometric mean over {len(r1s)} rows: bsrmv/best peer at 1 thread "
                 f"**{fmt(bd.geomean(r1s), 2)}** (min {fmt(min(r1s, default=None), 2)}, "
                 f"max {fmt(max(r1s, default=None), 2)}, {sum(r < 1 for r in r1s)} rows below 1); "
                 f"bsrmv on {nmax} threads / best peer at any thread count "
                 f"**{fmt(bd.geomean(ras), 2)}** over {len(ras)} rows (min {fmt(min(ras, default=None), 2)}, "
                 f"max {fmt(max(ras, default=None), 2)}, {sum(r < 1 for r in ras)} below 1).")
    lines.append("")
    summary.append((set_, len(rows), r1s, ras))
    return small


def cpu_small_table(run, smalls, lines):
    """Time per SpMV (microseconds) where the whole SpMV fits the cache."""
    if not smalls:
        return
    lines.append(f"Time per SpMV in microseconds, matrices whose SpMV moves at most "
                 f"{bd.SMALL_BYTES['cpu'] / 1e6:.0f} MB (cache-resident: latency and per-call overhead "
                 "count more than bandwidth):")
    lines.append("")
    lines.append("| set | matrix | bs | MB | bsrmv 1t us | best peer 1t us | bsrmv all-t us | "
                 "best peer any-t us | ratio 1t | ratio any |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    rts = []
    for set_, case, bs, cells, best1, besta in smalls:
        nmax = max(t for (_, t) in cells)
        b1, ba = cells.get(("bsrmv", 1)), cells.get(("bsrmv", nmax))

        def peer_time(best):
            if not best:
                return None
            for c, v in cells.items():
                name = c[0] if best[1] == c[0] else f"{c[0]} {c[1]}t"
                if v and c[0] != "bsrmv" and name == best[1] and abs(v["gbps"] - best[0]) < 1e-12:
                    return v["time_ms"] * 1e3
            return None
        p1, pa = peer_time(best1), peer_time(besta)
        t1 = b1["time_ms"] * 1e3 if b1 else None
        ta = ba["time_ms"] * 1e3 if ba else None
        r1 = p1 / t1 if p1 and t1 else None
        ra = pa / ta if pa and ta else None
        if r1:
            rts.append(r1)
        lines.append(f"| {set_} | {case} | {bs} | {fmt(b1['bytes'] / 1e6 if b1 else None)} | {fmt(t1)} | "
                     f"{fmt(p1)} | {fmt(ta)} | {fmt(pa)} | {ratio_cell(r1)} | {ratio_cell(ra)} |")
    lines.append("")
    lines.append(f"Geometric mean of best-peer time / bsrmv time at 1 thread over these {len(rts)} rows: "
                 f"**{fmt(bd.geomean(rts), 2)}**.")
    lines.append("")


def scaling_table(run, device_label, lines):
    rows = run.rows("scaling", "cpu")
    if not rows:
        return
    threads = sorted({k[5] for k in run.cells if k[0] == "scaling" and k[3] == "cpu"})
    lines.append("| matrix | bs | library | " + " | ".join(f"{t}t GB/s" for t in threads) + " |")
    lines.append("|---|---|---|" + "---|" * len(threads))
    for case, bs in rows:
        for lib in bd.CPU_LIBS:
            vals = [run.cell("scaling", case, bs, "cpu", lib, t) for t in threads]
            if any(vals):
                lines.append(f"| {matrix_label(run, 'scaling', case, bs, 'cpu')} | {bs} | {lib} | "
                             + " | ".join(fmt(v["gbps"]) if v else "-" for v in vals) + " |")
    lines.append("| stream read | | | " + " | ".join(fmt(run.stream(t)) for t in threads) + " |")
    lines.append("")


def cpu_section(run, title, level="##"):
    m = run.meta
    out = [f"{level} {title}", ""]
    out += header_lines(run)
    out.append("")
    summary, smalls = [], []
    for set_ in bd.MEASURED_SETS:
        out.append(f"{level}# {SET_TITLES[set_]}")
        out.append("")
        if not run.rows(set_, "cpu"):
            out.append("Not measured in this run" + (": " + "; ".join(
                n for n in m.get("notes", []) if n.startswith(set_)) if any(
                n.startswith(set_) for n in m.get("notes", [])) else "."))
            out.append("")
        else:
            out.append("GB/s (bsrmv's byte count for every library: val + col_idx + row_ptr + x + y), "
                       "median over rounds; `Nt` = N threads; ratios below 1 in bold.")
            out.append("")
            sm = cpu_table(run, set_, out, summary) or []
            smalls += [(set_,) + s for s in sm]
        sk = skipped_lines(run, set_)
        if sk:
            out.append("Skipped:")
            out += sk
            out.append("")
    out.append(f"{level}# Small matrices: time per SpMV")
    out.append("")
    cpu_small_table(run, smalls, out)
    out.append(f"{level}# Thread scaling (bsrmv; peers with threads where present)")
    out.append("")
    scaling_table(run, "cpu", out)
    sym_table(run, "cpu", out, level)
    spmm_table(run, "cpu", out, level)
    mixed_table(run, "cpu", out, level)
    complex_table(run, "cpu", out, level)
    out += wrong_lines(run)
    return out, summary


def sym_table(run, device, lines, level):
    """The sym set (docs/SYMMETRIC.md): symmetric storage against the full
    storage of the same matrix, timed in the same process on the same x."""
    # instruments (the gather bound) carry no error: not products
    recs = [r for r in run.records if r.get("set") == "sym" and "bs" in r and r.get("rel_err") is not None
            and r["rel_err"] <= bd.tol(r)]
    if device == "gpu":
        recs = [r for r in recs if r.get("backend") == "gpu"]
    else:
        recs = [r for r in recs if r.get("backend") == "cpu"]
    if not recs:
        return
    lines.append(f"{level}# Symmetric storage against full storage (`bench --sym`)")
    lines.append("")
    groups = defaultdict(list)
    for r in recs:
        groups[(r["case"], r["bs"], r.get("threads", 0))].append(r)
    if device == "gpu":
        lines.append("Time in ms; full: the dispatcher's pick on the full storage; sym: the plan of the "
                     "symmetric handle (a SYM kernel, or where the full storage fits the L2 the full "
                     "copy the handle keeps, docs/SYMMETRIC.md), and the fastest SYM "
                     "configuration; speed-up = full / sym.")
        lines.append("")
        lines.append("| matrix | bs | full MB | sym MB | full ms | sym ms (pick) | speed-up | best SYM | speed-up |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
    else:
        lines.append("Time in ms, full and sym timed alternately; speed-up = full / sym.")
        lines.append("")
        lines.append("| matrix | bs | threads | full MB | sym MB | full ms | sym ms | speed-up |")
        lines.append("|---|---|---|---|---|---|---|---|")
    for (case, bs, threads), rs in sorted(groups.items(), key=lambda kv: (bd.case_order(kv[0][0]), kv[0][1], kv[0][2])):
        if device == "gpu":
            full = [r for r in rs if r["kernel"].startswith("auto:")]
            pick = [r for r in rs if r["kernel"].startswith("sym:auto:")]
            syms = [r for r in rs if r["kernel"].startswith("sym:") and not r["kernel"].startswith("sym:auto:")]
            if not full or not pick:
                continue
            best = min(syms, key=lambda r: r["time_ms"]) if syms else None
            f, p = full[0], pick[0]
            lines.append(f"| {case} | {bs} | {f['bytes'] / 1e6:.1f} | {p['bytes'] / 1e6:.1f} | {f['time_ms']:.3f} | "
                         f"{p['time_ms']:.3f} `{p['kernel'][9:]}` | {ratio_cell(f['time_ms'] / p['time_ms'])} | "
                         + (f"{best['time_ms']:.3f} `{best['kernel'][4:]}` | {ratio_cell(f['time_ms'] / best['time_ms'])} |"
                            if best else "- | - |"))
        else:
            full = [r for r in rs if r["kernel"] == "full"]
            sym = [r for r in rs if r["kernel"] == "sym"]
            if not full or not sym:
                continue
            f, s = full[0], sym[0]
            lines.append(f"| {case} | {bs} | {threads} | {f['bytes'] / 1e6:.1f} | {s['bytes'] / 1e6:.1f} | "
                         f"{f['time_ms']:.3f} | {s['time_ms']:.3f} | {ratio_cell(f['time_ms'] / s['time_ms'])} |")
    lines.append("")


def spmm_table(run, device, lines, level):
    """The spmm set (docs/SPMM.md): bsrmv_spmm / bsrmv_gpu_spmm against k
    separate SpMVs (timed alternately in the same process) and, on the GPU,
    the fastest cusparseSpMM path in the same layout.  Runs that also time
    the mixed pair (float values, double vectors; the GPU suite) get a type
    column and the mixed SpMM's speed over the double one's.  Nothing when
    the run has no spmm records (an older run, or the set not measured)."""
    recs = [r for r in run.records if r.get("set") == "spmm" and r.get("k") and
            r.get("rel_err", 1) <= bd.tol(r)]
    recs = [r for r in recs if (r.get("backend") in ("gpu", "cusparse")) == (device == "gpu")]
    if not recs:
        return
    groups = defaultdict(list)
    for r in recs:
        groups[(r["bs"], r.get("layout", "row"), r["k"], r.get("threads", 0),
                r.get("type", "double"))].append(r)
    typed = len({key[4] for key in groups}) > 1
    gpu = device == "gpu"
    lines.append(f"{level}# Several vectors at once: SpMM (`bench --k`, docs/SPMM.md)")
    lines.append("")
    lines.append("27-point grids; time per call of k vectors in ms (median); `SpMM / k SpMVs`: vectors "
                 "per second of one SpMM over those of k separate SpMVs timed alternately"
                 + ("; cuSPARSE: the fastest `cusparseSpMM` path (BSR_ALG1 on either block order, "
                    "CSR_ALG1..3 on the scalar expansion) in the same layout." if gpu else "."))
    lines.append("")
    head = ["bs", "layout", "k"] + (["type"] if typed else []) + ["MB"] + ([] if gpu else ["threads"])
    head += ["SpMM ms", "k SpMVs ms", "SpMM / k SpMVs"]
    if gpu:
        head += ["cuSPARSE ms", "cuSPARSE path", "bsrmv / cuSPARSE"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    gains, vs_cs, vs_double = defaultdict(list), defaultdict(list), defaultdict(list)
    for (bs, lay, k, threads, t), rs in sorted(groups.items()):
        mm = [r["time_ms"] for r in rs if r["kernel"].startswith("spmm-")]
        pv = [r["time_ms"] for r in rs if r["kernel"].startswith("spmvx")]
        if not mm or not pv:
            continue
        t_mm, t_pv = bd.median(mm), bd.median(pv)
        mb = next(r["bytes"] for r in rs if r["kernel"].startswith("spmvx")) / k / 1e6
        row = [str(bs), lay, str(k)] + ([t] if typed else []) + [fmt(mb)]
        row += [] if gpu else [str(threads)]
        row += [f"{t_mm:.3f}", f"{t_pv:.3f}", ratio_cell(t_pv / t_mm)]
        gains[(t, lay, k) if typed else (lay, k)].append(t_pv / t_mm)
        dbl = groups.get((bs, lay, k, threads, "double"), [])
        d_mm = [r["time_ms"] for r in dbl if r["kernel"].startswith("spmm-")]
        if t == "mixed" and d_mm:
            vs_double[(lay, k)].append(bd.median(d_mm) / t_mm)
        if gpu:
            cs = [r for r in rs if r.get("backend") == "cusparse"]
            best = min(cs, key=lambda r: r["time_ms"]) if cs else None
            row += ([f"{best['time_ms']:.3f}", f"`{best['kernel']}`", ratio_cell(best["time_ms"] / t_mm)]
                    if best else ["n/a", "-", "-"])
            if best:
                vs_cs[lay].append(best["time_ms"] / t_mm)
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for key, g in sorted(gains.items()):
        lines.append(f"- {', '.join(map(str, key[:-1]))}, k = {key[-1]}: SpMM / k SpMVs geometric mean "
                     f"**{fmt(bd.geomean(g), 2)}** over {len(g)} bs (min {fmt(min(g), 2)}, max {fmt(max(g), 2)})")
    for (lay, k), g in sorted(vs_double.items()):
        lines.append(f"- mixed, {lay}, k = {k}: double SpMM ms / mixed SpMM ms geometric mean "
                     f"**{fmt(bd.geomean(g), 2)}** over {len(g)} bs (min {fmt(min(g), 2)}, max {fmt(max(g), 2)})")
    for lay, g in sorted(vs_cs.items()):
        lines.append(f"- {lay}: bsrmv / best cuSPARSE SpMM geometric mean **{fmt(bd.geomean(g), 2)}** "
                     f"over {len(g)} (bs, k) cases, {sum(x < 1 for x in g)} below 1")
    lines.append("")


def mixed_table(run, device, lines, level):
    """The mixed set (docs/MIXED.md): float values with double vectors
    against double/double, the same grid, bsrmv's pick (GPU) or its auto
    kernel (CPU).  Nothing when the run has no mixed records."""
    recs = [r for r in run.records if r.get("set") == "mixed" and not r.get("k") and
            r.get("backend") == device and r.get("rel_err", 1) <= bd.tol(r)]
    if device == "gpu":
        recs = [r for r in recs if r["kernel"].startswith("auto:")]
    groups = defaultdict(lambda: defaultdict(list))
    for r in recs:
        groups[(r["bs"], r.get("threads", 0))][r.get("type")].append(r)
    keys = [key for key, g in groups.items() if g.get("double") and g.get("mixed")]
    if not keys:
        return
    lines.append(f"{level}# Mixed precision: float values, double vectors (`bench --type double,mixed`)")
    lines.append("")
    lines.append("27-point grids, time per SpMV in ms (median); the mixed matrix moves about half the bytes "
                 "of the double one; speed-up = double / mixed.")
    lines.append("")
    lines.append("| bs | threads | double MB | mixed MB | double ms | mixed ms | speed-up | double GB/s | mixed GB/s |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    ups = []
    for bs, threads in sorted(keys):
        d, m = groups[(bs, threads)]["double"], groups[(bs, threads)]["mixed"]
        td, tm = bd.median([r["time_ms"] for r in d]), bd.median([r["time_ms"] for r in m])
        ups.append(td / tm)
        lines.append(f"| {bs} | {threads or '-'} | {d[0]['bytes'] / 1e6:.1f} | {m[0]['bytes'] / 1e6:.1f} | "
                     f"{td:.3f} | {tm:.3f} | {ratio_cell(td / tm)} | "
                     f"{fmt(bd.median([r['gbps'] for r in d]))} | {fmt(bd.median([r['gbps'] for r in m]))} |")
    lines.append("")
    lines.append(f"Geometric mean speed-up of mixed over double: **{fmt(bd.geomean(ups), 2)}** over {len(ups)} rows.")
    lines.append("")


def complex_table(run, device, lines, level):
    """The complex set (docs/COMPLEX.md): complex double and complex float on
    27-point grids.  GPU: the dispatcher's pick against every bsrmv candidate
    and the fastest cuSPARSE complex path, timed in the same process; CPU:
    all threads, against the real matrix of the same grid and precision timed
    in the same process.  Nothing when the run has no complex records."""
    recs = [r for r in run.records if r.get("set") == "complex" and "bs" in r and
            r.get("type", "").startswith("complex") and r.get("rel_err", 1) <= bd.tol(r)]
    gpu = device == "gpu"
    recs = [r for r in recs if (r.get("backend") in ("gpu", "cusparse")) == gpu]
    if not recs:
        return
    if gpu:
        complex_gpu_rows(run, recs, lines, level)
    else:
        complex_cpu_rows(run, recs, lines, level)
    sk = skipped_lines(run, "complex")
    if sk:
        lines.append("Skipped:")
        lines += sk
        lines.append("")


def complex_gpu_rows(run, recs, lines, level):
    groups = defaultdict(list)
    for r in recs:
        groups[(r["type"], r["bs"])].append(r)
    read = run.gpu_read
    lines.append(f"{level}# Complex values (`bench --type z|c`, docs/COMPLEX.md)")
    lines.append("")
    lines.append("27-point grids of complex values; GB/s with bsrmv's byte count for every path; `% read`: "
                 "the pick's share of the measured read bandwidth (`stream_frac`); `pick`: the dispatcher's "
                 "choice (`auto:`); `best bsrmv`: the fastest candidate kernel (an oracle); cuSPARSE: the "
                 "fastest of `cusparseZbsrmv`/`Cbsrmv` in both block directions and, for complex float, "
                 "`cusparseSpMV` BSR_ALG1 (both block orders) and CSR_ALG1; complex double has the "
                 "`cusparseZbsrmv` paths only (`cusparseSpMV` in `CUDA_C_64F` crashes inside cuSPARSE 13.0, "
                 "see tools/bench_gpu.c).")
    lines.append("")
    lines.append("| bs | type | MB | pick GB/s | % read | pick | best bsrmv | best cuSPARSE | cuSPARSE GB/s | "
                 "pick / best cuSPARSE |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    ratios = defaultdict(list)
    for (typ, bs), rs in sorted(groups.items(), key=lambda kv: (kv[0][0] != "complex-double", kv[0][1])):
        pick = [r for r in rs if r["backend"] == "gpu" and r["kernel"].startswith("auto:")]
        cands = [r for r in rs if r["backend"] == "gpu" and not r["kernel"].startswith("auto:")]
        cs = [r for r in rs if r["backend"] == "cusparse"]
        if not pick:
            continue
        g = bd.median([r["gbps"] for r in pick])
        frac = bd.median([r["stream_frac"] if r.get("stream_frac") else
                          (r["gbps"] / read if read else float("nan")) for r in pick])
        best = max(cands, key=lambda r: r["gbps"]) if cands else None
        bcs = max(cs, key=lambda r: r["gbps"]) if cs else None
        ratio = g / bcs["gbps"] if bcs else None
        if ratio:
            ratios[typ].append(ratio)
        lines.append(f"| {bs} | {typ} | {fmt(pick[0]['bytes'] / 1e6)} | {fmt(g, 0)} | {fmt(100 * frac, 0)} | "
                     f"`{pick[0]['kernel'][5:]}` | "
                     + (f"{best['gbps']:.0f} `{best['kernel']}`" if best else "-") + " | "
                     + (f"`{bcs['kernel']}` | {bcs['gbps']:.0f}" if bcs else "n/a | -")
                     + f" | {ratio_cell(ratio)} |")
    lines.append("")
    every = [x for v in ratios.values() for x in v]
    if every:
        per = "; ".join(f"{t} {fmt(bd.geomean(v), 2)} over {len(v)}" for t, v in sorted(ratios.items()))
        lines.append(f"Geometric mean of the pick / best cuSPARSE over {len(every)} rows: "
                     f"**{fmt(bd.geomean(every), 2)}** (min {fmt(min(every), 2)}, max {fmt(max(every), 2)}, "
                     f"{sum(x < 1 for x in every)} rows below 1; {per}).")
        lines.append("")


def complex_cpu_rows(run, recs, lines, level):
    """Each complex row beside the real records of the same process: the
    same grid (matrix name) and bs at the same thread count."""
    real_of = {"complex-double": "double", "complex-float": "float"}
    reals = defaultdict(list)
    for r in run.records:
        if (r.get("set") == "complex" and r.get("backend") == "cpu" and r.get("type") in real_of.values()
                and r.get("rel_err", 1) <= bd.tol(r)):
            reals[(r["matrix"], r["bs"], r.get("threads", 0), r["type"])].append(r)
    groups = defaultdict(list)
    for r in recs:
        groups[(r["type"], r["bs"], r.get("threads", 0), r["matrix"])].append(r)
    lines.append(f"{level}# Complex values (`bench --type z|c`, docs/COMPLEX.md)")
    lines.append("")
    lines.append("27-point grids of complex values, bsrmv's auto kernel; time per SpMV in ms (median); "
                 "`% stream`: GB/s over the stream read bandwidth at that thread count; `real`: the same "
                 "grid with real values of the same precision (double for complex double, float for "
                 "complex float), timed in the same process: half the bytes of values and a quarter of "
                 "the flops.")
    lines.append("")
    lines.append("| bs | type | threads | MB | ms | GB/s | % stream | real MB | real ms | complex / real time |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for (typ, bs, threads, matrix), rs in sorted(groups.items(),
                                                 key=lambda kv: (kv[0][0] != "complex-double", kv[0][1:3])):
        t = bd.median([r["time_ms"] for r in rs])
        g = bd.median([r["gbps"] for r in rs])
        st = run.stream(threads)
        re_ = reals.get((matrix, bs, threads, real_of[typ]))
        tr = bd.median([r["time_ms"] for r in re_]) if re_ else None
        ratio = t / tr if tr else None
        if ratio:
            ratios.append(ratio)
        lines.append(f"| {bs} | {typ} | {threads} | {fmt(rs[0]['bytes'] / 1e6)} | {t:.3f} | {fmt(g)} | "
                     f"{fmt(100 * g / st, 0) if st else '-'} | {fmt(re_[0]['bytes'] / 1e6) if re_ else '-'} | "
                     f"{fmt(tr, 3)} | {fmt(ratio, 2)} |")
    lines.append("")
    if ratios:
        lines.append(f"Geometric mean of complex / real time over {len(ratios)} rows: "
                     f"**{fmt(bd.geomean(ratios), 2)}** (min {fmt(min(ratios), 2)}, max {fmt(max(ratios), 2)}).")
        lines.append("")


# ---- GPU --------------------------------------------------------------------------


def b2b_ratio(run, set_, case, bs):
    """bsrmv's pick / the best cuSPARSE path, timed back to back."""
    b = run.cell(set_, case, bs, "gpu-b2b", "bsrmv")
    peers = [c["gbps"] for c in (run.cell(set_, case, bs, "gpu-b2b", p) for p in bd.GPU_PEERS) if c]
    return b["gbps"] / max(peers) if b and peers else None


def gpu_table(run, set_, lines, summary):
    rows = run.rows(set_, "gpu")
    if not rows:
        return []
    read = run.gpu_read
    head = ["matrix", "bs", "MB", "bsrmv", "% read", "bsrmv kernel (auto)", "best bsrmv kernel"]
    head += [peer_name(set_, p) for p in bd.GPU_PEERS] + ["best cuSPARSE", "bsrmv/best"]
    b2b = any(k[0] == set_ and k[3] == "gpu-b2b" for k in run.cells)
    if b2b:
        head.append("back to back: bsrmv/best")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    rs, rs_b2b = [], []
    small = []
    for case, bs in rows:
        c = {lib: run.cell(set_, case, bs, "gpu", lib) for lib in bd.GPU_LIBS}
        b = c["bsrmv"]
        peers = [(c[p]["gbps"], p) for p in bd.GPU_PEERS if c[p]]
        best = max(peers) if peers else None
        r = b["gbps"] / best[0] if b and best else None
        row = [matrix_label(run, set_, case, bs, "gpu"), str(bs), fmt(mb_of(run, set_, case, bs, "gpu")),
               fmt(b["gbps"]) if b else "-",
               fmt(100 * b["gbps"] / read, 0) if b and read else "-",
               f"`{b['kernel'][5:]}`" if b else "-",
               f"{c['bsrmv-best']['gbps']:.0f} `{c['bsrmv-best']['kernel']}`" if c["bsrmv-best"] else "-"]
        row += [fmt(c[p]["gbps"], 0) if c[p] else "n/a" for p in bd.GPU_PEERS]
        row += [peer_name(set_, best[1]) if best else "-", ratio_cell(r)]
        if b2b:
            r2 = b2b_ratio(run, set_, case, bs)
            row.append(ratio_cell(r2))
            if r2:
                rs_b2b.append(r2)
        lines.append("| " + " | ".join(row) + " |")
        if r:
            rs.append(r)
        if b and b["bytes"] <= bd.SMALL_BYTES["gpu"] and best:
            small.append((set_, case, bs, b, c[best[1]], peer_name(set_, best[1])))
    lines.append("")
    lines.append(f"Geometric mean of bsrmv (auto) / best cuSPARSE over {len(rs)} rows: "
                 f"**{fmt(bd.geomean(rs), 2)}** (min {fmt(min(rs, default=None), 2)}, "
                 f"max {fmt(max(rs, default=None), 2)}, {sum(x < 1 for x in rs)} rows below 1)"
                 + (" with a CG iteration's vector traffic between calls; back to back "
                    f"**{fmt(bd.geomean(rs_b2b), 2)}** (min {fmt(min(rs_b2b, default=None), 2)}, "
                    f"{sum(x < 1 for x in rs_b2b)} rows below 1)." if b2b else "."))
    lines.append("")
    label = f"{set_} double col" if set_ in bd.CONFIG_SETS and run.config_sets(set_) else set_
    summary.append((label, len(rows), rs, rs_b2b))
    return small


def gpu_section(run, title, level="##"):
    out = [f"{level} {title}", ""]
    out += header_lines(run)
    read = run.gpu_read
    out.append(f"- measured device read bandwidth (bsrmv_gpu_read_bandwidth, 2 GiB): "
               f"{fmt(read, 0)} GB/s")
    out.append("")
    out.append("Columns: `bsrmv` is the dispatcher's choice (`auto:`, what `bsrmv_gpu_spmv` runs); "
               "`best bsrmv kernel` the fastest of every candidate kernel (an oracle, not used in the "
               "ratio); cuSPARSE: `cusparseDbsrmv` column and row direction, `cusparseSpMV` "
               "BSR_ALG1 on column- and row-major blocks, CSR_ALG1 on the scalar expansion; `n/a`: "
               "the call failed or is not offered for this case (see the log). GB/s with bsrmv's "
               "byte count for every path.")
    if run.meta.get("gpu_traffic"):
        out.append("")
        out.append("Timing modes: sets without every-kernel data are timed twice (`bench "
                   f"--gpu-traffic {run.meta['gpu_traffic']}`). The GB/s columns and `bsrmv/best` are "
                   "the solver-like mode: before each timed call, a copy of a CG iteration's "
                   "vectors (10 x rows values) passes through the caches, as in a solver's loop. "
                   "`back to back: bsrmv/best` has the calls queued one after another, where a "
                   "matrix that fits in L2 is read from L2.")
    out.append("")
    summary, smalls = [], []
    for set_ in (x for base in bd.MEASURED_SETS for x in (base, *run.config_sets(base))):
        out.append(f"{level}# {set_title(run, set_)} (GPU)")
        out.append("")
        if not run.rows(set_, "gpu"):
            out.append("Not measured in this run.")
            out.append("")
        else:
            smalls += gpu_table(run, set_, out, summary)
        sk = skipped_lines(run, set_) if set_ in bd.MEASURED_SETS else []
        if sk:
            out.append("Skipped:")
            out += sk
            out.append("")
    if smalls:
        out.append(f"{level}# Small matrices on the GPU: time per SpMV")
        out.append("")
        out.append("| set | matrix | bs | MB | bsrmv us | best cuSPARSE us | best cuSPARSE | ratio |")
        out.append("|---|---|---|---|---|---|---|---|")
        for set_, case, bs, b, p, name in smalls:
            out.append(f"| {set_} | {case} | {bs} | {b['bytes'] / 1e6:.1f} | {b['time_ms'] * 1e3:.1f} | "
                       f"{p['time_ms'] * 1e3:.1f} | {name} | {ratio_cell(p['time_ms'] / b['time_ms'])} |")
        out.append("")
    sym_table(run, "gpu", out, level)
    spmm_table(run, "gpu", out, level)
    mixed_table(run, "gpu", out, level)
    complex_table(run, "gpu", out, level)
    out.append(f"{level}# The GPU machine's CPU: bsrmv thread scaling")
    out.append("")
    scaling_table(run, "cpu", out)
    cpu_rows = sum(len(run.rows(s, "cpu")) for s in bd.MEASURED_SETS)
    if cpu_rows:
        out.append(f"bsrmv on all {run.meta.get('nproc')} CPU threads ran beside the GPU on {cpu_rows} "
                   "(matrix, bs) rows; the data is in the run's JSON lines (backend `cpu`).")
        out.append("")
    out += wrong_lines(run)
    return out, summary


# ---- several GPUs ------------------------------------------------------------------


def machine_versions(run):
    """MPI and NCCL versions from the run's machine.txt (what the script logged)."""
    out = []
    try:
        with open(os.path.join(run.path, "machine.txt")) as f:
            text = f.read()
    except OSError:
        return out
    m = re.search(r"mpirun \(([^)]+)\) (\S+)", text)
    if m:
        out.append(f"{m.group(1)} {m.group(2)}")
    m = re.search(r"libnccl\.so\.(\d+\.\d+\.\d+)", text)
    if m:
        out.append(f"NCCL {m.group(1)}")
    return out


def mpi_section(run, level="##"):
    m = run.meta
    gpus = f"{run.gpu_count} x {run.gpu_name}" if run.gpu_count else run.gpu_name
    out = [f"{level} Several GPUs: distributed SpMV and BiCGSTAB", ""]
    out.append(f"- machine: {gpus}, one host, one MPI rank per GPU"
               + "".join(f"; {v}" for v in machine_versions(run)))
    if m:
        out.append(f"- date: {m.get('start_utc')} UTC, {m.get('elapsed_s')} s; commit `{m.get('commit')}`"
                   + (" (with uncommitted changes)" if m.get("dirty") else ""))
        out.append(f"- command: `{m.get('command', '').strip()}`")
        if m.get("failed_commands"):
            out.append(f"- {m['failed_commands']} command(s) failed: see `{rel(run.path)}/summary.txt`")
        for n in m.get("notes", []):
            out.append(f"- note: {n}")
    else:
        out.append(f"- date: {run.date}; written by `scripts/gpu_mpi.sh` directly: how, in "
                   f"`{rel(run.path)}/README.md`")
    out.append(f"- data: `{rel(run.path)}/` (`bench.jsonl`: the records of `bsrmv_mpi_bench --gpu`; "
               "`machine.txt`: nvidia-smi, topology, MPI, NCCL)")
    out.append("")
    plot = os.path.join(ROOT, "docs", "results", "plots", f"{run.label}_mpi_speedup.png")
    if os.path.exists(plot):
        out += [f"![{run.label}: speedup vs GPUs](results/plots/{run.label}_mpi_speedup.png)", ""]
    out.append("`bsrmv_dist_gpu_spmv` (docs/DISTRIBUTED.md): each rank owns a contiguous range of "
               "block rows on its own GPU and receives the x entries it needs from other ranks "
               "through NCCL beside its local product. ms: median of the slowest rank's time per "
               "SpMV; GB/s: the whole SpMV's bytes over that time; speedup: time on 1 GPU / time "
               "on P GPUs; parallel efficiency: speedup / P; halo MB: bytes exchanged per SpMV, "
               "all ranks together; exchange ms: the exchange alone; SpMV / products: the SpMV's "
               "time over the local and off-rank products alone (near 1: the exchange is hidden).")
    out.append("")
    out.append(f"{level}# Strong scaling: one matrix on 1 to {max((k[2] for k in run.spmv), default=1)} GPUs")
    out.append("")
    strong = run.strong()
    if not strong:
        out += ["No matrix measured on 1 GPU and on more in this run.", ""]
    for (matrix, bs), rows in strong.items():
        one = rows[0][1]
        out.append(f"**{matrix}**, bs {bs}, {one['mb']} block rows, {one['nnzb']} blocks "
                   f"({one['nnzb'] * bs * bs * 8 / 1e9:.1f} GB of values)")
        out.append("")
        out.append("| GPUs | ms | GB/s | speedup | parallel efficiency | halo MB | exchange ms | "
                   "SpMV / products |")
        out.append("|---|---|---|---|---|---|---|---|")
        for p, r, sp, eff in rows:
            out.append(f"| {p} | {fmt(r['ms'], 3)} | {fmt(r['gbps'], 0)} | {sp:.3f} | {eff:.3f} | "
                       f"{fmt(r['halo_bytes'] / 1e6, 3)} | {fmt(r['exchange_ms'], 3)} | "
                       f"{fmt(r.get('ratio_to_products'), 3)} |")
        out.append("")
    out.append(f"{level}# Weak scaling: the same size per GPU")
    out.append("")
    weak = run.weak()
    if not weak:
        out += ["No weak-scaling runs in this run.", ""]
    else:
        out.append("Grids stretched along z by the GPU count, each GPU keeping the 1-GPU grid; "
                   "efficiency: time on 1 GPU / time on P GPUs (1.00: perfect).")
        out.append("")
        out.append("| bs | GPUs | matrix | ms | GB/s | halo MB | efficiency |")
        out.append("|---|---|---|---|---|---|---|")
        for (_, bs), rows in weak.items():
            for p, matrix, r, eff in rows:
                out.append(f"| {bs} | {p} | {matrix} | {fmt(r['ms'], 3)} | {fmt(r['gbps'], 0)} | "
                           f"{fmt(r['halo_bytes'] / 1e6, 3)} | {eff:.3f} |")
        out.append("")
    out.append(f"{level}# Distributed BiCGSTAB on the GPUs")
    out.append("")
    if not run.solve:
        out += ["No solve runs in this run.", ""]
    else:
        out.append("Block Jacobi preconditioner; ms per iteration: the solve's time over its iterations "
                   "(median of the repeats); bound: the bytes an iteration must move over the summed "
                   "read bandwidth of the GPUs in use; efficiency: bound / measured time.")
        out.append("")
        out.append("| matrix | method | bs | GPUs | iterations | ms per iteration | speedup | GB/s | "
                   "bound ms | efficiency vs bound |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for (matrix, method, bs, p), r in sorted(run.solve.items()):
            one = run.solve.get((matrix, method, bs, 1))
            sp = one["ms_per_iteration"] / r["ms_per_iteration"] if one else None
            out.append(f"| {matrix} | {method} | {bs} | {p} | {r['iterations']} | "
                       f"{fmt(r['ms_per_iteration'], 3)} | {fmt(sp, 3)} | {fmt(r['gbps'], 0)} | "
                       f"{fmt(r['bound_ms_per_iteration'], 3)} | {fmt(r['efficiency'], 3)} |")
        out.append("")
    return out


# ---- common -----------------------------------------------------------------------


def header_lines(run):
    m = run.meta
    load = f"load average at start {m.get('load_start')}, at end {m.get('load_end')}"
    if "other_load" in m:
        # the suite's own threads excluded: CPU time other processes took
        load += (f"; CPU time not spent by the suite (other users, kernel threads): "
                 f"{m['other_load']:.2f} of {m.get('nproc')} cores on average")
        loaded = m["other_load"] > 0.25
    else:
        try:
            loaded = float(m.get("load_start", "0").split()[0]) > 0.5 * m.get("nproc", 1)
        except ValueError:
            loaded = False
    loaded = loaded and m.get("mode") == "cpu"
    lines = [
        f"- machine: {m.get('cpu')}, {m.get('nproc')} cores, L3 {m.get('llc')}"
        + (f"; GPU {run.gpu_name}" if run.gpu_name else ""),
        f"- date: {m.get('start_utc')} UTC, {m.get('elapsed_s')} s; commit `{m.get('commit')}`"
        + (" (with uncommitted changes)" if m.get("dirty") else ""),
        f"- command: `{m.get('command').strip()}`" + (" (quick mode)" if m.get("quick") else ""),
        f"- {load}" + (" — **the machine was shared and loaded during this run: timings are noisy**"
                       if loaded else ""),
        f"- settings: {m.get('env')}; threads {m.get('threads')}; reps >= {m.get('reps')} "
        f"(more for small matrices), {m.get('rounds')} round(s) for peers; value cap "
        f"{m.get('max_mb')} MB per matrix; data: `{rel(run.path)}/`",
        "- peers: " + ", ".join(f"{k} {v}" if v else f"{k} absent" for k, v in m.get("peers", {}).items()),
    ]
    if m.get("failed_commands"):
        lines.append(f"- {m['failed_commands']} command(s) failed: see `{rel(run.path)}/suite.log`")
    for n in m.get("notes", []):
        lines.append(f"- note: {n}")
    return lines


def wrong_lines(run):
    if not run.wrong:
        return []
    out = [f"Wrong results (rel_err above {bd.TOL:g}, {bd.FLOAT_TOL:g} for float vectors), left out of "
           "the tables above:", ""]
    for r in run.wrong:
        out.append(f"- {r.get('set')} {r.get('case')} bs {r['bs']} {r.get('type', 'double')} {r['backend']} "
                   f"{r.get('kernel')} threads {r.get('threads')}: rel_err {r.get('rel_err')}")
    out.append("")
    return out


def headline(cpus, gpus):
    lines = ["| machine | set | rows | bsrmv / best peer, geometric mean | min | max | rows below 1 |",
             "|---|---|---|---|---|---|---|"]
    foot = []
    for cpu, cpu_sum in cpus:
        llc = str(cpu.meta.get("llc", ""))
        name = f"CPU {cpu.meta.get('cpu')}, {cpu.meta.get('nproc')} cores"
        if llc.endswith("K") and llc[:-1].isdigit():  # tells two machines of one model name apart
            name += f", L3 {int(llc[:-1]) // 1024} MB"
        if cpu.meta.get("other_load", 0) > 0.25:
            name += " (loaded*)"
            foot.append(f"\\* Loaded run: other processes used {cpu.meta['other_load']:.1f} of the "
                        f"{cpu.meta.get('nproc')} cores on average while it ran (the machine is shared "
                        "with other engineers' builds), so the multi-thread "
                        "numbers (bsrmv's OpenMP threads, librsb, MPI ranks) are unreliable; the "
                        "1-thread rows suffer less. Rerun with `make bench` on a quiet machine.")
        for set_, n, r1, ra in cpu_sum:
            for label, rs in ((f"1 thread", r1), (f"{cpu.meta.get('nproc')} threads vs any", ra)):
                if rs:
                    lines.append(f"| {name} | {set_}, {label} | {len(rs)} | {bd.geomean(rs):.2f} | "
                                 f"{min(rs):.2f} | {max(rs):.2f} | {sum(r < 1 for r in rs)} |")
    for gpu, gpu_sum in gpus:
        name = f"GPU {gpu.gpu_name}"
        for set_, n, rs, rs_b2b in gpu_sum:
            for label, v in (("vs best cuSPARSE", rs), ("back to back", rs_b2b)):
                if v:
                    lines.append(f"| {name} | {set_}, {label} | {len(v)} | {bd.geomean(v):.2f} | "
                                 f"{min(v):.2f} | {max(v):.2f} | {sum(r < 1 for r in v)} |")
    if not gpus:
        lines.append("| GPU | all | - | pending device run | | | |")
    return lines + ([""] + foot if foot else [])


def plot_lines(label):
    d = os.path.join(ROOT, "docs", "results", "plots")
    out = []
    for name, title in (("gbps_vs_bs", "GB/s vs block size"), ("real_bars", "per real matrix"),
                        ("scaling", "thread scaling"), ("small_time", "time per SpMV, small matrices"),
                        ("spmm", "SpMM, vectors per second vs k")):
        f = os.path.join(d, f"{label}_{name}.png")
        if os.path.exists(f):
            out.append(f"![{label}: {title}](results/plots/{label}_{name}.png)")
            out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="append", help="a CPU run directory (repeatable)")
    ap.add_argument("--gpu", action="append", help="a GPU run directory (repeatable)")
    ap.add_argument("--gpu-mpi", help="a gpu-mpi run directory (bench/suite.sh --gpu-mpi)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "RESULTS.md"))
    ap.add_argument("--template", default=os.path.join(ROOT, "bench", "RESULTS.template.md"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    a = ap.parse_args()
    cpu_runs = [bd.Run(d) for d in (a.cpu or bd.newest_runs("cpu"))]
    gpu_runs = [bd.Run(d) for d in (a.gpu or bd.newest_runs("gpu"))]
    mpi_dir = a.gpu_mpi or next(iter(bd.find_mpi_runs()), None)
    mpi = bd.MpiRun(mpi_dir) if mpi_dir else None

    def with_plots(lines, label):
        """The plots after the run's header, before the first table."""
        i = next((k for k, l in enumerate(lines) if l.startswith("### ")), len(lines))
        return lines[:i] + plot_lines(label) + lines[i:]

    def sections(runs, section, title):
        """Each run's section with its plots, and (run, summary) for the headline."""
        summaries, lines = [], []
        for run in runs:
            part, summary = section(run, title(run))
            lines += with_plots(part, run.meta["label"])
            summaries.append((run, summary))
        return summaries, lines

    cpus, cpu_lines = sections(cpu_runs, cpu_section, lambda r: f"CPU: {r.meta.get('label')}")
    if not cpu_runs:
        cpu_lines = ["## CPU", "", "No CPU run found in bench/results/."]
    gpus, gpu_lines = sections(gpu_runs, gpu_section,
                               lambda r: f"GPU: {r.gpu_name} ({r.meta.get('label')})")
    if not gpu_runs:
        gpu_lines = ["## GPU: pending device run", "",
                     "No GPU run in bench/results/ yet. On the GPU machine, after the CUDA build of "
                     "`build/bsrmv` (`cmake -S . -B build -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release && "
                     "cmake --build build -j`), with the matrices in `../shared/matrices`, `shared/matrices` "
                     "or `build-matrices/`:", "",
                     "```sh", "bench/suite.sh --gpu --out \"$OUT/gpu\"; gzip \"$OUT\"/gpu/*.jsonl"
                     "   # ~7 min, --budget 470 s", "```",
                     "", "then, here: copy that directory to `bench/results/<label>_<date>/` and run "
                     "`python3 bench/plot.py && python3 bench/report.py`. The tables above for the CPU "
                     "come from this machine; the GPU section (bsrmv kernels vs cusparseDbsrmv col/row, "
                     "cusparseSpMV BSR_ALG1, CSR_ALG1) and the GPU machine's CPU thread scaling "
                     "(1, 2, 4, 8, 16 threads) appear here once that run exists.", ""]
    mpi_lines = (mpi_section(mpi) if mpi else
                 ["## Several GPUs: pending device run", "",
                  "No gpu-mpi run in bench/results/ yet: on a machine with 2, 4 or 8 GPUs, "
                  "`bench/suite.sh --gpu-mpi --out \"$OUT/gpu-mpi\"`, then copy that directory to "
                  "`bench/results/` and run `python3 bench/plot.py && python3 bench/report.py`.", ""])
    head = headline(cpus, gpus)
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"
    with open(a.template) as f:
        tpl = f.read()
    text = (tpl.replace("{{HEADLINE}}", "\n".join(head))
            .replace("{{CPU}}", "\n".join(cpu_lines))
            .replace("{{GPU}}", "\n".join(gpu_lines))
            .replace("{{GPU_MPI}}", "\n".join(mpi_lines))
            .replace("{{SOURCES}}", ", ".join(f"`{rel(r.path)}`" for r in (*cpu_runs, *gpu_runs, mpi) if r) or "none")
            .replace("{{COMMIT}}", commit))
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    print(f"report: wrote {rel(a.out)} from {', '.join(rel(r.path) for r in (*cpu_runs, *gpu_runs, mpi) if r)}")

    if a.readme and os.path.exists(a.readme):
        with open(a.readme) as f:
            readme = f.read()
        start, end = "<!-- bench:headline:start -->", "<!-- bench:headline:end -->"
        if start in readme and end in readme:
            pre, rest = readme.split(start, 1)
            _, post = rest.split(end, 1)
            block = "\n".join([start, "", *head, "", "Full tables, plots and the command: "
                               "[docs/RESULTS.md](docs/RESULTS.md).", "", end])
            with open(a.readme, "w") as f:
                f.write(pre + block + post)
            print(f"report: headline table updated in {rel(a.readme)}")


if __name__ == "__main__":
    main()
