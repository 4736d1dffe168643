#!/bin/bash
# GPU SpMM of float values with double vectors (mixed precision) in one
# device call: build with CUDA (Release, sm_90; the build directory is
# reused when present), test_gpu_spmm and test_gpu_mixed with their full
# output in $OUT/*.log, then `bsrmv bench --gpu --k 4,8 --layout row,col
# --type double,mixed` on 27-point grids of ~400 MB (double matrix) at bs 3
# and 6: per case, in the same process, the mixed SpMM and k mixed SpMVs,
# the double SpMM and k double SpMVs.  Summary lines at the end of stdout.
# Run from the repository root.
#   GRID3, GRID6  grid edges at bs 3 and 6 (default 58 and 37: ~400 MB of
#                 double values each)
#   REPS          timed calls per path (default 30; the median is reported)
#   BUILD         build directory (default build-gpu)
#   SKIP_TESTS=1  skip the tests
# Each step runs under `timeout`; the whole should take under 5 minutes on
# an H100 host with 16 cores.
OUT=${OUT:-/tmp/gpu_spmm_mixed_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build-gpu}
GRID3=${GRID3:-58}
GRID6=${GRID6:-37}
REPS=${REPS:-30}
summary=()
note() { summary+=("$*"); echo "== $*"; }

{
  nvidia-smi -L; nvcc --version | tail -2; cmake --version | head -1
} >"$OUT/env.log" 2>&1

# only the targets this script runs: the library, the CLI, the two tests
t0=$(date +%s)
if ! { timeout 120 cmake -S . -B $B -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CUDA_ARCHITECTURES=90 &&
       timeout 420 cmake --build $B -j "$J" --target bsrmv_cli test_gpu_spmm test_gpu_mixed; } \
       >"$OUT/build.log" 2>&1; then
  note "build: FAILED (build.log)"
  tail -30 "$OUT/build.log"
  exit 1
fi
note "build: ok in $(( $(date +%s) - t0 )) s"

if [ -z "$SKIP_TESTS" ]; then
  for t in test_gpu_spmm test_gpu_mixed; do
    t0=$(date +%s)
    timeout 300 $B/tests/gpu/$t >"$OUT/$t.log" 2>&1
    rc=$?
    note "$t: rc=$rc in $(( $(date +%s) - t0 )) s: $(tail -1 "$OUT/$t.log")"
    [ $rc -ne 0 ] && grep -E "FAIL|check failed|error" "$OUT/$t.log" | head -10
  done
fi

: >"$OUT/bench.jsonl"
: >"$OUT/bench.log"
for spec in "3 $GRID3" "6 $GRID6"; do
  set -- $spec
  t0=$(date +%s)
  timeout 300 $B/bsrmv bench --grid "$2" --bs "$1" --type double,mixed --gpu --no-cpu \
    --no-stream --gpu-kernels auto --gpu-reps "$REPS" --k 4,8 --layout col,row --json \
    >>"$OUT/bench.jsonl" 2>>"$OUT/bench.log"
  note "bench bs $1 grid $2: rc=$? in $(( $(date +%s) - t0 )) s"
done
grep -E "wrong result|failed|FAILED" "$OUT/bench.log" | head -10

# spmm-summary MATRIX BS TYPE LAYOUT K SPMM_MS SPMV_MS RATIO CUSPARSE CS_MS CS_RATIO
grep '^spmm-summary' "$OUT/bench.log" >"$OUT/spmm_summary.txt"
echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
printf "%-16s %3s %-3s %2s %12s %12s %14s %14s %10s %10s\n" matrix bs lay k "mixed spmm" \
  "double spmm" "k mixed spmv" "k double spmv" "vs d spmm" "vs d spmvs"
awk '
  { key = $2 " " $3 " " $5 " " $6; ms[key, $4] = $7; kv[key, $4] = $8; keys[key] = 1 }
  END {
    for (key in keys) {
      if (!((key, "mixed") in ms) || !((key, "double") in ms)) continue
      split(key, f, " ")
      m = ms[key, "mixed"]; d = ms[key, "double"]
      printf "%-16s %3s %-3s %2s %9.4f ms %9.4f ms %11.4f ms %11.4f ms %9.2fx %9.2fx\n", f[1], f[2], f[3],
             f[4], m, d, kv[key, "mixed"], kv[key, "double"], d / m, kv[key, "double"] / m
    }
  }' "$OUT/spmm_summary.txt" | sort -k2,2n -k3,3 -k4,4n
echo "(vs d spmm: the double SpMM's time over the mixed one's; vs d spmvs: k double SpMVs over the mixed SpMM)"
