#!/usr/bin/env bash
# CPU peer benchmark: bsrmv against PETSc (SeqBAIJ, MPIBAIJ), librsb and
# scipy on the 27-point grids of `bsrmv bench --example`, in the same run.
#
#   bench/cpu_peers.sh [--bs LIST] [--threads LIST] [--reps R] [--out FILE]
#                      [--no-install]
#
# Defaults: --bs 1,2,3,4,6,8,16 --threads 1,2 --reps 20,
# --out bench/results/cpu_peers_<date>.txt (summary tables + every JSON line).
#
# Steps
#  1. installs what is missing when run as root: petsc-dev, librsb-dev
#     (apt-get, after apt-cache policy shows a candidate), scipy (pip);
#     a peer that cannot be had is skipped with the reason in the results.
#  2. builds bsrmv (build-peers: CPU only, Release) and bench/peers/ against
#     it (the library never links any peer).
#  3. per bs, with the grid size `bsrmv bench --example` picks (asked from
#     the CLI itself), interleaved so that drift hits every library:
#       peers_cpu   bsrmv (library), PETSc SeqBAIJ, librsb: one process,
#                   3 rounds, backend order rotating per round
#       bsrmv CLI   `bsrmv bench --grid N --bs B --threads T --kernels auto
#                   --json --no-stream` (round 1)
#       petsc_mpi   mpirun -np T (T > 1), MPIBAIJ        (round 1)
#       scipy       bsr_matrix @ x, 1 thread, 2 rounds
#       bsrmv CLI   (round 2)
#       petsc_mpi   (round 2)
#  Every process runs with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (malloc
#  advises transparent huge pages, as bsrmv does for its own arrays), one
#  BLAS thread, no thread pinning of its own (mpirun binds ranks to cores,
#  its default for 2 ranks).
#  4. each measurement: 3 warm-up calls (the first checked: peers against
#     bsrmv's y, bsrmv against a long-double reference), median of --reps
#     timed calls, one JSON line; at the end the tables of
#     bench/peers/table.py.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

BS_LIST=1,2,3,4,6,8,16
THREADS=1,2
REPS=20
OUT=bench/results/cpu_peers_$(date +%Y-%m-%d).txt
INSTALL=1
ARGS="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --bs) BS_LIST=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --no-install) INSTALL=0; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 0 ;;
        *) echo "cpu_peers: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

LOG_TAG=cpu_peers
. "$ROOT/bench/lib.sh"
START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
unset OMP_PROC_BIND OMP_PLACES

# ---- 1. dependencies -------------------------------------------------------
HAVE_PETSC=0 HAVE_RSB=0 HAVE_SCIPY=0 HAVE_MPI=0
apt_get petsc-dev PETSc && HAVE_PETSC=1
apt_get librsb-dev librsb && HAVE_RSB=1

PY=${PYTHON:-python3}
pip_get scipy.sparse scipy && HAVE_SCIPY=1

MPIRUN=()
if [ "$HAVE_PETSC" = 1 ]; then
    if command -v mpirun >/dev/null; then
        MPIRUN=(mpirun --bind-to core --map-by core -x GLIBC_TUNABLES -x OMP_NUM_THREADS=1
                -x OPENBLAS_NUM_THREADS=1)
        [ "$IS_ROOT" = 1 ] && MPIRUN+=(--allow-run-as-root)
        HAVE_MPI=1
    else
        note "petsc-mpibaij: no mpirun (openmpi-bin), PETSc reported with 1 thread only"
    fi
else
    note "petsc-baij, petsc-mpibaij: PETSc not available"
fi
[ "$HAVE_RSB" = 1 ] || note "librsb: not available"

# ---- 2. build --------------------------------------------------------------
log "building bsrmv (build-peers) and bench/peers"
cmake -S . -B build-peers -DBSRMV_CUDA=OFF -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    >/tmp/cpu_peers_cmake.log 2>&1 &&
    cmake --build build-peers -j "$(nproc)" --target bsrmv bsrmv_cli >>/tmp/cpu_peers_cmake.log 2>&1 ||
    { log "bsrmv build failed, see /tmp/cpu_peers_cmake.log"; exit 1; }
make -C bench/peers BSRMV_BUILD="$ROOT/build-peers" >/tmp/cpu_peers_make.log 2>&1 ||
    { log "peer build failed, see /tmp/cpu_peers_make.log"; exit 1; }
BSRMV=build-peers/bsrmv
PEERS=build-peers/peers/peers_cpu
PMPI=build-peers/peers/petsc_mpi

if [ "$HAVE_MPI" = 1 ] &&
   ! "${MPIRUN[@]}" -np 2 "$PMPI" --grid 4 --bs 2 --reps 2 --rounds 1 >/dev/null 2>/tmp/cpu_peers_mpi.log; then
    note "petsc-mpibaij: mpirun -np 2 failed (see /tmp/cpu_peers_mpi.log), PETSc reported with 1 thread only"
    HAVE_MPI=0
fi

