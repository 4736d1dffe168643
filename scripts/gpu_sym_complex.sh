#!/bin/bash
# Complex symmetric and Hermitian storage on one GPU machine, in one call:
# build (CUDA, Release, sm_90), the GPU tests of symmetric storage
# (test_gpu_complex: complex symmetric and Hermitian, the SYM kernels and
# the full copy, op N/T/C; test_gpu_sym: real) and the CPU ones (test_herm,
# test_sym) with their full output, then Hermitian storage against full
# storage of the same complex double Hermitian positive definite 27-point
# grid of ~400 MB full storage at bs 3 and 6, with cuSPARSE, in one bench
# run each.  Logs and JSON lines under $OUT, a summary at the end of stdout.
# Run from the repository root; the build directory is reused, so a second
# call goes on where the first stopped.
#   BUILD                              the build directory (default build-gpu)
#   SKIP_TESTS=1, SKIP_BENCH=1         skip a part
#   SANITIZER=1                        also compute-sanitizer memcheck on the
#                                      quick test_gpu_complex
OUT=${OUT:-/tmp/gpu_sym_complex_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build-gpu}
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
summary=()
note() { summary+=("$*"); echo "== $*"; }

{ nvidia-smi -L; nvcc --version | tail -1; cmake --version | head -1; } >"$OUT/env.log" 2>&1

t0=$(date +%s)
if ! { cmake -S . -B "$B" -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       timeout 480 cmake --build "$B" -j "$J"; } >"$OUT/build.log" 2>&1; then
  note "build: FAILED (build.log)"
  tail -30 "$OUT/build.log"
  printf '%s\n' "${summary[@]}"
  exit 1
fi
note "build: ok in $(( $(date +%s) - t0 )) s, $(grep -ci 'warning' "$OUT/build.log") warning lines"

if [ -z "$SKIP_TESTS" ]; then
  for t in gpu/test_gpu_complex gpu/test_gpu_sym test_herm test_sym; do
    n=$(basename $t)
    t0=$(date +%s)
    timeout 300 "$B/tests/$t" >"$OUT/$n.log" 2>&1
    rc=$?
    note "$n: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E '^(test_gpu_complex|symmetric and Hermitian|products|cg|test_herm|test_sym)' "$OUT/$n.log" | tr '\n' ' ')"
    [ $rc -ne 0 ] && tail -15 "$OUT/$n.log"
  done
  if [ -n "$SANITIZER" ] && command -v compute-sanitizer >/dev/null; then
    t0=$(date +%s)
    BSRMV_GPU_TEST_QUICK=1 timeout 300 compute-sanitizer --tool memcheck --report-api-errors no \
      --error-exitcode 9 "$B/tests/gpu/test_gpu_complex" >"$OUT/memcheck.log" 2>&1
    note "memcheck test_gpu_complex (quick): rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log")"
  fi
fi

# One grid: the full storage's pick and cuSPARSE, then the pick and the SYM
# kernels on the Hermitian storage, all on the same x and checked against
# one reference (the bench exits 1 on a wrong result).
if [ -z "$SKIP_BENCH" ]; then
  for g in "3 47" "6 30"; do   # complex double, 27-point: ~400 MB in full storage
    set -- $g
    t0=$(date +%s)
    timeout 240 "$B/bsrmv" bench --grid "$2" --bs "$1" --type z --sym --gpu --no-cpu \
      --gpu-kernels sym --json >"$OUT/herm_z_bs$1.jsonl" 2>"$OUT/herm_z_bs$1.log"
    note "bench Hermitian z bs $1 grid $2: rc=$? in $(( $(date +%s) - t0 )) s"
  done
  python3 - "$OUT" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, os, sys
print("%-26s %3s %-4s %-44s %9s %8s %8s %9s" % ("matrix", "bs", "type", "kernel", "time_ms", "GB/s",
      "x full", "rel_err"))
for path in sorted(glob.glob(os.path.join(sys.argv[1], "herm_*.jsonl"))):
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("backend") not in ("gpu", "cusparse"):
            continue
        print("%-26s %3d %-4s %-44s %9.3f %8.1f %8s %9.1e" % (r["matrix"][:26], r["bs"], r["type"],
              (r["backend"] + ":" + r["kernel"])[:44], r["time_ms"], r["gbps"],
              "%.2f" % r["speedup_vs_full"] if "speedup_vs_full" in r else "-", r["rel_err"]))
EOF
fi

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
