#!/bin/bash
# A longer fuzzing run than CI's: each target for SECONDS (default 900),
# PARALLEL targets at a time (default 1), one libFuzzer process each at
# the lowest priority.  Corpora grow in WORK/<target>/corpus (seeded from
# fuzz/corpus), crashes land in WORK/<target>/; a summary line per target
# (executions, seconds, crashes) goes to WORK/summary.txt.
# Usage: scripts/fuzz_campaign.sh [SECONDS] [PARALLEL] [WORK]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-900}
PARALLEL=${2:-1}
WORK=${3:-build-fuzz/campaign}
TARGETS=${FUZZ_TARGETS:-"mmio parse bsr convert plan storage solve"}
command -v clang >/dev/null || { echo "fuzz_campaign: clang not found" >&2; exit 1; }
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBSRMV_CUDA=OFF \
  -DBSRMV_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target $(printf 'fuzz_%s ' $TARGETS) >/dev/null
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

run_one() {
  local t=$1 dir="$WORK/$1"
  mkdir -p "$dir/corpus"
  cp -n fuzz/corpus/"$t"/* "$dir/corpus/" 2>/dev/null || true
  local start=$(date +%s) rc=0
  (cd "$dir" && OMP_NUM_THREADS=2 nice -n 19 "$BIN"/fuzz_"$t" \
     -max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=30 -rss_limit_mb=4096 \
     -artifact_prefix="$dir/" corpus > "$dir/log.txt" 2>&1) || rc=$?
  local execs=$(grep -o 'number_of_executed_units: [0-9]*' "$dir/log.txt" | tail -1 | awk '{print $2}')
  local crashes=$(ls "$dir" | grep -c -E '^(crash|leak|timeout|oom)-' || true)
  printf '%-8s %10s execs %6d s %3d crashes rc=%d corpus=%d\n' "$t" "${execs:-?}" \
    $(( $(date +%s) - start )) "$crashes" "$rc" "$(ls "$dir/corpus" | wc -l)" >> "$WORK/summary.txt"
}
BIN=$(pwd)/build-fuzz/fuzz
: > "$WORK/summary.txt"
running=0
for t in $TARGETS; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$PARALLEL" ]; then wait -n; running=$((running - 1)); fi
done
wait
cat "$WORK/summary.txt"
