#!/bin/bash
# One device run for the GPU failure modes: builds with CUDA, runs
# tests/gpu/test_gpu_faults (device out of memory, host pointers, x/y
# overlap, NaN/Inf) and the quick GPU tests, then compute-sanitizer
# memcheck, racecheck and initcheck on test_gpu_faults and test_gpu (quick).
# Logs under $OUT; a summary at the end of stdout.  Exit status: the number
# of failed steps.
OUT=${OUT:-/tmp/gpu_faults_out}
mkdir -p "$OUT"
B=build-gpu-faults
fails=0
summary=()
note() { summary+=("$*"); echo "== $*"; }

{ nvidia-smi -L; nvcc --version | tail -2; command -v compute-sanitizer; } >"$OUT/env.log" 2>&1
t0=$(date +%s)
if cmake -S . -B $B -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/build.log" 2>&1 &&
   cmake --build $B -j 16 --target test_gpu_faults test_gpu test_gpu_balanced >>"$OUT/build.log" 2>&1; then
  note "build: ok in $(( $(date +%s) - t0 )) s"
else
  note "build: FAILED (build.log)"; tail -30 "$OUT/build.log"; exit 1
fi

t0=$(date +%s)
(cd $B && timeout 900 ctest -R '^(test_gpu_faults|test_gpu_quick)$' --output-on-failure) \
  >"$OUT/tests.log" 2>&1
rc=$?; [ $rc -ne 0 ] && fails=$((fails + 1))
note "tests: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$OUT/tests.log" | tail -1)"
$B/tests/gpu/test_gpu_faults >"$OUT/faults.log" 2>&1
note "test_gpu_faults: rc=$? $(tail -1 "$OUT/faults.log")"

# The out-of-memory part is left out under the sanitizers: their own device
# allocations move the limits it probes.
for tool in memcheck racecheck initcheck; do
  lvl=1; [ $tool = racecheck ] && lvl=2
  extra=""; [ $tool = memcheck ] && extra="--leak-check full"
  t0=$(date +%s)
  BSRMV_GPU_FAULTS_NO_OOM=1 timeout 600 compute-sanitizer --tool $tool $extra --error-exitcode 9 \
    --report-api-errors no $B/tests/gpu/test_gpu_faults >"$OUT/san_${tool}_faults.log" 2>&1
  r1=$?
  BSRMV_GPU_TEST_QUICK=$lvl timeout 600 compute-sanitizer --tool $tool --error-exitcode 9 \
    --report-api-errors no $B/tests/gpu/test_gpu >"$OUT/san_${tool}_gpu.log" 2>&1
  r2=$?
  BSRMV_GPU_TEST_QUICK=1 timeout 600 compute-sanitizer --tool $tool --error-exitcode 9 \
    --report-api-errors no $B/tests/gpu/test_gpu_balanced >"$OUT/san_${tool}_balanced.log" 2>&1
  r3=$?
  [ $((r1 + r2 + r3)) -ne 0 ] && fails=$((fails + 1))
  note "compute-sanitizer $tool: faults rc=$r1, test_gpu rc=$r2, balanced rc=$r3 in $(( $(date +%s) - t0 )) s: $(cat "$OUT"/san_${tool}_*.log | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | sort | uniq -c | tr '\n' ' ')"
done

echo; echo "==== summary"; printf '%s\n' "${summary[@]}"
exit $fails
