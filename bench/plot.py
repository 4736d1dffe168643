#!/usr/bin/env python3
"""PNG plots of the suite's JSON lines (bench/suite.sh) for docs/RESULTS.md.

  bench/plot.py [RUN_DIR ...] [--out docs/results/plots]

Without RUN_DIR: the newest full run of each CPU and GPU machine in
bench/results/.  Per run (file names start with the run's label):
  _gbps_vs_bs.png   GB/s vs bs per library: grids, real matrices promoted
                    (geometric mean over the matrices), the split sweep
                    (Eberhardt & Hoemmen Fig. 8/9 style)
  _real_bars.png    one bar chart per real matrix (small multiples)
  _scaling.png      GB/s vs CPU threads (Fig. 10 style)
  _small_time.png   time per SpMV for the cache-resident matrices
  _spmm.png         the spmm set: vectors per second vs k, SpMM against k
                    SpMVs (and the fastest cusparseSpMM on the GPU), one
                    panel per layout, a colour per bs
A gpu-mpi run (bench/suite.sh --gpu-mpi; the newest one without RUN_DIR):
  _mpi_speedup.png  speedup vs GPUs of the distributed SpMV, one line per
                    matrix, and of BiCGSTAB per iteration; the ideal line
Horizontal lines: the measured read bandwidth (CPU stream per thread count,
GPU read-only kernel).  Needs matplotlib (the suite pip-installs it).
"""
import argparse
import math
import os
import sys
from collections import defaultdict

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchdata as bd  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPI = 80
COLORS = {
    "bsrmv": "#d62728", "bsrmv-best": "#ff9896", "petsc-baij": "#1f77b4", "petsc-aij": "#aec7e8",
    "petsc-mpibaij": "#17becf", "librsb": "#2ca02c", "scipy-bsr": "#9467bd", "scipy-csr": "#c5b0d5",
    "Dbsrmv_col": "#1f77b4", "Dbsrmv_row": "#aec7e8", "SpMV_BSR_ALG1_col": "#2ca02c",
    "SpMV_BSR_ALG1_row": "#98df8a", "SpMV_CSR_ALG1": "#9467bd",
}
MARKERS = "osD^v<>px*h"


def device_of(run):
    return "gpu" if run.meta.get("mode") == "gpu" else "cpu"


def series(run):
    """(lib, threads, label, style) lines to draw for the run's device."""
    if device_of(run) == "gpu":
        return [(lib, None, "bsrmv (auto)" if lib == "bsrmv" else
                 "bsrmv best kernel" if lib == "bsrmv-best" else "cuSPARSE " + lib,
                 ":" if lib == "bsrmv-best" else "-") for lib in bd.GPU_LIBS]
    nmax = run.meta.get("nproc", 1)
    out = []
    for lib in bd.CPU_LIBS:
        for t in sorted({k[5] for k in run.cells if k[3] == "cpu" and k[4] == lib}):
            if t in (1, nmax):
                out.append((lib, t, f"{lib} {t}t", "-" if t == nmax else "--"))
    return out


def bandwidth_lines(ax, run):
    if device_of(run) == "gpu":
        if run.gpu_read:
            ax.axhline(run.gpu_read, color="gray", lw=1)
            ax.text(ax.get_xlim()[0], run.gpu_read, " read bandwidth", va="bottom", fontsize=7, color="gray")
        return
    for t in sorted(run.stream_cpu):
        g = run.stream(t)
        ax.axhline(g, color="gray", lw=1, ls="-" if t == max(run.stream_cpu) else "--")
        ax.text(ax.get_xlim()[0], g, f" stream read {t}t", va="bottom", fontsize=7, color="gray")


