#!/bin/bash
# Symmetric storage on one GPU machine, in one call: build with CUDA
# (Release, sm_90), the symmetric tests (GPU and CPU), then symmetric
# against full storage of the same matrix, GPU and CPU: SPD 27-point grids
# of ~400 MB at bs 3 and 6, and promoted symmetric SuiteSparse matrices at
# bs 3, 4 and 6.  Logs and JSON lines under $OUT, a summary on stdout.
# The build directory is reused, so a second call after a timeout goes on
# where the first stopped.
#   MTX_DIR     where the .mtx.gz files are (default .mtx, else ../shared/matrices)
#   MATRICES    which of them (default bcsstk16 bcsstk25 s1rmq4m1 crystm01 msc04515)
#   SKIP_TESTS=1, SKIP_GRID=1, SKIP_MTX=1, SKIP_CPU=1  skip a part
#   BUILD       the build directory (default build-gpu-sym)
#   TARGETS     build only these targets (default: everything)
#   TESTS       the ctest regex (default the symmetric tests, test_gpu_solve,
#               test_gpu_quick); CTEST_J tests at a time (default 1)
#   GRIDS       the grids, N:BS each (default "58:3 38:6")
#   MTX_BS      the matrices' block sizes (default 3,4,6)
#   ORDERS      block orders, each a run of its own (default col)
#   CPU_THREADS the CPU runs' thread counts (default 1,$(nproc))
OUT=${OUT:-/tmp/gpu_sym_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build-gpu-sym}
MTX_DIR=${MTX_DIR:-.mtx}
[ -d "$MTX_DIR" ] || MTX_DIR=../shared/matrices
MATRICES=${MATRICES:-bcsstk16 bcsstk25 s1rmq4m1 crystm01 msc04515}
TESTS=${TESTS:-'^(test_gpu_sym|test_sym|test_gpu_solve|test_gpu_quick)$'}
GRIDS=${GRIDS:-58:3 38:6}
MTX_BS=${MTX_BS:-3,4,6}
ORDERS=${ORDERS:-col}
CPU_THREADS=${CPU_THREADS:-1,$J}
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
summary=()
note() { summary+=("$*"); echo "== $*"; }

{ nvidia-smi -L; nvcc --version | tail -1; cmake --version | head -1; } 2>&1 | tee "$OUT/env.log"

t0=$(date +%s)
if ! { cmake -S . -B $B -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build $B -j "$J" ${TARGETS:+--target $TARGETS}; } >"$OUT/build.log" 2>&1; then
  note "build FAILED (build.log)"
  tail -30 "$OUT/build.log"
  exit 1
fi
note "build: ok in $(( $(date +%s) - t0 )) s"
CLI=$B/bsrmv

if [ -z "$SKIP_TESTS" ]; then
  t0=$(date +%s)
  (cd $B && timeout 900 ctest -j "${CTEST_J:-1}" -R "$TESTS" --output-on-failure) >"$OUT/tests.log" 2>&1
  note "tests: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$OUT/tests.log")"
  grep -E '^(products|grids|cg|matrix market|refusals|symmetric and Hermitian storage):' -h "$OUT/tests.log" $B/Testing/Temporary/LastTest.log 2>/dev/null |
    sort -u | sed 's/^/   /'
fi

# One matrix source: GPU records (full storage's pick and cuSPARSE, then the
# SYM kernels, all on the same x and checked against one reference) and CPU
# records (full and sym timed alternately); once per block order.
run() {
  local tag=$1; shift
  for o in $ORDERS; do
    local t=$tag.$o
    timeout 900 $CLI bench "$@" --order $o --sym --gpu --no-cpu --gpu-kernels sym --json \
      >"$OUT/$t.gpu.jsonl" 2>"$OUT/$t.gpu.log" || note "$t GPU: FAILED ($t.gpu.log)"
    [ -n "$SKIP_CPU" ] && continue
    timeout 900 $CLI bench "$@" --order $o --sym --threads "$CPU_THREADS" --reps 20 --json \
      >"$OUT/$t.cpu.jsonl" 2>"$OUT/$t.cpu.log" || note "$t CPU: FAILED ($t.cpu.log)"
  done
}

if [ -z "$SKIP_GRID" ]; then
  for g in $GRIDS; do                  # 58:3, 48:4, 38:6: ~400 MB in full storage
    run grid_bs${g#*:} --grid ${g%:*} --bs ${g#*:}
  done
fi
if [ -z "$SKIP_MTX" ]; then
  for m in $MATRICES; do
    f="$MTX_DIR/$m.mtx.gz"
    [ -f "$f" ] || { note "$m: no $f"; continue; }
    run "$m" --mtx "$f" --promote --bs $MTX_BS
  done
fi

# Speed-ups per matrix and bs: the symmetric kernels' time against the
# full storage's pick (GPU) or the full kernel at the same thread count (CPU).
python3 - "$OUT" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, os, sys
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "speedup_vs_full" not in r and not (r.get("kernel", "").startswith("auto:") or r.get("kernel") == "full"):
            continue
        rows.append(r)
print("%-34s %3s %-3s %-6s %-4s %-46s %9s %8s %8s %9s" % ("matrix", "bs", "ord", "type", "dev",
      "kernel", "time_ms", "GB/s", "x full", "rel_err"))
for r in rows:
    dev = "gpu" if r["backend"] == "gpu" else "cpu%d" % r["threads"]
    print("%-34s %3d %-3s %-6s %-4s %-46s %9.3f %8.1f %8s %9.1e" % (r["matrix"][:34], r["bs"],
          r.get("order", "col"), r["type"], dev, r["kernel"][:46], r["time_ms"], r["gbps"],
          "%.2f" % r["speedup_vs_full"] if "speedup_vs_full" in r else "-", r["rel_err"]))
# GPU: the full storage's pick against the 4-row windows (the plan's SYM
# configuration) and the fastest SYM kernel, per matrix, bs and order
full, sym = {}, {}
for r in rows:
    if r["backend"] != "gpu":
        continue
    key = (r["matrix"][:34], r["bs"], r["type"], r.get("order", "col"))
    if r["kernel"].startswith("auto:"):
        full[key] = r
    elif "speedup_vs_full" in r:
        sym.setdefault(key, []).append(r)
if sym:
    print("\nGPU, symmetric storage against the full storage's pick (time_ms, x full):")
    print("%-34s %3s %-6s %-3s %9s %9s %7s %9s %7s  %s" % ("matrix", "bs", "type", "ord", "full",
          "window4", "x", "best sym", "x", "best kernel"))
    for key in sorted(sym):
        w4 = [r for r in sym[key] if "sym_window" in r["kernel"] and "/r4/" in r["kernel"]]
        best = min(sym[key], key=lambda r: r["time_ms"])
        f = full.get(key)
        print("%-34s %3d %-6s %-3s %9s %9s %7s %9.4f %7.2f  %s" % (key[0], key[1], key[2], key[3],
              "%.4f" % f["time_ms"] if f else "-",
              "%.4f" % w4[0]["time_ms"] if w4 else "-", "%.2f" % w4[0]["speedup_vs_full"] if w4 else "-",
              best["time_ms"], best["speedup_vs_full"], best["kernel"]))
EOF
printf '%s\n' "${summary[@]}"
