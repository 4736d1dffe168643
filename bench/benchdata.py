"""Reading the suite's result directories (bench/suite.sh): shared by
bench/report.py and bench/plot.py.

A run directory holds <set>.jsonl (one JSON object per measurement, the
keys of `bsrmv bench --json` plus set, case, via, and round/ref for peers),
stream.jsonl, matrices.jsonl, skipped.jsonl and meta.json.
"""
import gzip
import json
import math
import os
import re
from collections import defaultdict

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
TOL = 1.5e-8  # double: sqrt(eps) as the CLI uses, with the GPU bench's margin
FLOAT_TOL = 3.5e-4  # float vectors (float, complex-float): sqrt(FLT_EPSILON), likewise


def tol(r):
    """The rel_err above which a record is a wrong result: sqrt(eps) of the
    type of its vectors (mixed precision has double vectors)."""
    return FLOAT_TOL if r.get("type") in ("float", "complex-float") else TOL


# Display order and names of the libraries.  "bsrmv" is what a user gets
# (CPU: bsrmv_spmv, kernel auto; GPU: the dispatcher's pick, kernel "auto:").
CPU_LIBS = ["bsrmv", "petsc-baij", "petsc-aij", "petsc-mpibaij", "librsb", "scipy-bsr",
            "scipy-csr"]
GPU_LIBS = ["bsrmv", "bsrmv-best", "Dbsrmv_col", "Dbsrmv_row", "SpMV_BSR_ALG1_col",
            "SpMV_BSR_ALG1_row", "SpMV_CSR_ALG1"]
GPU_PEERS = GPU_LIBS[2:]
# Sets whose rows compare bsrmv with peers (tables, headline), in report order.
MEASURED_SETS = ("grid", "real", "sweep", "generated", "bridge")
SETS = [*MEASURED_SETS, "scaling"]
# Sets whose GPU records come in several value types and block orders
# (suite.sh GPU_REAL_TYPES, GPU_REAL_ORDERS): each (type, order) but double,
# column-major is a set of its own, "<set> <type> <order>" (config_set).
CONFIG_SETS = ("real",)


def config_set(set_, r):
    """The set a GPU record counts in: its own, or its (type, order)'s."""
    t, o = r.get("type", "double"), r.get("order", "col")
    return set_ if set_ not in CONFIG_SETS or (t, o) == ("double", "col") else f"{set_} {t} {o}"


def config_of(set_):
    """(base set, type, order) of a set name."""
    base, *cfg = set_.split(" ")
    return (base, *cfg) if cfg else (base, "double", "col")
# "Small" matrices, where per-call latency matters more than bandwidth: the
# SpMV's bytes fit the GPU's L2 (50 MB on H100) with room, or a quarter of
# the CPU's 32 MiB L3.
SMALL_BYTES = {"cpu": 8e6, "gpu": 40e6}


def read_jsonl(path):
    out = []
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"  # a run gzipped to come back from the GPU machine
    if not os.path.exists(path):
        return out
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass  # a line cut by a timeout
    return out


def library(r):
    """(library, device) of a measurement record, or None for others."""
    b, k = r.get("backend"), r.get("kernel", "")
    if b in ("cpu", "bsrmv"):
        return ("bsrmv" if k in ("specialised", "auto-generic", "auto") else "bsrmv-" + k, "cpu")
    if b == "gpu":
        return ("bsrmv" if k.startswith("auto:") else "bsrmv-best", "gpu")
    if b == "cusparse":  # cusparseSbsrmv and Dbsrmv share a column
        return (re.sub(r"^Sbsrmv", "Dbsrmv", k), "gpu")
    if b in CPU_LIBS:
        return (b, "cpu")
    return None


