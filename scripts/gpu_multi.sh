#!/bin/bash
# Several right-hand sides on the GPU in one device call: build (CUDA,
# Release, sm_90), the GPU solver test (bsrmv_gpu_solve_multi against
# single device solves) and the GPU SpMM test, the bridge's moving traffic
# solved together and one by one on the GPU and on the host CPU
# (`bsrmv bridge --load-cases`), then the benchmark suite's spmm and mixed
# sets (bench/suite.sh --gpu --sets spmm,mixed) into $OUT/gpu-spmm.  Logs
# under $OUT; a summary at the end of stdout.  Run from the repository root.
#   SEGMENTS      bridge deck panels (default 2000: ~13 000 unknowns, frame)
#   CASES         load cases (default 8)
#   SETS          suite sets (default spmm,mixed; empty: no suite run)
#   BUILD         the build directory (default build, what the suite uses)
# About 6-8 minutes on an H100 with a fresh build.
OUT=${OUT:-/tmp/gpu_multi_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build}
SEGMENTS=${SEGMENTS:-2000}
CASES=${CASES:-8}
SETS=${SETS-spmm,mixed}
summary=()
note() { summary+=("$*"); echo "== $*"; }

{
  nvidia-smi -L; nvcc --version | tail -2; cmake --version | head -1
} >"$OUT/env.log" 2>&1

t0=$(date +%s)
if ! { cmake -S . -B "$B" -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build "$B" -j "$J"; } >"$OUT/build.log" 2>&1; then
  note "build: FAILED (build.log)"
  tail -30 "$OUT/build.log"
  exit 1
fi
note "build: ok in $(( $(date +%s) - t0 )) s"

for t in test_gpu_solve test_gpu_spmm; do
  t0=$(date +%s)
  timeout 300 "$B/tests/gpu/$t" >"$OUT/$t.log" 2>&1
  rc=$?
  note "$t: rc=$rc in $(( $(date +%s) - t0 )) s: $(tail -1 "$OUT/$t.log")"
  [ $rc -ne 0 ] && tail -20 "$OUT/$t.log"
done

export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
for where in --gpu ''; do
  log=$OUT/bridge_cases${where:+_gpu}.log
  t0=$(date +%s)
  # shellcheck disable=SC2086
  timeout 300 "$B/bsrmv" bridge --model frame --segments "$SEGMENTS" --traffic 30 \
    --load-cases "$CASES" $where >"$log" 2>&1
  rc=$?
  note "bridge --load-cases $CASES ${where:-(CPU, $J threads)}: rc=$rc in $(( $(date +%s) - t0 )) s"
  grep -E '^(together|one by one|agreement)' "$log"
done

if [ -n "$SETS" ]; then
  t0=$(date +%s)
  bench/suite.sh --gpu --sets "$SETS" --out "$OUT/gpu-spmm" --budget 300 >"$OUT/suite.log" 2>&1
  rc=$?
  gzip -f "$OUT"/gpu-spmm/*.jsonl 2>/dev/null
  note "suite --sets $SETS: rc=$rc in $(( $(date +%s) - t0 )) s (records in $OUT/gpu-spmm)"
fi

echo
echo "summary:"
printf '  %s\n' "${summary[@]}"
