#!/usr/bin/env bash
# Checks the plumbing of `bench/suite.sh --gpu` on a machine without a GPU:
# the suite runs against a stand-in `bsrmv` that prints records in the
# CLI's --gpu JSON shape (and passes `info` to the real CLI), and
#   1. a block size whose process fails must be listed as skipped while the
#      rest of its list runs on in a new process (the failure injected once
#      before any record of the bs, once after its CPU records);
#   2. a spent time budget must skip the rest, listed with the reason;
#   3. bench/report.py must render the GPU section from that run;
#   4. the real set must run double and float in both block orders, and the
#      report give each (type, order) its own table and headline row;
#   5. the complex set must run complex double and complex float (records
#      tagged with the set) and the report render its table, a complex
#      float error above double's tolerance but below float's counted right;
#   6. bench/merge_runs.py must make one run of two parts that the report
#      reads as one.
#
#   bench/check_gpu_mode.sh [REAL_BSRMV]     (default build-bench/bsrmv)
# Exit status 0 when every check passes.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
REAL=$(realpath "${1:-build-bench/bsrmv}")
[ -x "$REAL" ] || { echo "check_gpu_mode: no $REAL (build it, or pass the CLI)" >&2; exit 2; }
T=$(mktemp -d /tmp/bench_gpu_check.XXXXXX)
[ -n "${KEEP:-}" ] && echo "check_gpu_mode: keeping $T" || trap 'rm -rf "$T"' EXIT

cat >"$T/bsrmv" <<EOF
#!/usr/bin/env bash
# Stand-in for a CUDA build of bsrmv (bench/check_gpu_mode.sh).
[ "\$1" = info ] && exec "$REAL" "\$@"
[ "\$1" = help ] && exec "$REAL" help
shift
bs_list= gpu=0 name=m type=double order=col
while [ \$# -gt 0 ]; do
    case \$1 in
        --bs) bs_list=\$2; shift ;;
        --type) type=\$2; shift ;;
        --order) order=\$2; shift ;;
        --gpu) gpu=1 ;;
        --mtx) name=\$(basename "\$2" .mtx.gz) ;;
        --grid) name=grid27_\$2 ;;
    esac
    shift