def panel_vs_bs(ax, run, set_, title, aggregate=False):
    dev = device_of(run)
    rows = run.rows(set_, dev)
    if not rows:
        ax.set_visible(False)
        return
    bss = sorted({bs for _, bs in rows})
    for i, (lib, t, label, ls) in enumerate(series(run)):
        xs, ys = [], []
        for bs in bss:
            vals = []
            for case, b in rows:
                if b != bs or (aggregate and not case.endswith(":promote")):
                    continue
                c = run.cell(set_, case, bs, dev, lib, t) if t else run.cell(set_, case, bs, dev, lib)
                if c:
                    vals.append(c["gbps"])
            if vals:
                xs.append(bs)
                ys.append(bd.geomean(vals))
        if xs:
            ax.plot(xs, ys, ls, marker=MARKERS[i % len(MARKERS)], ms=3, lw=1.2,
                    color=COLORS.get(lib, None), label=label)
    if len(bss) > 12:  # the sweep: every bs, on a linear axis
        ticks = [b for b in bss if b % 4 == 0 or b == bss[0]]
    else:
        ax.set_xscale("log", base=2)
        ticks = bss
    ax.minorticks_off()
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(b) for b in ticks], fontsize=7)
    ax.set_xlabel("block size")
    ax.set_ylabel("GB/s" + (" (geometric mean over matrices)" if aggregate else ""))
    ax.set_title(title, fontsize=9)
    bandwidth_lines(ax, run)
    ax.set_ylim(bottom=0)  # after the lines: set_ylim stops the autoscaling
    ax.grid(alpha=0.3)


def plot_gbps_vs_bs(run, path):
    panels = [("grid", "27-point grids", False), ("real", "real matrices, promoted", True),
              ("sweep", "split sweep: " + next((c for c, _ in run.rows("sweep", device_of(run))), ""), False)]
    panels = [p for p in panels if run.rows(p[0], device_of(run))]
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), squeeze=False)
    for ax, (s, title, agg) in zip(axes[0], panels):
        panel_vs_bs(ax, run, s, title, agg)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3 if len(panels) == 1 else 6),
               fontsize=7)
    fig.suptitle(f"{run.meta.get('label')}: GB/s vs block size ({machine(run)})", fontsize=10)
    fig.tight_layout(rect=(0, 0.16 if len(panels) == 1 else 0.1, 1, 0.95))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def machine(run):
    m = run.meta
    return run.gpu_name if m.get("mode") == "gpu" else f"{m.get('cpu')}, {m.get('nproc')} cores"


