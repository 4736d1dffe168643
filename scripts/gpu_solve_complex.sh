#!/bin/bash
# The GPU solvers with complex values on one GPU machine, in one call:
# build (CUDA, Release, sm_90), tests/gpu/test_gpu_solve (real and complex
# solves against the host ones) with its full output, the whole `gpu` ctest
# label, and compute-sanitizer memcheck on test_gpu_solve.  Logs under
# $OUT, a summary at the end of stdout.  Run from the repository root; the
# build directory is reused, so a second call goes on where the first
# stopped.
#   BUILD                          the build directory (default build-gpu)
#   SKIP_CTEST=1, SKIP_SANITIZER=1 skip a part
OUT=${OUT:-/tmp/gpu_solve_complex_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build-gpu}
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
summary=()
note() { summary+=("$*"); echo "== $*"; }

{ nvidia-smi -L; nvcc --version | tail -1; cmake --version | head -1; } >"$OUT/env.log" 2>&1

t0=$(date +%s)
if ! { cmake -S . -B "$B" -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build "$B" -j "$J"; } >"$OUT/build.log" 2>&1; then
  note "build: FAILED (build.log)"
  tail -30 "$OUT/build.log"
  exit 1
fi
note "build: ok in $(( $(date +%s) - t0 )) s, $(grep -ci 'warning' "$OUT/build.log") warning lines"

t0=$(date +%s)
timeout 300 "$B/tests/gpu/test_gpu_solve" >"$OUT/test_gpu_solve.log" 2>&1
rc=$?
note "test_gpu_solve: rc=$rc in $(( $(date +%s) - t0 )) s, $(grep -c 'complex' "$OUT/test_gpu_solve.log") complex lines"
[ $rc -ne 0 ] && tail -15 "$OUT/test_gpu_solve.log"

if [ -z "$SKIP_CTEST" ]; then
  t0=$(date +%s)
  (cd "$B" && timeout 900 ctest -L gpu --output-on-failure) >"$OUT/ctest_gpu.log" 2>&1
  rc=$?
  note "ctest -L gpu: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$OUT/ctest_gpu.log" | tail -1)"
  [ $rc -ne 0 ] && grep -E "Failed|FAIL|check failed" "$OUT/ctest_gpu.log" | head -20
fi

if [ -z "$SKIP_SANITIZER" ]; then
  t0=$(date +%s)
  if command -v compute-sanitizer >/dev/null; then
    timeout 400 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
      "$B/tests/gpu/test_gpu_solve" >"$OUT/memcheck.log" 2>&1
    note "memcheck: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log")"
  else
    note "memcheck: no compute-sanitizer"
  fi
fi

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