done
sleep "\${MOCK_SLEEP:-0}"
[ \$gpu = 1 ] && echo '{"backend":"stream","kernel":"gpu_read","device":"Mock GPU","threads":0,"bytes":2147483648,"gbps":3000,"time_ms":0.7}'
for bs in \${bs_list//,/ }; do
    if [ "\$bs" = "\${MOCK_FAIL_BS:-}" ] && [ "\${MOCK_FAIL_AT:-}" = start ]; then exit 1; fi
    rec() { echo "{\"matrix\":\"\$name\",\"bs\":\$bs,\"rows\":100,\"cols\":100,\"nnzb\":10,\"bytes\":\$((bs * 1000000)),\"backend\":\"\$1\",\"kernel\":\"\$2\",\"threads\":\$3,\"time_ms\":\$4,\"gbps\":\$5,\"gflops\":1,\"rel_err\":\${6:-1e-16},\"type\":\"\${7:-double}\",\"order\":\"\$order\"}"; }
    if [ \$type = z ] || [ \$type = c ]; then # complex float: float rounding
        t=complex-double p=Z err=1e-16
        [ \$type = c ] && t=complex-float p=C err=2e-7
        rec cusparse \${p}bsrmv_col 0 0.5 \$((bs * 2)) \$err \$t
        rec gpu by_block/g32 0 0.4 \$((bs * 3)) \$err \$t
        rec gpu auto:by_column/g32 0 0.4 \$((bs * 2 + 1)) \$err \$t
        continue
    fi
    rec cpu specialised 2 1.0 \$bs
    if [ "\$bs" = "\${MOCK_FAIL_BS:-}" ] && [ "\${MOCK_FAIL_AT:-}" = gpu ]; then exit 1; fi
    [ \$gpu = 1 ] || continue
    # float, row-major: the pick 1.5x cuSPARSE (double, column-major: 1.12x at bs 4)
    for t in \${type//,/ }; do
        g=\$((bs * 2 + 1)); [ \$t\$order = floatrow ] && g=\$((bs * 3))
        rec cusparse Dbsrmv_col 0 0.5 \$((bs * 2)) 1e-16 \$t
        rec gpu by_column/g8 0 0.4 \$g 1e-16 \$t
        rec gpu auto:by_column/g8 0 0.4 \$g 1e-16 \$t
    done
done
EOF
chmod +x "$T/bsrmv"

fail=0
check() { # DESCRIPTION PYTHON-EXPRESSION-ON-(recs, skipped)
    if python3 - "$3" <<EOF
import json, os, sys
d = sys.argv[1]
def rd(n):
    p = os.path.join(d, n)
    return [json.loads(l) for l in open(p)] if os.path.exists(p) else []
recs = rd("real.jsonl")
cplx = rd("complex.jsonl")
skipped = rd("skipped.jsonl")
fail_bs = int(os.environ.get("MOCK_FAIL_BS", "0"))
capped = {s["bs"] for s in skipped if "cap" in s["skipped"]}
measured = {r["bs"] for r in recs if r.get("kernel", "").startswith("auto:") and r["case"] == "bcsstk16:promote"}
failed = {s["bs"] for s in skipped if "failed" in s["skipped"]}
ok = $2
sys.exit(0 if ok else 1)
EOF
    then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
run_suite() { # OUT_DIR ARGS...
    local out=$1; shift
    bench/suite.sh --gpu --quick --no-peers --no-report --bsrmv "$T/bsrmv" --sets real --out "$out" "$@" \
        >"$out.log" 2>&1
}

QUICK_MATRICES=bcsstk16 MOCK_FAIL_BS=8 MOCK_FAIL_AT=start run_suite "$T/a"
MOCK_FAIL_BS=8 check "failure before a bs: bs 8 skipped, the rest of 2,4,8,16 (less the capped) measured" \
    'failed == {8} and measured == {2, 4, 8, 16} - {8} - capped' "$T/a"
QUICK_MATRICES=bcsstk16 MOCK_FAIL_BS=4 MOCK_FAIL_AT=gpu run_suite "$T/b"
MOCK_FAIL_BS=4 check "failure after the CPU records of a bs: bs 4 skipped, the rest measured" \
    'failed == {4} and measured == {2, 4, 8, 16} - {4} - capped' "$T/b"
QUICK_MATRICES=bcsstk16 MOCK_SLEEP=1.1 run_suite "$T/c" --budget 1
check "spent budget: nothing measured, every bs skipped with the reason" \
    'not measured and len([s for s in skipped if "budget" in s["skipped"]]) >= 3' "$T/c"
if python3 bench/report.py --gpu "$T/a" --out "$T/RESULTS.md" --readme "" >/dev/null &&
   grep -q "Mock GPU" "$T/RESULTS.md" && grep -q "^| bcsstk16:promote | 4 | .* | Dbsrmv_col | 1.12 |" "$T/RESULTS.md"; then
    echo "ok   report.py renders the GPU section"
else
    echo "FAIL report.py on the GPU run"; fail=1
fi
check "real set: double and float in both block orders" \
    '{(r["type"], r["order"]) for r in recs if r.get("kernel", "").startswith("auto:")} == {(t, o) for t in ("double", "float") for o in ("col", "row")}' "$T/a"
if grep -q "^### Real patterns: .*float, row-major blocks (GPU)" "$T/RESULTS.md" &&
   grep -q "^| GPU Mock GPU | real float row, vs best cuSPARSE | .* | 1.50 | 1.50 | 1.50 | 0 |" "$T/RESULTS.md"; then
    echo "ok   report.py gives float, row-major its own table and headline row"
else
    echo "FAIL report.py on the real set's types and orders"; fail=1
fi
run_suite "$T/d" --sets complex
check "complex set: complex double and complex float at the quick bs, tagged with the set" \
    '{(r["type"], r["bs"]) for r in cplx if r.get("kernel", "").startswith("auto:")} == {("complex-double", 3), ("complex-float", 3)} and all(r["set"] == "complex" for r in cplx)' "$T/d"
# bs 3: pick 7 GB/s, best candidate 9, Zbsrmv_col / Cbsrmv_col 6: 1.17
if python3 bench/report.py --gpu "$T/d" --out "$T/RESULTS_d.md" --readme "" >/dev/null &&
   grep -q "^### Complex values" "$T/RESULTS_d.md" &&
   grep -q '^| 3 | complex-double | 3.0 | 7 | .* | 9 `by_block/g32` | `Zbsrmv_col` | 6 | 1.17 |' "$T/RESULTS_d.md" &&
   grep -q '^| 3 | complex-float | 3.0 | 7 | .* | `Cbsrmv_col` | 6 | 1.17 |' "$T/RESULTS_d.md" &&
   ! grep -q "^Wrong results" "$T/RESULTS_d.md"; then
    echo "ok   report.py renders the complex table"
else
    echo "FAIL report.py on the complex run"; fail=1
fi
# 6. the parts of one run (here the real and the complex set) merged into one
#    directory: the report renders both sets from it, times summed
if python3 bench/merge_runs.py --out "$T/m" --concurrent --note "two parts" "$T/a" "$T/d" >/dev/null &&
   python3 bench/report.py --gpu "$T/m" --out "$T/RESULTS_m.md" --readme "" >/dev/null &&
   grep -q "^| GPU Mock GPU | real float row, vs best cuSPARSE | .* | 1.50 | 1.50 | 1.50 | 0 |" "$T/RESULTS_m.md" &&
   grep -q '^| 3 | complex-double | 3.0 | 7 | .* | 9 `by_block/g32` | `Zbsrmv_col` | 6 | 1.17 |' "$T/RESULTS_m.md" &&
   python3 -c "import json, sys; m, a, d = (json.load(open(sys.argv[i] + '/meta.json')) for i in (1, 2, 3)); \
sys.exit(0 if m['elapsed_s'] == a['elapsed_s'] + d['elapsed_s'] and 'other_load' not in m and \
m['notes'][-1] == 'two parts' else 1)" "$T/m" "$T/a" "$T/d"; then
    echo "ok   merge_runs.py: one run from two parts"
else
    echo "FAIL merge_runs.py"; fail=1
fi
[ "$fail" = 0 ] || for f in "$T"/*.log; do echo "== $f"; tail -n 5 "$f"; done
exit $fail
