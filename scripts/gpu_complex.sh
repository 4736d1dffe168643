#!/bin/bash
# Complex values on one GPU machine, in one call: build (CUDA, Release,
# sm_90), the complex GPU tests, compute-sanitizer memcheck on the test's
# quick mode, then every complex kernel candidate against the cuSPARSE
# complex paths (cusparseZbsrmv/Cbsrmv both directions, cusparseSpMV BSR
# and CSR) on 27-point grids of ~400 MB: complex double at bs 2-8, complex
# float at bs 3 and 6.  Logs and JSON lines under $OUT, a summary at the
# end of stdout (GB/s, the fraction of the read bandwidth, the pick and
# the best candidate against the best cuSPARSE path).  The build directory
# is reused, so a second call goes on where the first stopped.
#   BUILD         the build directory (default build-gpu)
#   SKIP_TESTS=1, SKIP_SANITIZER=1, SKIP_BENCH=1  skip a part
#   Z_BS, C_BS    block sizes of the complex double / float runs
#   BUDGET        seconds after which no further bench case starts (default 380; a case runs at most 120 s)
OUT=${OUT:-/tmp/gpu_complex_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build-gpu}
Z_BS=${Z_BS:-2 3 4 5 6 7 8}
C_BS=${C_BS:-3 6}
BUDGET=${BUDGET:-380}
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
start=$(date +%s)
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

if [ -z "$SKIP_TESTS" ]; then
  t0=$(date +%s)
  (cd "$B" && timeout 300 ctest -L gpu -R complex --output-on-failure) >"$OUT/tests.log" 2>&1
  note "tests: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$OUT/tests.log")"
  grep -ah 'test_gpu_complex: ok' "$OUT/tests.log" "$B/Testing/Temporary/LastTest.log" 2>/dev/null |
    sort -u | sed 's/^/   /'
fi

if [ -z "$SKIP_SANITIZER" ]; then
  t0=$(date +%s)
  if command -v compute-sanitizer >/dev/null; then
    BSRMV_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
      "$B/tests/gpu/test_gpu_complex" >"$OUT/memcheck.log" 2>&1
    note "memcheck (quick): rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log")"
  else
    note "memcheck: no compute-sanitizer"
  fi
fi

# Grid edge N for ~400 MB of values: 27 N^3 blocks of bs^2 values of vb bytes.
edge() { python3 -c "print(round((400e6 / (27 * $1 * $1 * $2)) ** (1 / 3)))"; }

case_run() { # type bs
  local t=$1 bs=$2 vb=16
  [ "$t" = c ] && vb=8
  local n; n=$(edge "$bs" "$vb")
  local tag="grid${n}_${t}_bs${bs}"
  if (( $(date +%s) - start > BUDGET )); then
    note "$tag: skipped (past the ${BUDGET} s budget)"
    return
  fi
  t0=$(date +%s)
  timeout 120 "$B/bsrmv" bench --grid "$n" --bs "$bs" --type "$t" --gpu --no-cpu --gpu-kernels all \
    --json >"$OUT/$tag.jsonl" 2>"$OUT/$tag.log" || note "$tag: FAILED rc=$? ($tag.log)"
  note "$tag: $(( $(date +%s) - t0 )) s"
}

if [ -z "$SKIP_BENCH" ]; then
  for bs in $Z_BS; do case_run z "$bs"; done
  for bs in $C_BS; do case_run c "$bs"; done
fi

# Per case: the pick, the best bsrmv candidate, the best cuSPARSE path, GB/s
# and the fraction of the read bandwidth (stream_frac), and the ratios.
python3 - "$OUT" <<'EOF' | tee "$OUT/summary.txt"
import glob, json, os, sys
cases = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "grid*.jsonl"))):
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("backend") not in ("gpu", "cusparse"):
            continue
        cases.setdefault((r["type"], r["bs"], r["matrix"]), []).append(r)
print("%-15s %3s %-10s | %-36s %7s %5s | %-36s %7s %5s | %-18s %7s | %6s %6s" % (
    "type", "bs", "matrix", "pick", "GB/s", "frac", "best bsrmv", "GB/s", "frac",
    "best cusparse", "GB/s", "pick/c", "best/c"))
for (t, bs, m), rs in sorted(cases.items(), key=lambda k: (k[0][0], k[0][1])):
    pick = [r for r in rs if r["backend"] == "gpu" and r["kernel"].startswith("auto:")]
    cand = [r for r in rs if r["backend"] == "gpu" and not r["kernel"].startswith("auto:")]
    cs = [r for r in rs if r["backend"] == "cusparse"]
    best = max(cand, key=lambda r: r["gbps"]) if cand else None
    bcs = max(cs, key=lambda r: r["gbps"]) if cs else None
    p = pick[0] if pick else None
    f = lambda r, k: ("%7.1f" % r[k]) if r and k in r else "      -"
    fr = lambda r: ("%5.2f" % r["stream_frac"]) if r and "stream_frac" in r else "    -"
    ratio = lambda a, b: ("%6.2f" % (a["gbps"] / b["gbps"])) if a and b else "     -"
    print("%-15s %3d %-10s | %-36s %s %s | %-36s %s %s | %-18s %s | %s %s" % (
        t, bs, m[:10], p["kernel"][:36] if p else "-", f(p, "gbps"), fr(p),
        best["kernel"][:36] if best else "-", f(best, "gbps"), fr(best),
        bcs["kernel"][:18] if bcs else "-", f(bcs, "gbps"), ratio(p, bcs), ratio(best, bcs)))
EOF
note "total: $(( $(date +%s) - start )) s"
printf '%s\n' "${summary[@]}"