class Run:
    """One result directory, aggregated: medians over rounds and processes."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "meta.json")) as f:
            self.meta = json.load(f)
        self.matrices = {m["case"]: m for m in read_jsonl(os.path.join(path, "matrices.jsonl"))}
        self.skipped = read_jsonl(os.path.join(path, "skipped.jsonl"))
        self.records = []
        for name in sorted(os.listdir(path)):
            base = name[:-3] if name.endswith(".gz") else name
            if base.endswith(".jsonl") and base not in ("matrices.jsonl", "skipped.jsonl"):
                self.records += read_jsonl(os.path.join(path, name))
        self.stream_cpu = defaultdict(list)  # threads -> GB/s
        self.stream_gpu = []
        self.gpu_name = self.meta.get("gpu") or ""
        self.wrong = []
        # (set, case, bs, device, lib, threads) -> [records]
        groups = defaultdict(list)
        # A set timed in two GPU modes (bench --gpu-traffic cg,0): its
        # solver-like records are the device "gpu", its back-to-back ones
        # "gpu-b2b" (older runs have the back-to-back mode only: "gpu").
        solver_sets = {r.get("set") for r in self.records if r.get("traffic_bytes", 0) > 0}
        for r in self.records:
            if r.get("backend") == "stream":
                if r.get("kernel") == "gpu_read":
                    self.stream_gpu.append(r["gbps"])
                    self.gpu_name = self.gpu_name or r.get("device", "")
                else:
                    self.stream_cpu[r["threads"]].append(r["gbps"])
                continue
            lk = library(r)
            if lk is None or "set" not in r:
                continue
            if not (r.get("rel_err", 0) <= tol(r)):
                self.wrong.append(r)
                continue
            dev, set_ = lk[1], r["set"]
            if dev == "gpu":
                if set_ in solver_sets and not r.get("traffic_bytes", 0) > 0:
                    dev = "gpu-b2b"
                set_ = config_set(set_, r)
            groups[(set_, r["case"], r["bs"], dev, lk[0], r.get("threads", 0))].append(r)
        self.cells = {}
        for key, rs in groups.items():
            lib = key[4]
            if lib == "bsrmv-best":  # the fastest bsrmv kernel (an oracle, not a peer)
                best = max(rs, key=lambda r: r["gbps"])
                self.cells[key] = dict(gbps=best["gbps"], time_ms=best["time_ms"],
                                       kernel=best["kernel"], bytes=best["bytes"],
                                       matrix=best["matrix"], n=len(rs))
            else:
                g = median([r["gbps"] for r in rs])
                self.cells[key] = dict(gbps=g, time_ms=median([r["time_ms"] for r in rs]),
                                       kernel=rs[0]["kernel"], bytes=rs[0]["bytes"],
                                       matrix=rs[0]["matrix"], n=len(rs),
                                       spread=(min(r["gbps"] for r in rs), max(r["gbps"] for r in rs)))
        # (set, case, bs, device, lib) -> [(threads, cell)]: cell() without
        # threads would otherwise scan every cell (minutes on the GPU runs)
        self._by_lib = defaultdict(list)
        for key, c in self.cells.items():
            self._by_lib[key[:5]].append((key[5], c))

    @property
    def gpu_read(self):
        return median(self.stream_gpu) if self.stream_gpu else None

    def stream(self, threads):
        v = self.stream_cpu.get(threads)
        return median(v) if v else None

    def rows(self, set_, device):
        """Sorted (case, bs) of a set with measurements on device."""
        keys = {(k[1], k[2]) for k in self.cells if k[0] == set_ and k[3] == device}
        return sorted(keys, key=lambda cb: (case_order(cb[0]), cb[1]))

    def cell(self, set_, case, bs, device, lib, threads=None):
        """The cell of lib; threads None: the lib's best thread count."""
        if threads is not None:
            return self.cells.get((set_, case, bs, device, lib, threads))
        best = None
        for t, c in self._by_lib.get((set_, case, bs, device, lib), ()):
            if best is None or c["gbps"] > best["gbps"]:
                best = dict(c, threads=t)
        return best

    def config_sets(self, set_):
        """The (type, order) sets of set_ that hold GPU records, in order."""
        key = {"double": 0, "float": 1, "col": 0, "row": 1}
        found = {k[0] for k in self.cells if k[0].startswith(set_ + " ")}
        return sorted(found, key=lambda s: [key.get(x, 2) for x in config_of(s)[1:]])

    def threads_of(self, set_, device, lib):
        return sorted({k[5] for k in self.cells if k[0] == set_ and k[3] == device and k[4] == lib})


def case_order(case):
    stem, _, kind = case.partition(":")
    return (stem, {"promote": 0, "split": 1}.get(kind, 2))


