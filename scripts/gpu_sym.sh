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
#   SKIP_TESTS=1, SKIP_GRID=1, SKIP_MTX=1  skip a part
#   BUILD       the build directory (default build-gpu-sym)
#   CPU_THREADS the CPU runs' thread counts (default 1,$(nproc))
OUT=${OUT:-/tmp/gpu_sym_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build-gpu-sym}
MTX_DIR=${MTX_DIR:-.mtx}
[ -d "$MTX_DIR" ] || MTX_DIR=../shared/matrices
MATRICES=${MATRICES:-bcsstk16 bcsstk25 s1rmq4m1 crystm01 msc04515}
CPU_THREADS=${CPU_THREADS:-1,$J}
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
summary=()
note() { summary+=("$*"); echo "== $*"; }

{ nvidia-smi -L; nvcc --version | tail -1; cmake --version | head -1; } 2>&1 | tee "$OUT/env.log"

t0=$(date +%s)
if ! { cmake -S . -B $B -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build $B -j "$J"; } >"$OUT/build.log" 2>&1; then
  note "build FAILED (build.log)"
  tail -30 "$OUT/build.log"
  exit 1
fi
note "build: ok in $(( $(date +%s) - t0 )) s"
CLI=$B/bsrmv

if [ -z "$SKIP_TESTS" ]; then
  t0=$(date +%s)
  (cd $B && timeout 900 ctest -R '^(test_gpu_sym|test_sym|test_gpu_solve|test_gpu_quick)$' \
     --output-on-failure) >"$OUT/tests.log" 2>&1
  note "tests: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$OUT/tests.log")"
  grep -E '^(products|cg|matrix market|refusals):' -h "$OUT/tests.log" $B/Testing/Temporary/LastTest.log 2>/dev/null |
    sort -u | sed 's/^/   /'
fi

# One matrix source: GPU records (full storage's pick and cuSPARSE, then the
# SYM kernels, all on the same x and checked against one reference) and CPU
# records (full and sym timed alternately).
run() {
  local tag=$1; shift
  timeout 900 $CLI bench "$@" --sym --gpu --no-cpu --gpu-kernels sym --json \
    >"$OUT/$tag.gpu.jsonl" 2>"$OUT/$tag.gpu.log" || note "$tag GPU: FAILED ($tag.gpu.log)"
  timeout 900 $CLI bench "$@" --sym --threads "$CPU_THREADS" --reps 20 --json \
    >"$OUT/$tag.cpu.jsonl" 2>"$OUT/$tag.cpu.log" || note "$tag CPU: FAILED ($tag.cpu.log)"
}

if [ -z "$SKIP_GRID" ]; then
  run grid_bs3 --grid 58 --bs 3        # ~400 MB in full storage
  run grid_bs6 --grid 38 --bs 6
fi
if [ -z "$SKIP_MTX" ]; then
  for m in $MATRICES; do
    f="$MTX_DIR/$m.mtx.gz"
    [ -f "$f" ] || { note "$m: no $f"; continue; }
    run "$m" --mtx "$f" --promote --bs 3,4,6
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
print("%-34s %3s %-6s %-4s %-46s %9s %8s %8s %9s" % ("matrix", "bs", "type", "dev", "kernel",
      "time_ms", "GB/s", "x full", "rel_err"))
for r in rows:
    dev = "gpu" if r["backend"] == "gpu" else "cpu%d" % r["threads"]
    print("%-34s %3d %-6s %-4s %-46s %9.3f %8.1f %8s %9.1e" % (r["matrix"][:34], r["bs"], r["type"], dev,
          r["kernel"][:46], r["time_ms"], r["gbps"],
          "%.2f" % r["speedup_vs_full"] if "speedup_vs_full" in r else "-", r["rel_err"]))
EOF
printf '%s\n' "${summary[@]}"
