#!/bin/bash
# A/B comparison of build variants on the device, in one process per case
# and variant, variants interleaved case by case so that drift of the
# machine hits them alike.  Each variant is a build with extra CUDA flags.
#   VARIANTS="name:FLAGS name@DIR:FLAGS ..."  (FLAGS comma-separated, e.g.
#   -DA=1,-DB=2; empty = base; @DIR builds the sources in DIR instead of .,
#   e.g. a `git archive` of the last commit, to compare a change with the
#   code before it; name=BUILD:ARGS runs variant BUILD's build again with
#   more bench arguments, comma-separated, e.g. cold=new:--cold-launch)
#   CASES: one `bsrmv bench` argument string per line (default below)
#   PROFILE: cases (as CASES) to run once more under ncu with the first
#   variant's build: per-kernel time, DRAM/L2 bytes, occupancy, stall mix
#   (NCU_KERNELS: a regex of the kernel names to profile, e.g. k_balanced,
#   so that cuSPARSE's slow paths do not use up the 400 profiled launches;
#   NCU_EXTRA: more metrics, comma-separated, e.g. l1tex__throughput.avg.pct_of_peak_sustained_active)
#   PREBUILT=DIR: no builds, one variant "new" run from DIR/bsrmv (e.g. the
#   build-gpu of scripts/gpu_check.sh in the same device call), and the
#   VARIANTS of the form name=new:ARGS
# Records: $OUT/ab.jsonl (each line gets "variant"); table: scripts/ab_table.py.
OUT=${OUT:-/tmp/gpu_ab_out}
mkdir -p "$OUT"
J=$(nproc)
VARIANTS=${VARIANTS:-"base:"}
CASES=${CASES:-"--grid 71 --bs 2
--grid 55 --bs 3
--grid 46 --bs 4
--grid 35 --bs 6
--grid 29 --bs 8
--grid 18 --bs 16
--powerlaw 3200000,8,20000 --bs 1
--powerlaw 1100000,8,20000 --bs 2
--powerlaw 290000,8,20000 --bs 4
--powerlaw 75000,8,20000 --bs 8"}
nvidia-smi -L
names=()
t0=$(date +%s)
builds=""
for v in $VARIANTS; do case ${v%%:*} in *=*) ;; *) builds="$builds $v" ;; esac; done
if [ -n "$PREBUILT" ]; then
  keep="new:"
  for v in $VARIANTS; do case ${v%%:*} in *=new) keep="$keep $v" ;; esac; done
  VARIANTS=$keep; builds=""
  rm -rf build-ab-new && ln -s "$(realpath "$PREBUILT")" build-ab-new
fi
# the builds run side by side (a CUDA build is a few long nvcc jobs)
for v in $builds; do
  spec=${v%%:*}; flags=${v#*:}; flags=${flags//,/ }; name=${spec%%@*}; src=.
  [ "$spec" != "$name" ] && src=${spec#*@}
  ( cmake -S "$src" -B "build-ab-$name" -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_FLAGS="$flags" >"$OUT/build-$name.log" 2>&1 &&
    cmake --build "build-ab-$name" -j "$J" --target bsrmv_cli >>"$OUT/build-$name.log" 2>&1 ) &
done
wait
declare -A bin args
for v in $VARIANTS; do
  spec=${v%%:*}; name=${spec%%@*}; build=$name
  case $spec in *=*) name=${spec%%=*}; build=${spec#*=}; a=${v#*:}; args[$name]=${a//,/ } ;; esac
  if [ -x "build-ab-$build/bsrmv" ]; then
    names+=("$name"); bin[$name]=build-ab-$build/bsrmv
  else
    echo "== build $build: FAILED"; tail -20 "$OUT/build-$build.log"
  fi
done
echo "== builds: ${names[*]} ok in $(( $(date +%s) - t0 )) s"
: >"$OUT/ab.jsonl"
t0=$(date +%s)
while IFS= read -r c; do
  [ -z "$c" ] && continue
  for name in "${names[@]}"; do
    # shellcheck disable=SC2086
    timeout 120 "${bin[$name]}" bench $c ${args[$name]} --gpu --no-cpu --gpu-kernels "${KERNELS:-auto}" --json \
      --reps 50 2>>"$OUT/ab.log" | sed "s/^{/{\"variant\":\"$name\",/" >>"$OUT/ab.jsonl"
  done
done <<<"$CASES"
echo "== cases: $(( $(date +%s) - t0 )) s, $(wc -l <"$OUT/ab.jsonl") records"
python3 scripts/ab_table.py "$OUT/ab.jsonl"

if [ -n "$PROFILE" ] && command -v ncu >/dev/null && [ ${#names[@]} -gt 0 ]; then
  M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
  M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active
  for st in long_scoreboard lg_throttle short_scoreboard mio_throttle barrier; do
    M=$M,smsp__warp_issue_stalled_${st}_per_warp_active.pct
  done
  M=$M${NCU_EXTRA:+,$NCU_EXTRA}
  n=0
  while IFS= read -r c; do
    [ -z "$c" ] && continue
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 240 ncu --clock-control none --csv --print-units base --metrics "$M" -c 400 \
      ${NCU_KERNELS:+-k "regex:$NCU_KERNELS"} \
      "${bin[${names[0]}]}" bench $c --gpu --no-cpu --gpu-kernels "${KERNELS:-auto}" --reps 20 >"$OUT/ncu_$n.csv" 2>"$OUT/ncu_$n.log"
    echo "== ncu: $c (rc=$?)"
    python3 scripts/ncu_table.py "$OUT/ncu_$n.csv" 2>&1 | tee -a "$OUT/ab_profile.txt"
  done <<<"$PROFILE"
fi
