#!/bin/bash
# Data for the GPU plan's table (src/plan_table.c): every bsrmv GPU kernel
# and every cuSPARSE path on each real matrix, promoted to PROMOTE_BS and
# split at its natural bs, both value types, the block orders of ORDERS,
# timed as a solver calls SpMV (--gpu-traffic cg).  One JSON line per
# measurement to $OUT/plan_data.jsonl; bench/plan_table.py learns the table.
#   MATRICES=DIR (default ../shared/matrices)  ORDERS="col row"
#   PROMOTE_BS=2,3,4,6,8,12,16  REPS=20  BUDGET_S=480 (stops starting
#   matrices after that many seconds)  BUILD=build  TRAFFIC=cg (or cg,0:
#   both modes)  KERNELS=all (or bench --gpu-kernels prefixes: a new
#   kernel measured alone, its records added to the data)
#   GENERATED="N,MEAN,MAX ..." (power-law matrices, bench --powerlaw, at the
#   block sizes GEN_BS, after the files: the data of the table's short-row
#   rows)  HOWS="promote split" (or one of them)
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:=bench/results/plan}" "${MATRICES:=../shared/matrices}" "${ORDERS:=col row}"
: "${PROMOTE_BS:=2,3,4,6,8,12,16}" "${REPS:=20}" "${BUDGET_S:=480}" "${BUILD:=build}" "${TRAFFIC:=cg}"
: "${GENERATED:=}" "${GEN_BS:=2,3}" "${HOWS:=promote split}" "${KERNELS:=all}"
mkdir -p "$OUT"
BSRMV=$BUILD/bsrmv
start=$SECONDS
# natural bs: the largest whose aligned split adds at most 25% zeros
natural() { "$BSRMV" info "$1" 2>/dev/null | awk '/aligned split/ {on = 1; next}
    on && $1 ~ /^[0-9]+$/ && $1 >= 2 && $3 <= 1.25 {b = $1} END {print b ? b : 2}'; }
for order in $ORDERS; do
    for f in "$MATRICES"/*.mtx.gz; do
        [ -e "$f" ] || continue
        if [ $((SECONDS - start)) -gt "$BUDGET_S" ]; then
            echo "plan_data: budget reached before $f ($order)" >&2
            break 2
        fi
        for how in $HOWS; do
            bs=$PROMOTE_BS
            [ $how = split ] && bs=$(natural "$f")
            "$BSRMV" bench --mtx "$f" --$how --bs "$bs" --type double,float --order "$order" --gpu --no-cpu \
                --gpu-kernels "$KERNELS" --gpu-traffic "$TRAFFIC" --gpu-reps "$REPS" --json \
                >>"$OUT/plan_data.jsonl" 2>>"$OUT/plan_data.log" ||
                echo "plan_data: $f $how $order failed (rc $?)" >&2
        done
        echo "plan_data: $order $(basename "$f") done at $((SECONDS - start)) s" >&2
    done
done
for order in $ORDERS; do
    for g in $GENERATED; do
        if [ $((SECONDS - start)) -gt "$BUDGET_S" ]; then
            echo "plan_data: budget reached before --powerlaw $g ($order)" >&2
            break 2
        fi
        "$BSRMV" bench --powerlaw "$g" --bs "$GEN_BS" --type double,float --order "$order" --gpu --no-cpu \
            --gpu-kernels "$KERNELS" --gpu-traffic "$TRAFFIC" --gpu-reps "$REPS" --json \
            >>"$OUT/plan_data.jsonl" 2>>"$OUT/plan_data.log" ||
            echo "plan_data: --powerlaw $g $order failed (rc $?)" >&2
        echo "plan_data: $order --powerlaw $g done at $((SECONDS - start)) s" >&2
    done
done
