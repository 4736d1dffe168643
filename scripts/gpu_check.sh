#!/bin/bash
# One device call: toolchain check, build with CUDA, GPU tests, sanitizers,
# benchmark + tune.  Full logs under $OUT (at most 8 files), a short table
# at the end of stdout.  Usage: scripts/gpu_check.sh [quick]
#   BENCH_BS    block sizes of the benchmark (default 1,2,3,4,5,6,7,8,12,16,24,32)
#   BENCH_TYPES, BENCH_ORDERS  its types (default double,float) and block
#               orders (default both: col, row)
#   SAN_TOOLS   sanitizer tools (default "memcheck racecheck")
#   TESTS       a ctest -R regex of the GPU tests to run (default: all; the
#               build-carry/ fallback runs test_gpu alone)
#   SKIP_SAN=1  skip compute-sanitizer;  SKIP_TUNE=1 skip the runtime-bs tune run
#   TUNE_RT_BS  its block sizes (default 9,10,11,13,17,20,33,48,64,100)
#   SKIP_GRID=1 skip the grid benchmark;  SKIP_IRREG=1 skip the power-law/arrow one
#   IRREG_BS    block sizes of the irregular benchmark (default 1,2,4,8,16)
#   SKIP_SOLVE=1 skip the GPU solver and bridge runs
#   PROFILE_SOLVE=1 per-kernel time and DRAM bytes of CG iterations (ncu)
#   TUNE7_BS    block sizes of a tune run on 7-point grids (short rows)
#   SUITE="ARGS" also run bench/suite.sh --gpu ARGS (results in suite/)
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
J=$(nproc)
BENCH_BS=${BENCH_BS:-1,2,3,4,5,6,7,8,12,16,24,32}
BENCH_TYPES=${BENCH_TYPES:-double,float}
BENCH_ORDERS=${BENCH_ORDERS:-both}
summary=()
note() { summary+=("$*"); echo "== $*"; }

{
  nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nvcc --version | tail -2; command -v compute-sanitizer; cmake --version | head -1
} 2>&1 | tee "$OUT/env.log"

# ---- build (fall back to binaries carried in build-carry/) -------------
B=build-gpu
t0=$(date +%s)
if cmake -S . -B $B -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
   cmake --build $B -j "$J" >>"$OUT/build.log" 2>&1; then
  note "build: ok in $(( $(date +%s) - t0 )) s on $J cores"
  TEST=$B/tests/gpu/test_gpu; TOOL=$B/tests/gpu/bsrmv_gpu_tool
else
  note "build: FAILED there (see build.log); using build-carry/"
  tail -20 "$OUT/build.log"
  TEST=build-carry/test_gpu; TOOL=build-carry/bsrmv_gpu_tool
fi

# ---- tests --------------------------------------------------------------
t0=$(date +%s)
if [ -d $B ] && [ -f $B/CTestTestfile.cmake ]; then
  (cd $B && timeout 300 ctest -L gpu ${TESTS:+-R "$TESTS"} --output-on-failure) >"$OUT/tests.log" 2>&1
  rc=$?
else
  timeout 300 $TEST >"$OUT/tests.log" 2>&1; rc=$?
fi
note "gpu tests: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed|SpMV runs' "$OUT/tests.log" | tail -2 | tr '\n' ' ')"
[ $rc -ne 0 ] && tail -30 "$OUT/tests.log"

# ---- sanitizers ------------------------------------------------------------
if [ -z "$SKIP_SAN" ]; then
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    lvl=1; [ $tool = racecheck ] && lvl=2
    t0=$(date +%s)
    BSRMV_GPU_TEST_QUICK=$lvl timeout 240 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $TEST \
      >"$OUT/san_$tool.log" 2>&1
    rc=$?
    if [ -x $B/tests/gpu/test_gpu_balanced ]; then
      BSRMV_GPU_TEST_QUICK=1 timeout 240 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 \
        $B/tests/gpu/test_gpu_balanced >>"$OUT/san_$tool.log" 2>&1
      rc=$((rc + $?))
    fi
    note "compute-sanitizer $tool: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_$tool.log" | tail -1)"
    [ $rc -ne 0 ] && tail -15 "$OUT/san_$tool.log"
  done
  [ -f "$OUT/san_racecheck.log" ] && cat "$OUT/san_racecheck.log" >>"$OUT/san_memcheck.log"; rm -f "$OUT/san_racecheck.log"
fi

# ---- benchmark (cuSPARSE + every kernel) + tune table --------------------
if [ -z "$SKIP_GRID" ]; then
t0=$(date +%s)
timeout 420 $TOOL --bench --json --bs "$BENCH_BS" --type "$BENCH_TYPES" --order "$BENCH_ORDERS" \
  --out "$OUT/tune.txt" >"$OUT/bench.jsonl" 2>"$OUT/bench_summary.txt"
rc=$?
note "bench: rc=$rc in $(( $(date +%s) - t0 )) s"
fi

