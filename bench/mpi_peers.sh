#!/usr/bin/env bash
# Distributed CPU SpMV against PETSc: bsrmv_mpi_bench (bsrmv_dist_spmv)
# and PETSc MPIBAIJ MatMult (bench/peers/petsc_mpi) on the same 27-point
# grid, the same number of ranks of one thread each, interleaved rounds
# (the order alternates), the same page policy.
#
#   bench/mpi_peers.sh [--ranks P] [--rounds K] [--reps R] [--out FILE]
#                      [--grids BS:N,BS:N...]
#
# Defaults: 2 ranks, 3 rounds, 20 reps, grids 3:58,6:37 (about 400 MB of
# matrix each), results to bench/results/mpi_peers_<date>.txt (every JSON
# line, then the medians over the rounds and bsrmv's speedup).  Needs
# PETSc (petsc-dev; bench/cpu_peers.sh installs it) and OpenMPI.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
RANKS=2
ROUNDS=3
REPS=20
GRIDS=3:58,6:37
OUT=bench/results/mpi_peers_$(date +%Y-%m-%d).txt
while [ $# -gt 0 ]; do
    case "$1" in
        --ranks) RANKS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        --grids) GRIDS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 0 ;;
        *) echo "mpi_peers: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
pkg-config --exists PETSc || { echo "mpi_peers: PETSc not found (apt-get install petsc-dev)" >&2; exit 1; }

BUILD=$ROOT/build-mpi-peers
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBSRMV_CUDA=OFF -DBSRMV_MPI=ON > /dev/null &&
    cmake --build "$BUILD" -j "$(nproc --all)" --target bsrmv bsrmv_mpi_bench > /dev/null &&
    make -s -C bench/peers BSRMV_BUILD="$BUILD" OUT="$BUILD/peers" "$BUILD/peers/petsc_mpi" ||
    { echo "mpi_peers: build failed" >&2; exit 1; }

CORES=$(nproc --all)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1 OMP_NUM_THREADS=1
MPIRUN=(mpirun -np "$RANKS" --bind-to core --map-by core -x GLIBC_TUNABLES -x OMP_NUM_THREADS)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
mkdir -p "$(dirname "$OUT")"
LINES=$(mktemp)
run_bsrmv() { "${MPIRUN[@]}" "$BUILD/bsrmv_mpi_bench" --grid "$2" --bs "$1" --reps "$REPS" | grep '^{'; }
run_petsc() { "${MPIRUN[@]}" "$BUILD/peers/petsc_mpi" --grid "$2" --bs "$1" --reps "$REPS" --rounds 1 | grep '^{'; }
for round in $(seq "$ROUNDS"); do
    for g in ${GRIDS//,/ }; do
        bs=${g%%:*} n=${g##*:}
        if [ $((round % 2)) = 1 ]; then
            run_petsc "$bs" "$n" >> "$LINES"; run_bsrmv "$bs" "$n" >> "$LINES"
        else
            run_bsrmv "$bs" "$n" >> "$LINES"; run_petsc "$bs" "$n" >> "$LINES"
        fi
    done
done
{
    echo "# bench/mpi_peers.sh $RANKS ranks, $ROUNDS rounds of $REPS reps; commit" \
         "$(git rev-parse --short HEAD 2>/dev/null || echo unknown); $CORES cores;" \
         "load average before: $LOAD0, after: $(cut -d' ' -f1-3 /proc/loadavg); $(uname -r)"
    cat "$LINES"
    python3 - "$LINES" << 'EOF'
import json, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in recs:
    who = 'bsrmv' if r.get('bench') == 'mpi_spmv' else 'petsc'
    ms = r['ms'] if who == 'bsrmv' else r['time_ms']
    by.setdefault((r['matrix'], r['bs'], who), []).append(ms)
print("\nmatrix                bs  bsrmv_ms  petsc_ms  speedup (median over rounds)")
for (m, bs, who) in sorted(by):
    if who != 'bsrmv' or (m, bs, 'petsc') not in by:
        continue
    b, p = statistics.median(by[(m, bs, 'bsrmv')]), statistics.median(by[(m, bs, 'petsc')])
    print(f"{m:20s} {bs:3d} {b:9.3f} {p:9.3f} {p / b:8.3f}")
EOF
} > "$OUT"
rm -f "$LINES"
tail -n 4 "$OUT"
