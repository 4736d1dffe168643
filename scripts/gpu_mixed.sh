#!/bin/bash
# Mixed precision on the GPU in one device call: build (CUDA, Release,
# sm_90), the GPU tests, SpMV of float values with double vectors against
# all-double and all-float on 27-point grids of ~400 MB (double) at bs 3
# and 6, and the refined solver against the all-double one on the
# reservoir and SPD generators.  Logs under $OUT; a summary at the end of
# stdout.  Run from the repository root.
#   GRID3, GRID6  grid edges at bs 3 and 6 (default 58 and 37: ~400 MB of
#                 double matrix each)
#   SOLVE_N       edge of the solver matrices (default 100)
#   SKIP_TESTS=1  skip the ctest run
#   BUILD         the build directory (default build-mixed)
OUT=${OUT:-/tmp/gpu_mixed_out}
mkdir -p "$OUT"
J=$(nproc)
B=${BUILD:-build-mixed}
GRID3=${GRID3:-58}
GRID6=${GRID6:-37}
SOLVE_N=${SOLVE_N:-100}
summary=()
note() { summary+=("$*"); echo "== $*"; }

{
  nvidia-smi -L; nvcc --version | tail -2; cmake --version | head -1
} >"$OUT/env.log" 2>&1

t0=$(date +%s)
if ! { cmake -S . -B $B -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build $B -j "$J"; } >"$OUT/build.log" 2>&1; then
  note "build: FAILED (build.log)"
  tail -30 "$OUT/build.log"
  exit 1
fi
note "build: ok in $(( $(date +%s) - t0 )) s"

if [ -z "$SKIP_TESTS" ]; then
  t0=$(date +%s)
  (cd $B && timeout 900 ctest -L gpu --output-on-failure) >"$OUT/tests.log" 2>&1
  rc=$?
  note "gpu tests: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$OUT/tests.log" | tail -1)"
  [ $rc -ne 0 ] && grep -E "Failed|FAIL|check failed" "$OUT/tests.log" | head -20
  (cd $B && timeout 300 ./tests/gpu/test_gpu_mixed) >"$OUT/test_gpu_mixed.log" 2>&1
  note "test_gpu_mixed: rc=$? $(grep -E '^refined' "$OUT/test_gpu_mixed.log" | tr '\n' ' ')"
fi

# SpMV: every bsrmv kernel that applies to each type (the plan's pick is
# the "auto:" record), the three types timed in the same run.
: >"$OUT/spmv.jsonl"
for spec in "3 $GRID3" "6 $GRID6"; do
  set -- $spec
  timeout 600 $B/bsrmv bench --grid "$2" --bs "$1" --type double,mixed,float --gpu --no-cpu \
    --no-stream --json --reps 50 >>"$OUT/spmv.jsonl" 2>>"$OUT/spmv.err"
  note "bench bs $1 grid $2: rc=$?"
done
python3 - "$OUT/spmv.jsonl" <<'PY' | tee "$OUT/spmv_summary.txt"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for bs in sorted({r["bs"] for r in recs if "bs" in r}):  # not the bandwidth record
    rows = [r for r in recs if r["bs"] == bs and r.get("backend") == "gpu"]
    pick, best = {}, {}
    for r in rows:
        t = r["type"]
        if r["kernel"].startswith("auto:"):
            pick[t] = r
        elif t not in best or r["time_ms"] < best[t]["time_ms"]:
            best[t] = r
    mb = rows[0]["bytes"] / 1e6 if rows else 0
    print(f"bs {bs} ({rows[0]['matrix'] if rows else '?'})")
    for t in ("double", "mixed", "float"):
        if t in pick:
            p, b = pick[t], best.get(t, pick[t])
            print(f"  {t:6s} pick {p['kernel']:40s} {p['time_ms']:.4f} ms {p['gbps']:.0f} GB/s"
                  f"  best {b['kernel']:32s} {b['time_ms']:.4f} ms  rel_err {p['rel_err']:.1e}")
    if "double" in pick and "mixed" in pick:
        d, m = pick["double"], pick["mixed"]
        bd, bm = best.get("double", d), best.get("mixed", m)
        print(f"  mixed vs double: picks {d['time_ms'] / m['time_ms']:.2f}x, "
              f"best of each {bd['time_ms'] / bm['time_ms']:.2f}x "
              f"(byte ratio {d['bytes'] / m['bytes']:.2f}; target {1.7 if bs == 3 else 1.8}x)")
PY

# Solvers: the refined solve (float copy) against the all-double one.
{
  for args in "--reservoir $SOLVE_N --nc 3" "--reservoir $SOLVE_N --nc 6" \
              "--grid $SOLVE_N --bs 3" "--grid $SOLVE_N --bs 6"; do
    for t in double mixed; do
      echo "## bsrmv solve --gpu $args --type $t"
      timeout 200 $B/bsrmv solve --gpu $args --type $t --repeat 3 --rtol 1e-10 --json --no-stream
    done
  done
} >"$OUT/solve.jsonl" 2>&1
python3 - "$OUT/solve.jsonl" <<'PY' | tee "$OUT/solve_summary.txt"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {}
for r in recs:
    by.setdefault((r["matrix"], r["bs"]), {})[r["type"]] = r
for (m, bs), d in by.items():
    for t in ("double", "mixed"):
        if t in d:
            r = d[t]
            print(f"{m:16s} bs {bs} {t:6s} {r['method']:8s} it {r['iterations']:4d} "
                  f"ref {r.get('refinements', 0)} conv {r['converged']} "
                  f"res {r['host_rel_residual']:.2e} {r['seconds'] * 1e3:9.2f} ms")
    if "double" in d and "mixed" in d:
        print(f"  mixed: {d['double']['seconds'] / d['mixed']['seconds']:.2f}x the double solve's speed")
PY

echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