def plot_real_bars(run, path):
    dev = device_of(run)
    rows = run.rows("real", dev)
    stems = sorted({c.split(":")[0] for c, _ in rows})
    if not stems:
        return False
    libs = ([lib for lib in bd.GPU_LIBS if lib != "bsrmv-best"] if dev == "gpu" else
            [lib for lib in bd.CPU_LIBS if any(k[4] == lib and k[0] == "real" for k in run.cells)])
    ncol = min(4, len(stems))
    nrow = math.ceil(len(stems) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.4 * ncol, 2.6 * nrow), squeeze=False)
    w = 0.8 / len(libs)
    for ax, stem in zip(axes.flat, stems):
        groups = [(c, bs) for c, bs in rows if c.split(":")[0] == stem]
        for j, lib in enumerate(libs):
            ys = []
            for case, bs in groups:
                c = run.cell("real", case, bs, dev, lib)
                ys.append(c["gbps"] if c else 0)
            ax.bar([i + (j - len(libs) / 2 + 0.5) * w for i in range(len(groups))], ys, w,
                   color=COLORS.get(lib), label=lib)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([("s" if c.endswith(":split") else "") + str(bs) for c, bs in groups], fontsize=7)
        ax.set_title(stem, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        if dev == "gpu" and run.gpu_read:
            ax.axhline(run.gpu_read, color="gray", lw=0.8)
        elif run.stream_cpu:
            ax.axhline(run.stream(max(run.stream_cpu)), color="gray", lw=0.8)
    for ax in list(axes.flat)[len(stems):]:
        ax.set_visible(False)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    best = "each library at its best thread count; " if dev == "cpu" else ""
    fig.suptitle(f"{run.meta.get('label')}: GB/s per real matrix, promoted bs and split at the natural bs "
                 f"(s<bs>); {best}gray: read bandwidth", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def plot_scaling(run, path):
    rows = run.rows("scaling", "cpu")
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(6, 4.2))
    i = 0
    for case, bs in rows:
        for lib in bd.CPU_LIBS:
            ts = run.threads_of("scaling", "cpu", lib)
            pts = [(t, run.cell("scaling", case, bs, "cpu", lib, t)) for t in ts]
            pts = [(t, c["gbps"]) for t, c in pts if c]
            if pts:
                ax.plot(*zip(*pts), marker=MARKERS[i % len(MARKERS)], lw=1.2, color=COLORS.get(lib),
                        alpha=1 if lib == "bsrmv" else 0.7,
                        label=f"{lib} bs {bs} ({run.cell('scaling', case, bs, 'cpu', lib)['matrix']})")
                i += 1
    if run.stream_cpu:
        ts = sorted(run.stream_cpu)
        ax.plot(ts, [run.stream(t) for t in ts], "k--", lw=1, label="stream read")
    ax.set_xscale("log", base=2)
    ts = sorted({t for k in run.cells for t in [k[5]] if k[0] == "scaling"})
    ax.set_xticks(ts)
    ax.set_xticklabels([str(t) for t in ts])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("CPU threads")
    ax.set_ylabel("GB/s")
    ax.set_ylim(bottom=0)  # after the stream curve (set_ylim stops the autoscaling)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(f"{run.meta.get('label')}: thread scaling on {run.meta.get('cpu')}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def plot_small_time(run, path):
    dev = device_of(run)
    limit = bd.SMALL_BYTES[dev]
    cases = []
    for set_ in ("real", "sweep"):
        for case, bs in run.rows(set_, dev):
            c = run.cell(set_, case, bs, dev, "bsrmv")
            if c and c["bytes"] <= limit:
                cases.append((c["bytes"], set_, case, bs))
    if not cases:
        return False
    cases.sort()
    libs = [lib for lib in (bd.GPU_LIBS if dev == "gpu" else bd.CPU_LIBS) if lib != "bsrmv-best" and
            any(run.cell(s, c, b, dev, lib) for _, s, c, b in cases)]
    fig, ax = plt.subplots(figsize=(min(16, max(6, 0.2 * len(cases) + 2)), 4.6))
    for j, lib in enumerate(libs):
        xs, ys = [], []
        for i, (_, set_, case, bs) in enumerate(cases):
            c = run.cell(set_, case, bs, dev, lib)
            if c:
                xs.append(i)
                ys.append(c["time_ms"] * 1e3)
        ax.plot(xs, ys, MARKERS[j % len(MARKERS)], ms=4, color=COLORS.get(lib), label=lib,
                markeredgecolor="k" if lib == "bsrmv" else None, markeredgewidth=0.5)
    ax.set_yscale("log")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([f"{case.split(':')[0]}{' s' if case.endswith(':split') else ' p'}{bs}"
                        for _, _, case, bs in cases], rotation=90, fontsize=6)
    ax.set_ylabel("time per SpMV (microseconds, log)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    best = ", each library at its best thread count" if dev == "cpu" else ""
    ax.set_title(f"{run.meta.get('label')}: small matrices (SpMV bytes <= {limit / 1e6:.0f} MB)\n"
                 f"sorted by size; p = promoted, s = split{best}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def plot_mpi_speedup(run, path):
    """Speedup vs GPUs of the distributed SpMV (strong scaling, one line per
    matrix) and BiCGSTAB, with the ideal line."""
    strong = run.strong()
    if not strong:
        return False
    fig, ax = plt.subplots(figsize=(6, 4.4))
    counts = sorted({p for rows in strong.values() for p, *_ in rows})
    ax.plot(counts, counts, "k--", lw=1, label="ideal")
    for i, ((matrix, bs), rows) in enumerate(strong.items()):
        one = rows[0][1]
        ax.plot([p for p, *_ in rows], [sp for _, _, sp, _ in rows], marker=MARKERS[i % len(MARKERS)],
                lw=1.2, label=f"SpMV {matrix} bs {bs} ({one['nnzb'] * bs * bs * 8 / 1e9:.0f} GB)")
    solves = {}
    for (matrix, method, bs, p), r in sorted(run.solve.items()):
        solves.setdefault((matrix, method, bs), []).append((p, r["ms_per_iteration"]))
    for j, ((matrix, method, bs), pts) in enumerate(solves.items()):
        base = dict(pts).get(1)
        if base:
            ax.plot([p for p, _ in pts], [base / t for _, t in pts], marker=MARKERS[(i + 1 + j) % len(MARKERS)],
                    lw=1.2, ls=":", color="k", label=f"{method} {matrix} bs {bs}, per iteration")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(counts)
    ax.set_xticklabels([str(c) for c in counts])
    ax.set_yticks(counts)
    ax.set_yticklabels([str(c) for c in counts])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("GPUs (one MPI rank each)")
    ax.set_ylabel("speedup over 1 GPU")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    gpus = f"{run.gpu_count} x {run.gpu_name}" if run.gpu_count else run.gpu_name
    ax.set_title(f"{run.label}: strong scaling, distributed SpMV and BiCGSTAB on {gpus}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def plot_spmm(run, path):
    """Vectors per second vs k (the spmm set): per layout, a colour per bs;
    solid bsrmv SpMM, dashed k separate SpMVs, dotted the fastest
    cusparseSpMM path (GPU)."""
    gpu = device_of(run) == "gpu"
    recs = [r for r in run.records if r.get("set") == "spmm" and r.get("k") and r.get("rel_err", 1) <= bd.tol(r)
            and (r.get("backend") in ("gpu", "cusparse")) == gpu]
    if not recs:
        return False
    layouts = sorted({r.get("layout", "row") for r in recs})
    fig, axes = plt.subplots(1, len(layouts), figsize=(6 * len(layouts), 4.2), squeeze=False)
    cmap = plt.get_cmap("viridis")
    sizes = sorted({r["bs"] for r in recs})
    for ax, lay in zip(axes[0], layouts):
        for i, bs in enumerate(sizes):
            color = cmap(i / max(1, len(sizes) - 1))
            for kind, style, label in (("spmm", "-", "SpMM"), ("spmvx", "--", "k SpMVs"),
                                       ("cusparse", ":", "cuSPARSE SpMM")):
                pts = defaultdict(list)
                for r in recs:
                    if r["bs"] != bs or r.get("layout", "row") != lay:
                        continue
                    is_cs = r.get("backend") == "cusparse"
                    if (kind == "cusparse") == is_cs and (is_cs or r["kernel"].startswith(kind)):
                        pts[r["k"]].append(r["time_ms"])
                if not pts:
                    continue
                ks = sorted(pts)
                # the fastest cuSPARSE path per k, the median of bsrmv's repeats
                best = [min(pts[k]) if kind == "cusparse" else bd.median(pts[k]) for k in ks]
                ax.plot(ks, [k / (t * 1e-3) for k, t in zip(ks, best)], style, color=color,
                        marker=MARKERS[i % len(MARKERS)], markersize=4,
                        label=f"bs {bs} {label}" if i == 0 or kind == "spmm" else None)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ks = sorted({r["k"] for r in recs})
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("k (vectors per call)")
        ax.set_ylabel("vectors per second")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
        ax.set_title(f"{machine(run)}: {lay}-major multivectors", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results", "plots"))
    a = ap.parse_args()
    dirs = a.runs or bd.newest_runs("cpu") + bd.newest_runs("gpu")
    if not a.runs:
        dirs += bd.find_mpi_runs()[:1]
    os.makedirs(a.out, exist_ok=True)
    for d in dirs:
        if bd.is_mpi_run(d):
            run = bd.MpiRun(d)
            path = os.path.join(a.out, f"{run.label}_mpi_speedup.png")
            if plot_mpi_speedup(run, path):
                print(f"plot: {os.path.relpath(path, ROOT)} ({os.path.getsize(path) // 1024} KB)")
            continue
        run = bd.Run(d)
        label = run.meta.get("label")
        for name, fn in (("gbps_vs_bs", plot_gbps_vs_bs), ("real_bars", plot_real_bars),
                         ("scaling", plot_scaling), ("small_time", plot_small_time),
                         ("spmm", plot_spmm)):
            path = os.path.join(a.out, f"{label}_{name}.png")
            if fn(run, path):
                print(f"plot: {os.path.relpath(path, ROOT)} ({os.path.getsize(path) // 1024} KB)")


if __name__ == "__main__":
    main()
