#!/usr/bin/env bash
# Checks `bench/suite.sh --gpu-mpi` and the report's several-GPU section on a
# machine without GPUs:
#   1. --dry-run prints the one scripts/gpu_mpi.sh command, with the phases
#      and the strong grids passed through, and writes nothing; a bad phase
#      or grid list is refused (exit status 2);
#   2. a run against a stand-in script (GPU_MPI) that writes records in
#      bsrmv_mpi_bench's shape: meta.json in mode gpu-mpi, a failing step
#      counted;
#   3. bench/report.py renders the section from that run (speedup,
#      efficiency and the weak and solve tables computed from the records)
#      and from the committed data in bench/results/.
#
#   bench/check_gpu_mpi_mode.sh
# Exit status 0 when every check passes, 77 (skipped) without python3.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
command -v python3 >/dev/null || { echo "check_gpu_mpi_mode: no python3: skipped"; exit 77; }
T=$(mktemp -d /tmp/bench_gpu_mpi_check.XXXXXX)
[ -n "${KEEP:-}" ] && echo "check_gpu_mpi_mode: keeping $T" || trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# 1. dry run
out=$(bench/suite.sh --gpu-mpi --dry-run --strong-grids 308,196 --phases strong,weak --out "$T/dry" 2>/dev/null)
if grep -qx "+ env STRONG3=308 STRONG6=196 OUT=$T/dry scripts/gpu_mpi.sh strong weak" <<<"$out" &&
   [ ! -e "$T/dry" ]; then
    ok "dry run: the gpu_mpi.sh command with phases and strong grids, nothing written"
else
    bad "dry run printed: $out"
fi

bench/suite.sh --gpu-mpi --dry-run --phases strong,bogus >/dev/null 2>&1; rc1=$?
bench/suite.sh --gpu-mpi --dry-run --strong-grids 308x >/dev/null 2>&1; rc2=$?
if [ "$rc1" = 2 ] && [ "$rc2" = 2 ]; then
    ok "bad input: an unknown phase, a malformed --strong-grids: exit status 2"
else
    bad "bad input: exit status $rc1, $rc2 (want 2, 2)"
fi

# 2. a run with a stand-in script: 1, 2, 4 ranks, times chosen so that the
# speedups are 1.6 and 3.2, the weak efficiency 0.8 and the solve speedup 2.
cat >"$T/gpu_mpi.sh" <<'EOS'
#!/usr/bin/env bash
mkdir -p "$OUT"
rec() { # MATRIX BS RANKS MS
    echo "{\"bench\":\"mpi_spmv\",\"matrix\":\"$1\",\"device\":\"Mock GPU\",\"ranks\":$3,\"bs\":$2,\"mb\":1000,\"nnzb\":27000,\"halo_bytes\":$(( ($3 - 1) * 1000000 )),\"ms\":$4,\"gbps\":100,\"products_ms\":$4,\"exchange_ms\":0.01,\"hidden_overlap\":1,\"ratio_to_products\":1.0}"
}
{
    rec grid27_10x10x10 3 1 8.0; rec grid27_10x10x10 3 2 5.0; rec grid27_10x10x10 3 4 2.5
    rec grid27_10x10x20 3 2 10.0; rec grid27_10x10x40 3 4 10.0
    for p in 1 2 4; do
        echo "{\"bench\":\"mpi_solve\",\"backend\":\"gpu\",\"matrix\":\"reservoir_8x8x8\",\"method\":\"bicgstab\",\"bs\":4,\"ranks\":$p,\"iterations\":9,\"ms_per_iteration\":$(awk -v p=$p 'BEGIN{print p == 1 ? 2 : p == 2 ? 1.5 : 1}'),\"gbps\":50,\"read_gbps\":60,\"bound_ms_per_iteration\":0.5,\"efficiency\":0.5}"
    done
} >"$OUT/bench.jsonl"
printf '|   0  Mock GPU     On  |\n|   1  Mock GPU     On  |\n' >"$OUT/machine.txt"
printf 'phases: %s\nstrong_bs3_np1               rc=0      1s\nweak_bs6_np2                 rc=124   300s\n' "$*" >"$OUT/summary.txt"
exit 1
EOS
chmod +x "$T/gpu_mpi.sh"
# (bench.jsonl present: the suite leaves build-gpu-mpi/'s records alone)
mkdir -p "$T/run" && : >"$T/run/bench.jsonl"
GPU_MPI=$T/gpu_mpi.sh bench/suite.sh --gpu-mpi --label mock-mpi --out "$T/run" >"$T/run.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && python3 - "$T/run/meta.json" <<'EOP'
import json, sys
m = json.load(open(sys.argv[1]))
sys.exit(0 if (m["mode"], m["label"], m["phases"], m["failed_commands"]) ==
         ("gpu-mpi", "mock-mpi", "build strong weak solve", 1) and "commit" in m else 1)
EOP
then
    ok "run: meta.json (mode gpu-mpi, label, phases, the failed step counted), exit status 1"
else
    bad "run: rc $rc, meta.json: $(cat "$T/run/meta.json" 2>/dev/null)"
fi

# 3. the report from that run and from the committed data
if python3 bench/report.py --gpu-mpi "$T/run" --out "$T/R.md" --readme '' >/dev/null &&
   grep -q "^## Several GPUs: distributed SpMV and BiCGSTAB" "$T/R.md" &&
   grep -q "^- machine: 2 x Mock GPU" "$T/R.md" &&
   grep -q "^| 2 | 5.000 | 100 | 1.600 | 0.800 | 1.000 | 0.010 | 1.000 |" "$T/R.md" &&
   grep -q "^| 4 | 2.500 | 100 | 3.200 | 0.800 | 3.000 | 0.010 | 1.000 |" "$T/R.md" &&
   grep -q "^| 3 | 4 | grid27_10x10x40 | 10.000 | 100 | 3.000 | 0.800 |" "$T/R.md" &&
   grep -q "^| reservoir_8x8x8 | bicgstab | 4 | 4 | 9 | 1.000 | 2.000 | 50 | 0.500 | 0.500 |" "$T/R.md"; then
    ok "report.py: strong, weak and solve tables computed from the stand-in records"
else
    bad "report.py on the stand-in run"; sed -n '/^## Several GPUs/,$p' "$T/R.md" 2>/dev/null | head -40
fi
DATA=$(ls -d bench/results/gpu-mpi-* 2>/dev/null | tail -1)
if [ -z "$DATA" ]; then
    echo "skip report.py on committed data: no bench/results/gpu-mpi-* here"
elif python3 bench/report.py --gpu-mpi "$DATA" --out "$T/R2.md" --readme '' >/dev/null &&
     [ "$(grep -c '^| 4 | ' "$T/R2.md")" -ge 3 ] &&
     grep -q "^### Distributed BiCGSTAB on the GPUs" "$T/R2.md"; then
    ok "report.py renders $DATA"
else
    bad "report.py on $DATA"
fi
[ "$fail" = 0 ] || tail -n 5 "$T/run.log"
exit $fail