# ---- irregular matrices: power-law (>= 300 MB, longest row 2*10^4 blocks)
# and arrow, every kernel + cuSPARSE in the same run; CPU on all cores ----
if [ -z "$SKIP_IRREG" ] && [ -x $B/bsrmv ]; then
  t0=$(date +%s)
  : >"$OUT/irregular.jsonl"
  for bs in ${IRREG_BS:-1 2 4 8 16}; do
    case $bs in 1) mb=3200000;; 2) mb=1100000;; 4) mb=290000;; 8) mb=75000;; *) mb=$((4800000 / (bs * bs)));; esac
    timeout 150 $B/bsrmv bench --powerlaw $mb,8,$(( mb < 20000 ? mb : 20000 )) --bs $bs --gpu --json --reps 5 --threads $J \
      --kernels auto --no-stream >>"$OUT/irregular.jsonl" 2>>"$OUT/irregular.log"
  done
  timeout 150 $B/bsrmv bench --arrow 400000,2 --bs 2 --gpu --json --reps 5 --threads $J --kernels auto \
    --no-stream >>"$OUT/irregular.jsonl" 2>>"$OUT/irregular.log"
  note "irregular bench: $(( $(date +%s) - t0 )) s, $(wc -l <"$OUT/irregular.jsonl") records"
  python3 scripts/irregular_table.py "$OUT/irregular.jsonl" 2>&1 | tee "$OUT/irregular_table.txt"
fi
if [ -z "$SKIP_TUNE" ]; then
  t0=$(date +%s)
  {
    timeout 240 $TOOL --bs ${TUNE_RT_BS:-9,10,11,13,17,20,33,48,64,100} --type "$BENCH_TYPES" --order "$BENCH_ORDERS" --mb 150 --bench \
      --out /tmp/tune_rt.txt --json >"$OUT/tune_rt.jsonl"
  } >"$OUT/tune_extra.log" 2>&1
  cat /tmp/tune_rt.txt >>"$OUT/tune.txt" 2>/dev/null
  note "tune (runtime bs): $(( $(date +%s) - t0 )) s"
fi

# ---- solvers on the GPU (>= 10^7 unknowns) and the bridge ----------------
if [ -z "$SKIP_SOLVE" ] && [ -x $B/bsrmv ]; then
  t0=$(date +%s)
  {
    echo "## bsrmv solve --gpu --reservoir 140 --nc 4 (BiCGSTAB + block Jacobi)"
    timeout 120 $B/bsrmv solve --gpu --reservoir 140 --nc 4 --repeat 3
    echo "## bsrmv solve --gpu --grid 140 --bs 4 --method cg"
    timeout 120 $B/bsrmv solve --gpu --grid 140 --bs 4 --method cg --repeat 3
    echo "## bsrmv solve (CPU, $J threads) --reservoir 140 --nc 4"
    timeout 120 $B/bsrmv solve --reservoir 140 --nc 4 --repeat 1
    echo "## bsrmv bridge --gpu --segments 130 --check-dense"
    timeout 60 $B/bsrmv bridge --gpu --segments 130 --check-dense --model frame
    echo "## bsrmv bridge --gpu --segments 160000 --max-iter 2000"
    timeout 60 $B/bsrmv bridge --gpu --segments 160000 --max-iter 2000 --model truss
  } >"$OUT/solve.log" 2>&1
  note "solvers: $(( $(date +%s) - t0 )) s (solve.log)"
fi

if [ -n "$TUNE7_BS" ] && [ -x $B/bsrmv ]; then
  t0=$(date +%s)
  timeout 200 $B/bsrmv tune --stencil 7 --bs "$TUNE7_BS" --bench --json --out "$OUT/tune7.txt" \
    >"$OUT/tune7.jsonl" 2>"$OUT/tune7_summary.txt"
  note "tune on 7-point grids: rc=$? in $(( $(date +%s) - t0 )) s"
  grep -A30 "^type" "$OUT/tune7_summary.txt"
fi
if [ -n "$SUITE" ] && [ -x $B/bsrmv ]; then
  t0=$(date +%s)
  # shellcheck disable=SC2086
  bash bench/suite.sh --gpu $SUITE --bsrmv $B/bsrmv --out "$OUT/suite" >"$OUT/suite_stdout.log" 2>&1
  note "suite --gpu $SUITE: rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E "phases|== set|skip" "$OUT/suite/suite.log" | tail -25
fi
if [ -n "$PROFILE_SOLVE" ] && [ -x $B/bsrmv ] && command -v ncu >/dev/null; then
  t0=$(date +%s)
  timeout 240 ncu --clock-control none --csv --print-units base \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --launch-skip 40 --launch-count 60 $B/bsrmv solve --gpu --grid 140 --bs 4 --method cg \
    --max-iter 30 --repeat 1 >"$OUT/ncu_cg.csv" 2>"$OUT/ncu_cg.log"
  python3 scripts/ncu_table.py "$OUT/ncu_cg.csv" >>"$OUT/solve.log" 2>&1
  note "ncu profile of CG: rc=$? in $(( $(date +%s) - t0 )) s (solve.log)"
fi

echo; echo "================ summary ================"
for s in "${summary[@]}"; do echo "$s"; done
echo; cat "$OUT/bench_summary.txt" | grep -v "^bsrmv: cusparseSpMV" | tail -60
if [ -f "$OUT/tune_extra.log" ]; then
  echo; grep -E "geometric|GPU" "$OUT/tune_extra.log" | head; grep -A40 "^type" "$OUT/tune_extra.log" | grep -vE "^--$" | head -40
fi

# At most 8 files come back from the device: the main results stay loose,
# everything (logs included) also goes into one archive.
(cd "$OUT" && tar czf /tmp/gpu_check_logs.tar.gz --exclude=logs.tar.gz . && mv /tmp/gpu_check_logs.tar.gz logs.tar.gz &&
  for f in *; do case $f in logs.tar.gz|bench.jsonl|irregular.jsonl|bench_summary.txt|irregular_table.txt|solve.log|tests.log|tune7.jsonl) ;; *) rm -rf "$f" ;; esac; done)