ONLY=bsrmv
[ "$HAVE_PETSC" = 1 ] && ONLY+=,petsc-baij,petsc-aij
[ "$HAVE_RSB" = 1 ] && ONLY+=,librsb

# ---- 3. grid sizes: ask the CLI what --example uses -------------------------
log "grid sizes of bsrmv bench --example for bs $BS_LIST"
declare -A GRID
while IFS=' ' read -r bs n; do GRID[$bs]=$n; done < <(
    "$BSRMV" bench --example --bs "$BS_LIST" --threads 1 --reps 1 --kernels auto --no-stream \
        --json | "$PY" -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if "matrix" in r:
        print(r["bs"], r["matrix"].split("_")[1].split("x")[0])')
for bs in ${BS_LIST//,/ }; do
    [ -n "${GRID[$bs]:-}" ] || { log "no --example grid size for bs $bs"; exit 1; }
done

# ---- 4. measurements --------------------------------------------------------
JSONL=$(mktemp /tmp/cpu_peers.XXXXXX.jsonl)
SHM=/dev/shm
[ -d "$SHM" ] && [ -w "$SHM" ] || SHM=/tmp
DUMP=$(mktemp -d "$SHM/bsrmv_peers.XXXXXX")
trap 'rm -rf "$DUMP"' EXIT

# set_round N: rewrites the round of JSON lines (one-round processes).
set_round() { sed "s/\"round\":[0-9]*/\"round\":$1/"; }
emit() { tee -a "$JSONL"; }

run_cli() { # bs n round
    "$BSRMV" bench --grid "$2" --bs "$1" --threads "$THREADS" --kernels auto --json \
        --no-stream --reps "$REPS" |
        sed "s/\"backend\":\"cpu\"/\"backend\":\"bsrmv\"/; s/}\$/,\"round\":$3,\"via\":\"cli\",\"ref\":\"long-double\"}/" |
        emit || log "bs $1: bsrmv bench failed"
}
run_mpi() { # bs n round
    [ "$HAVE_MPI" = 1 ] || return 0
    local t
    for t in ${THREADS//,/ }; do
        [ "$t" -gt 1 ] || continue
        "${MPIRUN[@]}" -np "$t" "$PMPI" --grid "$2" --bs "$1" --reps "$REPS" --rounds 1 |
            set_round "$3" | emit || log "bs $1: petsc_mpi -np $t failed"
    done
}

for bs in ${BS_LIST//,/ }; do
    n=${GRID[$bs]}
    log "bs $bs: grid ${n}^3"
    dump_arg=()
    [ "$HAVE_SCIPY" = 1 ] && dump_arg=(--dump "$DUMP")
    "$PEERS" --grid "$n" --bs "$bs" --threads "$THREADS" --reps "$REPS" --rounds 3 \
        --only "$ONLY" "${dump_arg[@]}" | emit || log "bs $bs: peers_cpu failed"
    run_cli "$bs" "$n" 1
    run_mpi "$bs" "$n" 1
    if [ "$HAVE_SCIPY" = 1 ]; then
        OMP_NUM_THREADS=1 "$PY" bench/peers/scipy_bsr.py "$DUMP" --reps "$REPS" --rounds 2 |
            emit || log "bs $bs: scipy failed"
        rm -f "$DUMP"/*
    fi
    run_cli "$bs" "$n" 2
    run_mpi "$bs" "$n" 2
done

# ---- 5. report --------------------------------------------------------------
END=$(date +%s)
mkdir -p "$(dirname "$OUT")"
{
    echo "# bsrmv CPU peer benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $((END - START)) s"
    echo "# command: bench/cpu_peers.sh $ARGS"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
         "L3 $(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo '?')," \
         "THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
    echo "# load average: start $LOAD_START, end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# env: GLIBC_TUNABLES=$GLIBC_TUNABLES OPENBLAS_NUM_THREADS=1; reps $REPS, bs $BS_LIST, threads $THREADS"
    echo "# bsrmv: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?') (build-peers, -DBSRMV_CUDA=OFF Release)"
    echo "# peers: petsc $([ $HAVE_PETSC = 1 ] && pkg-config --modversion PETSc || echo missing)," \
         "mpirun $([ $HAVE_MPI = 1 ] && mpirun --version 2>/dev/null | head -1 || echo missing)," \
         "librsb $([ $HAVE_RSB = 1 ] && pkg-config --modversion librsb || echo missing)," \
         "scipy $([ $HAVE_SCIPY = 1 ] && "$PY" -c 'import scipy, numpy; print(scipy.__version__, "numpy", numpy.__version__)' || echo missing)"
    for n in "${NOTES[@]}"; do echo "# note: $n"; done
    echo
    "$PY" bench/peers/table.py "$JSONL"
    echo
    echo "# JSON lines, in run order"
    cat "$JSONL"
} >"$OUT"
rc=0
"$PY" bench/peers/table.py "$JSONL" >/dev/null || rc=1
rm -f "$JSONL"
echo
sed -n '1,/^# JSON lines/p' "$OUT" | sed '$d'
log "results in $OUT ($((END - START)) s)"
exit $rc
