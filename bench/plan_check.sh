#!/bin/bash
# The GPU plan's choice against cuSPARSE on the real matrices (the dispatcher's
# pick only): each matrix promoted to PROMOTE_BS and split at its natural bs,
# both types, the orders of ORDERS, in solver mode (--gpu-traffic cg) and,
# for the orders of B2B_ORDERS, back to back.  JSON lines to
# $OUT/plan_check.jsonl; bench/plan_table.py --check FILE... sums them up.  TUNE=1:
# the pick is the measured choice (--gpu-tune), to $OUT/plan_tune.jsonl.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:=bench/results/plan}" "${MATRICES:=../shared/matrices}" "${ORDERS:=col row}" "${B2B_ORDERS=col}"
: "${PROMOTE_BS:=2,3,4,6,8,12,16}" "${BUILD:=build}" "${BUDGET_S:=400}"
mkdir -p "$OUT"
name=plan_check${TUNE:+_tune}
BSRMV=$BUILD/bsrmv
start=$SECONDS
natural() { "$BSRMV" info "$1" 2>/dev/null | awk '/aligned split/ {on = 1; next}
    on && $1 ~ /^[0-9]+$/ && $1 >= 2 && $3 <= 1.25 {b = $1} END {print b ? b : 2}'; }
run() { # order traffic
    for f in "$MATRICES"/*.mtx.gz; do
        [ $((SECONDS - start)) -gt "$BUDGET_S" ] && { echo "plan_check: budget reached at $f" >&2; return; }
        for how in promote split; do
            bs=$PROMOTE_BS
            [ $how = split ] && bs=$(natural "$f")
            "$BSRMV" bench --mtx "$f" --$how --bs "$bs" --type double,float --order "$1" --gpu --no-cpu \
                --gpu-kernels auto --gpu-traffic "$2" ${TUNE:+--gpu-tune} --json >>"$OUT/$name.jsonl" 2>>"$OUT/$name.log" ||
                echo "plan_check: $f $how $1 failed" >&2
        done
    done
}
for o in $ORDERS; do run "$o" cg; done
for o in $B2B_ORDERS; do run "$o" 0; done
echo "plan_check: done in $((SECONDS - start)) s" >&2
