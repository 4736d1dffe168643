#!/bin/bash
# One device call for the GPU SpMM (bsrmv_gpu_spmm): build with CUDA
# (Release, sm_90), the SpMM GPU test, then `bsrmv bench --gpu --k ...`:
#   - 27-point grids of ~400 MB at bs 3 and 6, k in {1, 2, 4, 8, 16}, both
#     layouts (the targets: k = 4 >= 2.5x and k = 8 >= 4x the vectors/s of
#     k separate SpMVs);
#   - ~SWEEP_MB MB grids at bs 2, 4, 5, 7, 8 (3 and 6 come from the large
#     ones), k in {2, 4, 8, 16}, both layouts: the geometric mean of the
#     best cuSPARSE SpMM time over bsrmv's (target >= 1.3, same layout).
# Each case times bsrmv_gpu_spmm, k bsrmv_gpu_spmv calls and cusparseSpMM
# (BSR_ALG1 on both block orders, CSR_ALG1..3 on the scalar expansion) in
# the same run.  A compact table on stdout; JSON lines and logs in $OUT.
#   TYPES     value types (default double)
#   SWEEP_MB  size of the sweep's grids (default 50)
#   REPS      timed calls per path (default 30; the median is reported)
#   BUILD     build directory (default build-gpu; reused when present)
#   SKIP_TEST=1  skip the test
# About 6-8 minutes on an H100 with a fresh build.
OUT=${OUT:-/tmp/gpu_spmm_out}
mkdir -p "$OUT"
J=$(nproc)
TYPES=${TYPES:-double}
SWEEP_MB=${SWEEP_MB:-50}
REPS=${REPS:-30}
B=${BUILD:-build-gpu}
nvidia-smi -L 2>&1 | tee "$OUT/env.log"
t0=$(date +%s)
if ! { cmake -S . -B $B -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build $B -j "$J"; } >"$OUT/build.log" 2>&1; then
  echo "build FAILED"; tail -30 "$OUT/build.log"; exit 1
fi
echo "build: ok in $(( $(date +%s) - t0 )) s"

if [ -z "$SKIP_TEST" ]; then
  t0=$(date +%s)
  timeout 300 $B/tests/gpu/test_gpu_spmm >"$OUT/test_gpu_spmm.log" 2>&1
  rc=$?
  echo "test_gpu_spmm: rc=$rc in $(( $(date +%s) - t0 )) s: $(tail -1 "$OUT/test_gpu_spmm.log")"
  [ $rc -ne 0 ] && tail -20 "$OUT/test_gpu_spmm.log"
fi

# grid edge for ~MB megabytes of 27-point BSR values at bs (boundary rows
# have fewer blocks: ~0.9 of 27 per row at these sizes)
edge() { awk -v mb="$1" -v bs="$2" 'BEGIN { printf "%d", (mb * 1e6 / (0.9 * 27 * bs * bs * 8)) ^ (1 / 3) + 0.5 }'; }

bench_case() { # bs MB klist
  local n; n=$(edge "$2" "$1")
  timeout 300 $B/bsrmv bench --grid "$n" --bs "$1" --type "$TYPES" --gpu --no-cpu --gpu-kernels auto \
    --gpu-reps "$REPS" --k "$3" --layout row,col --json >>"$OUT/bench.json" 2>>"$OUT/bench.log" ||
    echo "bench bs $1 grid $n: rc=$? (see bench.log)"
}
: >"$OUT/bench.json"; : >"$OUT/bench.log"
t0=$(date +%s)
bench_case 3 400 1,2,4,8,16
bench_case 6 400 1,2,4,8,16
for bs in 2 4 5 7 8; do bench_case $bs "$SWEEP_MB" 2,4,8,16; done
echo "bench: $(( $(date +%s) - t0 )) s"
grep -E "wrong result|failed|FAILED" "$OUT/bench.log" | head -10

# spmm-summary MATRIX BS TYPE LAYOUT K SPMM_MS SPMV_MS RATIO CUSPARSE CS_MS CS_RATIO
echo
printf "%-18s %3s %-6s %-3s %3s %10s %11s %7s %11s %7s  %s\n" matrix bs type lay k "spmm ms" "k*spmv ms" ratio \
  "cusparse ms" ratio "best cuSPARSE"
grep '^spmm-summary' "$OUT/bench.log" | awk '
  { printf "%-18s %3s %-6s %-3s %3s %10.4f %11.4f %7.2f %11.4f %7.2f  %s\n", $2, $3, $4, $5, $6, $7, $8, $9, $11,
           $12, $10 }'
echo
grep '^spmm-summary' "$OUT/bench.log" | awk '
  ($3 == 3 || $3 == 6) && ($6 == 4 || $6 == 8) {
    printf "target bs %d %s %s k=%d: %.2fx the vectors/s of k SpMVs (want %s)\n", $3, $4, $5, $6, $9,
           $6 == 4 ? ">= 2.5" : ">= 4" }
  $3 >= 2 && $3 <= 8 && ($6 == 2 || $6 == 4 || $6 == 8 || $6 == 16) && $12 > 0 {
    s[$4 " " $5] += log($12); n[$4 " " $5]++ }
  END { for (l in s) printf "geomean over bs 2..8, k 2..16 (%s, %d cases): %.2fx the best cuSPARSE SpMM (want >= 1.3)\n",
                            l, n[l], exp(s[l] / n[l]) }'