def median(v):
    v = sorted(v)
    n = len(v)
    if n == 0:
        return float("nan")
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def geomean(v):
    v = [x for x in v if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def _runs(mode, path=None):
    """(directory, label) of the runs of mode (cpu|gpu), newest first; full
    runs before quick ones."""
    root = path or RESULTS
    found = []
    if not os.path.isdir(root):
        return found
    for name in os.listdir(root):
        d = os.path.join(root, name)
        m = os.path.join(d, "meta.json")
        if os.path.isfile(m):
            try:
                with open(m) as f:
                    meta = json.load(f)
            except ValueError:
                continue
            if meta.get("mode") == mode:
                found.append((not meta.get("quick", False), meta.get("start_utc", ""), d, meta.get("label")))
    return [(d, label) for _, _, d, label in sorted(found, reverse=True)]


def find_runs(mode, path=None):
    """The run directories of mode (cpu|gpu), newest first; full runs before
    quick ones."""
    return [d for d, _ in _runs(mode, path)]


def newest_runs(mode, path=None):
    """The newest run of mode per machine label: the GPU part has one run
    per GPU model."""
    seen, out = set(), []
    for d, label in _runs(mode, path):
        if label not in seen:
            seen.add(label)
            out.append(d)
    return out


# ---- several GPUs: scripts/gpu_mpi.sh through `bench/suite.sh --gpu-mpi` ----------


def _grid_dims(matrix):
    """(nx, ny, nz) of a grid27_NXxNYxNZ matrix name, else None."""
    stem, _, dims = matrix.partition("_")
    parts = dims.split("x")
    if stem != "grid27" or len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


class MpiRun:
    """One gpu-mpi result directory: bench.jsonl of bsrmv_mpi_bench --gpu
    ("mpi_spmv" and "mpi_solve" records), machine.txt (nvidia-smi) and
    meta.json.  A directory from scripts/gpu_mpi.sh alone (no meta.json)
    reads the GPU model and count from machine.txt and the label and date
    from its name.  A (matrix, bs, ranks) measured twice keeps the later
    record, as the script's summary does."""

    def __init__(self, path):
        self.path = path
        meta_path = os.path.join(path, "meta.json")
        self.meta = {}
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                self.meta = json.load(f)
        gpus = []
        mt = os.path.join(path, "machine.txt")
        if os.path.exists(mt):
            with open(mt) as f:
                for line in f:
                    # nvidia-smi's table: "|   0  NVIDIA H200    On  |   ..."
                    g = re.match(r"\|\s+\d+\s+(.+?)\s+(On|Off)\s+\|", line)
                    if g:
                        gpus.append(g.group(1))
        self.records = read_jsonl(os.path.join(path, "bench.jsonl"))
        self.gpu_name = self.meta.get("gpu") or (gpus[0] if gpus else "") or next(
            (r["device"] for r in self.records if r.get("device")), "")
        self.gpu_count = self.meta.get("gpu_count") or len(gpus) or None
        name = os.path.basename(os.path.normpath(path))
        self.label = self.meta.get("label") or name.split("_")[0]
        self.date = self.meta.get("date") or (name.split("_")[1] if "_" in name else "")
        self.spmv = {}
        self.solve = {}
        for r in self.records:
            if r.get("bench") == "mpi_spmv":
                self.spmv[(r["matrix"], r["bs"], r["ranks"])] = r
            elif r.get("bench") == "mpi_solve" and r.get("backend") == "gpu":
                self.solve[(r["matrix"], r["method"], r["bs"], r["ranks"])] = r

    def strong(self):
        """{(matrix, bs): [(ranks, record, speedup, efficiency)]} for every
        matrix measured on 1 rank and on more."""
        out = {}
        for (m, bs, p), one in sorted(self.spmv.items()):
            if p != 1:
                continue
            rows = [(q, r, one["ms"] / r["ms"], one["ms"] / r["ms"] / q)
                    for (m2, bs2, q), r in sorted(self.spmv.items()) if (m2, bs2) == (m, bs)]
            if len(rows) > 1:
                out[(m, bs)] = rows
        return out

    def weak(self):
        """{(base matrix, bs): [(ranks, matrix, record, efficiency)]}: grids
        stretched along z by the rank count, each rank keeping the 1-rank
        size; efficiency = time on 1 rank / time on P ranks."""
        out = {}
        for (m, bs, p), one in sorted(self.spmv.items()):
            d = _grid_dims(m)
            if p != 1 or not d or not d[0] == d[1] == d[2]:
                continue
            rows = [(1, m, one, 1.0)]
            for (m2, bs2, q), r in sorted(self.spmv.items(), key=lambda kv: kv[0][2]):
                if bs2 == bs and q > 1 and _grid_dims(m2) == (d[0], d[1], d[2] * q):
                    rows.append((q, m2, r, one["ms"] / r["ms"]))
            if len(rows) > 1:
                out[(m, bs)] = rows
        return out


def is_mpi_run(d):
    """A gpu-mpi run directory: meta.json with mode "gpu-mpi", or no
    meta.json and a bench.jsonl with mpi_spmv records (a directory written
    by scripts/gpu_mpi.sh itself)."""
    m, b = os.path.join(d, "meta.json"), os.path.join(d, "bench.jsonl")
    if os.path.isfile(m):
        try:
            with open(m) as f:
                return json.load(f).get("mode") == "gpu-mpi"
        except ValueError:
            return False
    return os.path.isfile(b) and any(r.get("bench") == "mpi_spmv" for r in read_jsonl(b))


def find_mpi_runs(path=None):
    """gpu-mpi run directories (is_mpi_run), newest first."""
    root = path or RESULTS
    if not os.path.isdir(root):
        return []
    runs = [MpiRun(os.path.join(root, n)) for n in os.listdir(root) if is_mpi_run(os.path.join(root, n))]
    return [r.path for r in sorted(runs, key=lambda r: (r.meta.get("start_utc") or r.date), reverse=True)]
