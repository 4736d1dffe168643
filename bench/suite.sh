#!/usr/bin/env bash
# The bsrmv benchmark suite: bsrmv and every peer available on this machine,
# timed in the same run on the same matrices, JSON lines for every
# measurement, then plots and docs/RESULTS.md.
#
#   bench/suite.sh [--quick] [--gpu] [--sets LIST] [--out DIR] [--label NAME]
#                  [--budget SECONDS] [--matrices DIR] [--bsrmv PATH]
#                  [--no-install] [--no-peers] [--no-report] [--dry-run]
#   bench/suite.sh --gpu-mpi [--phases LIST] [--strong-grids N3,N6] [--out DIR]
#                  [--label NAME] [--dry-run]
#
#   make bench                  CPU suite here (= bench/suite.sh), 10-20 min on 2 cores
#   make bench ARGS=--quick     a first look, ~1-2 min
#   bench/suite.sh --gpu --out "$OUT/gpu"   on the GPU machine (after the CUDA
#                               build of build/bsrmv); ~14 min on an H100
#                               (below), no new work after --budget 470 s
#   bench/suite.sh --gpu-mpi --out "$OUT/gpu-mpi" --strong-grids 308,196
#                               on a machine with 2, 4 or 8 GPUs, OpenMPI
#                               and NCCL: distributed SpMV and BiCGSTAB
#
# Modes
#   cpu (default)  builds build-bench (CPU only, Release) and bench/peers/,
#                  installs missing peers when root (apt: petsc-dev,
#                  librsb-dev; pip: scipy, matplotlib), then per matrix and
#                  block size, interleaved:
#                    peers_cpu   bsrmv_spmv, PETSc SeqBAIJ, PETSc SeqAIJ (scalar
#                                expansion), librsb; ROUNDS rounds, rotating order
#                    bsrmv CLI   bsrmv bench SOURCE --bs B --json (threads 1 and all)
#                    scipy       bsr_matrix @ x, csr_matrix @ x; ROUNDS rounds
#                    petsc_mpi   MPIBAIJ with mpirun -np NPROC (grid set only)
#   --gpu          uses build/bsrmv (must be a CUDA build); one CLI process per
#                  matrix with all its block sizes, `--gpu --no-cpu`: bsrmv's
#                  dispatcher pick (auto), cusparseDbsrmv (col, row), SpMV
#                  BSR_ALG1 (col, row), SpMV CSR_ALG1, and on the sets of
#                  GPU_ALL_KERNEL_SETS (grid, sweep) and the complex set
#                  every bsrmv GPU kernel too (`--gpu-kernels all`;
#                  elsewhere `auto`).  The `auto` sets time every path
#                  twice (`--gpu-traffic $GPU_TRAFFIC`, default cg,0): with
#                  a CG iteration's vector traffic between calls, as a
#                  solver calls SpMV (the report's ratio), and back to back
#                  (beside it, where the matrix fits in L2).  No CPU
#                  timing and no CPU peers there (recorded as a note: the CPU
#                  suite measures them), except the scaling set: bsrmv on
#                  the host at 1,2,4,8,16 threads.  The real set runs in
#                  every value type of GPU_REAL_TYPES (double,float) and
#                  block order of GPU_REAL_ORDERS (col row): one process
#                  per matrix and order; the other sets are double,
#                  column-major.  A failing block size is
#                  logged and the rest of the list goes on in a new process.
#                  Time on an H100 (16 cores), measured (suite.log of
#                  bench/results/gpu-h100_*): grid 25 s, sweep, scaling,
#                  mixed and complex 40 s, sym 11 s, spmm 39 s, generated
#                  and bridge ~120 s (cuSPARSE's ~100 ms calls on the arrow
#                  matrices, the bridge's ~1.1 GB of .mtx text), real 590 s
#                  (29 matrices, ~22 GB of promoted values, 58 processes,
#                  most of it cuSPARSE's setup and calls): ~840 s, more
#                  than one 600 s command.  --budget (default 470) skips
#                  what is left and lists it; split a whole run over
#                  commands by --sets and --matrices DIR (a folder with
#                  some of the matrices) and join the parts with
#                  bench/merge_runs.py.  The per-phase lines in suite.log
#                  (bsrmv: phases ...) show the split.
#   --gpu-mpi      runs scripts/gpu_mpi.sh with OUT = the results directory:
#                  its phases (--phases, default "build strong weak solve";
#                  test, sanitize, ksparse too) on 1, 2, 4 and 8 GPUs, as
#                  many as there are; --strong-grids N3,N6 sets the grid
#                  edges of the bs 3 and bs 6 strong-scaling runs (the
#                  script's STRONG3/STRONG6; default 160,102: ~8 GB; 308,196:
#                  ~60 GB, half an H200).  Under a 10-minute limit per
#                  command, one phase group per call with the same --out
#                  (--phases build, then --phases strong, then weak,solve):
#                  the records add up in that directory.  No report there
#                  (copy it back, as for --gpu).
# Sets and sizes: bench/sets.sh (--sets grid,real,... picks some).
# Every process runs with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (malloc
# advises transparent huge pages, as bsrmv does for its own arrays).
# Each measurement: 3 warm-up calls (the first checked), median of the timed
# calls; reps grow for small matrices so that a measurement takes >= ~64 MB.
#
# Output: DIR = bench/results/<label>_<date> (default label: cpu-<model>-<N>c,
# gpu-<model> or gpu-mpi-<model>x<GPUs>), holding <set>.jsonl (the CLI's JSON schema plus set, case,
# via; peers add round and ref), stream.jsonl, matrices.jsonl (the real
# matrices: nnz, natural bs, fill), skipped.jsonl (what was not measured and
# why), meta.json (machine, date, commit, command, load, peers) and suite.log;
# --gpu-mpi: bench.jsonl (bsrmv_mpi_bench's records), summary.txt, machine.txt,
# the script's logs, meta.json (GPU model and count, phases, grids) and suite.log.
# CPU mode, unless --no-report: bench/plot.py and bench/report.py regenerate
# docs/results/plots/ and docs/RESULTS.md from the newest CPU and GPU runs
# (with --out DIR: DIR/plots/ and DIR/RESULTS.md from this run, docs untouched)
# (a GPU run is copied back here and reported here: no matplotlib there).
# A failing command is logged and the suite goes on; exit status 1 if any did.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

MODE=cpu QUICK=0 DRY=0 INSTALL=1 REPORT=1 USE_PEERS=1
OUT_DIR='' OUT_GIVEN='' LABEL='' BUDGET='' MATRICES='' BSRMV=''
STRONG_GRIDS='' MPI_PHASES=''
ARGS="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu) MODE=gpu; shift ;;
        --gpu-mpi) MODE=gpu-mpi; shift ;;
        --strong-grids) STRONG_GRIDS=$2; shift 2 ;;
        --phases) MPI_PHASES=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --dry-run) DRY=1; shift ;;
        --no-install) INSTALL=0; shift ;;
        --no-report) REPORT=0; shift ;;
        --no-peers) USE_PEERS=0; shift ;;
        --sets) SETS=$2; shift 2 ;;
        --out) OUT_DIR=$2; OUT_GIVEN=1; shift 2 ;;
        --label) LABEL=$2; shift 2 ;;
        --budget) BUDGET=$2; shift 2 ;;
        --matrices) MATRICES=$2; shift 2 ;;
        --bsrmv) BSRMV=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 0 ;;
        *) echo "suite: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

if [ "$MODE" != gpu-mpi ] && [ -n "$STRONG_GRIDS$MPI_PHASES" ]; then
    echo "suite: --phases and --strong-grids go with --gpu-mpi" >&2
    exit 2
fi
LOG_TAG=suite
. bench/lib.sh
NPROC=${NPROC:-$(nproc)}
. bench/sets.sh
PY=${PYTHON:-python3}
[ "$MODE" = gpu ] && : "${BUDGET:=470}"
BUDGET=${BUDGET:-0}
START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
# Busy CPU seconds of the whole machine (user nice system irq softirq steal);
# minus the suite's own children at the end, what other users took.
busy_s() { awk -v hz="$(getconf CLK_TCK)" '/^cpu / {print ($2 + $3 + $4 + $7 + $8 + $9) / hz}' /proc/stat; }
BUSY_START=$(busy_s)
FAILED=0

export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
unset OMP_PROC_BIND OMP_PLACES OMP_NUM_THREADS

# ---- machine, output directory ------------------------------------------------
GPU_NAME='' GPU_COUNT=0
if [ "$MODE" != cpu ] && command -v nvidia-smi >/dev/null; then
    GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    GPU_COUNT=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
fi
CPU_NAME=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
if [ -z "$LABEL" ]; then
    if [ "$MODE" != cpu ]; then
        LABEL=$(echo "$GPU_NAME" | tr 'A-Z' 'a-z' | grep -oE '[a-z][0-9]{2,4}[a-z]?' | head -1)
        LABEL=gpu-${LABEL:-unknown}
        [ "$MODE" = gpu-mpi ] && LABEL=gpu-mpi-${LABEL#gpu-}x$GPU_COUNT
    else
        LABEL=cpu-$(echo "$CPU_NAME" | tr 'A-Z' 'a-z' | awk '{print ($1 == "amd" || $1 == "intel(r)") ? $2 : $1}' |
                    tr -cd 'a-z0-9')-${NPROC}c
    fi
    [ "$QUICK" = 1 ] && LABEL+=-quick
fi
DATE=$(date -u +%Y-%m-%d)
if [ -z "$OUT_DIR" ]; then
    OUT_DIR=bench/results/${LABEL}_$DATE
    k=2
    while [ -e "$OUT_DIR" ]; do OUT_DIR=bench/results/${LABEL}_${DATE}_$k; k=$((k + 1)); done
fi
if [ "$MODE" = gpu-mpi ]; then
    MPI_PHASES=${MPI_PHASES:-build strong weak solve}
    read -ra PHASE_LIST <<<"${MPI_PHASES//,/ }"
    MPI_PHASES=${PHASE_LIST[*]}
    for ph in "${PHASE_LIST[@]}"; do
        case $ph in build|test|sanitize|strong|weak|ksparse|solve) ;;
            *) echo "suite: unknown phase '$ph' (build test sanitize strong weak ksparse solve)" >&2; exit 2 ;;
        esac
    done
    [[ "$STRONG_GRIDS" =~ ^([0-9]+(,[0-9]+)?)?$ ]] ||
        { echo "suite: --strong-grids takes N3 or N3,N6 (grid edges), not '$STRONG_GRIDS'" >&2; exit 2; }
    MPI_ENV=()
    if [ -n "$STRONG_GRIDS" ]; then
        MPI_ENV+=("STRONG3=${STRONG_GRIDS%%,*}")
        [[ "$STRONG_GRIDS" == *,* ]] && MPI_ENV+=("STRONG6=${STRONG_GRIDS#*,}")
    fi
    # GPU_MPI: a stand-in script for the checks (bench/check_gpu_mpi_mode.sh)
    MPI_CMD=(env "${MPI_ENV[@]}" OUT="$OUT_DIR" "${GPU_MPI:-scripts/gpu_mpi.sh}" "${PHASE_LIST[@]}")
    if [ "$DRY" = 1 ]; then # the one command, nothing written
        [ -f "$OUT_DIR/bench.jsonl" ] || echo "+ rm -f build-gpu-mpi/gpu_mpi_records.jsonl"
        echo "+ ${MPI_CMD[*]}"
        exit 0
    fi
fi
if [ "$DRY" = 1 ]; then
    OUT_DIR=$(mktemp -d /tmp/bench_dry.XXXXXX)
fi
mkdir -p "$OUT_DIR" || { log "cannot create $OUT_DIR"; exit 1; }
SUITE_LOG=$OUT_DIR/suite.log
exec 2> >(tee -a "$SUITE_LOG" >&2)
log "mode $MODE$([ "$QUICK" = 1 ] && echo ' (quick)'), results in $OUT_DIR, load $LOAD_START"

json_esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
# meta_common: the opening keys of meta.json, the same in every mode (END set).
meta_common() {
    local commit dirty
    commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
    dirty=$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo true || echo false)
    printf '{"mode":"%s","quick":%s,"label":"%s","date":"%s","start_utc":"%s","elapsed_s":%d,' \
        "$MODE" "$([ "$QUICK" = 1 ] && echo true || echo false)" "$LABEL" "$DATE" \
        "$(date -u -d "@$START" '+%Y-%m-%d %H:%M')" $((END - START))
    printf '"commit":"%s","dirty":%s,"command":"%s",' "$commit" "$dirty" "$(json_esc "bench/suite.sh $ARGS")"
    printf '"cpu":"%s","nproc":%d,' "$(json_esc "$CPU_NAME")" "$NPROC"
}
meta_notes() { # the closing key: the notes
    local n sep=
    printf '"notes":['
    for n in "${NOTES[@]}"; do printf '%s"%s"' "$sep" "$(json_esc "$n")"; sep=,; done
    printf ']}\n'
}

# ---- several GPUs: scripts/gpu_mpi.sh --------------------------------------------
# Its own build (build-gpu-mpi/), tests and runs; the records, summary and
# machine.txt go straight into the results directory.  The script keeps its
# records in build-gpu-mpi/ across calls: a results directory without
# bench.jsonl starts them afresh, one that has it (the same --out again, one
# phase group per call) adds to them.
if [ "$MODE" = gpu-mpi ]; then
    [ "$GPU_COUNT" -ge 2 ] || note "gpu-mpi: $GPU_COUNT GPU(s) found: the scaling runs need 2 or more"
    [ -f "$OUT_DIR/bench.jsonl" ] || rm -f build-gpu-mpi/gpu_mpi_records.jsonl
    log "${MPI_CMD[*]}"
    if ! "${MPI_CMD[@]}" >>"$SUITE_LOG" 2>&1; then # the steps that failed, or the script itself
        FAILED=$(grep -c ' rc=[1-9]' "$OUT_DIR/summary.txt" 2>/dev/null)
        [ "${FAILED:-0}" -gt 0 ] || FAILED=1
    fi
    END=$(date +%s)
    {
        meta_common
        printf '"gpu":"%s","gpu_count":%d,"phases":"%s","strong_grids":"%s","failed_commands":%d,' \
            "$(json_esc "$GPU_NAME")" "$GPU_COUNT" "$MPI_PHASES" "${STRONG_GRIDS:-script default}" "$FAILED"
        printf '"env":"GLIBC_TUNABLES=%s NCCL_NVLS_ENABLE=0",' "$GLIBC_TUNABLES"
        meta_notes
    } >"$OUT_DIR/meta.json"
    log "done in $((END - START)) s, $FAILED failed command(s); results in $OUT_DIR"
    log "report: copy $OUT_DIR to bench/results/ on the development machine, then run bench/plot.py and bench/report.py there"
    [ "$FAILED" = 0 ]
    exit
fi

# ---- peers and build ---------------------------------------------------------
# The GPU machine has no network, and its results are reported back here.
[ "$MODE" = gpu ] && INSTALL=0 REPORT=0
# Build output: beside the results on the GPU machine (they come back from
# there), in /tmp here.
BUILD_LOG=/tmp/bench_build.log
[ "$MODE" = gpu ] && BUILD_LOG=$OUT_DIR/build.log
HAVE_PETSC=0 HAVE_RSB=0 HAVE_SCIPY=0 HAVE_MPI=0 HAVE_MPL=0
if [ "$MODE" = gpu ] && [ "$USE_PEERS" = 1 ]; then
    # The GPU suite compares with cuSPARSE; the CPU peers would only repeat,
    # on another CPU, what the CPU suite measures (and cost half its time).
    note "peers: PETSc, librsb, scipy skipped on the GPU machine: CPU peers are measured by the CPU suite (make bench)"
    USE_PEERS=0
elif [ "$USE_PEERS" = 0 ]; then
    note "peers: not run (--no-peers)"
fi
if [ "$USE_PEERS" = 0 ]; then
    :
elif [ "$DRY" = 0 ]; then
    apt_get petsc-dev PETSc && HAVE_PETSC=1
    apt_get librsb-dev librsb && HAVE_RSB=1
    pip_get scipy.sparse scipy && HAVE_SCIPY=1
    [ "$REPORT" = 1 ] && pip_get matplotlib && HAVE_MPL=1
else
    pkg-config --exists PETSc && HAVE_PETSC=1
    pkg-config --exists librsb && HAVE_RSB=1
    "$PY" -c 'import scipy.sparse' 2>/dev/null && HAVE_SCIPY=1
fi
if [ "$USE_PEERS" = 1 ]; then
    [ "$HAVE_PETSC" = 1 ] || note "petsc-baij, petsc-aij: PETSc not available on this machine"
    [ "$HAVE_RSB" = 1 ] || note "librsb: not available on this machine"
    [ "$HAVE_SCIPY" = 1 ] || note "scipy-bsr, scipy-csr: scipy not available on this machine"
fi
[ "$REPORT" = 1 ] && [ "$DRY" = 0 ] && [ "$USE_PEERS" = 0 ] && pip_get matplotlib && HAVE_MPL=1

run_quiet() { # LOGFILE CMD...: runs, output to LOGFILE; in dry-run only prints
    local f=$1; shift
    if [ "$DRY" = 1 ]; then echo "+ $*"; return 0; fi
    "$@" >>"$f" 2>&1
}

if [ "$MODE" = gpu ]; then
    BUILD=$ROOT/build
    : "${BSRMV:=$BUILD/bsrmv}"
    [ -x "$BSRMV" ] || { log "no $BSRMV: build it first (cmake -S . -B build -DBSRMV_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build build -j)"; [ "$DRY" = 1 ] || exit 1; }
else
    BUILD=$ROOT/build-bench
    if [ -z "$BSRMV" ]; then
        log "building bsrmv (build-bench: CPU only, Release)"
        run_quiet "$BUILD_LOG" cmake -S . -B "$BUILD" -DBSRMV_CUDA=OFF -DCMAKE_BUILD_TYPE=Release \
            -DBUILD_TESTING=OFF &&
            run_quiet "$BUILD_LOG" cmake --build "$BUILD" -j "$NPROC" --target bsrmv bsrmv_cli ||
            { log "bsrmv build failed, see $BUILD_LOG"; exit 1; }
        BSRMV=$BUILD/bsrmv
    fi
fi
PEERS='' PMPI=''
if [ "$HAVE_PETSC$HAVE_RSB$HAVE_SCIPY" != 000 ]; then
    if run_quiet "$BUILD_LOG" make -C bench/peers BSRMV_BUILD="$BUILD" OUT="$BUILD/peers-bench"; then
        PEERS=$BUILD/peers-bench/peers_cpu
        [ "$HAVE_PETSC" = 1 ] && PMPI=$BUILD/peers-bench/petsc_mpi
    else
        note "peers: build of bench/peers against $BUILD failed (see $BUILD_LOG): CPU peers skipped"
        HAVE_PETSC=0 HAVE_RSB=0 HAVE_SCIPY=0
    fi
fi
ONLY=bsrmv
[ "$HAVE_PETSC" = 1 ] && ONLY+=,petsc-baij,petsc-aij
[ "$HAVE_RSB" = 1 ] && ONLY+=,librsb
MPIRUN=()
if [ "$HAVE_PETSC" = 1 ] && [ "$NPROC" -gt 1 ]; then
    if command -v mpirun >/dev/null; then
        MPIRUN=(mpirun --bind-to core --map-by core -x GLIBC_TUNABLES -x OMP_NUM_THREADS=1
                -x OPENBLAS_NUM_THREADS=1)
        [ "$IS_ROOT" = 1 ] && MPIRUN+=(--allow-run-as-root)
        HAVE_MPI=1
        if [ "$DRY" = 0 ] && ! timeout 60 "${MPIRUN[@]}" -np 2 "$PMPI" --grid 4 --bs 2 --reps 2 --rounds 1 \
                >/dev/null 2>>"$BUILD_LOG"; then
            note "petsc-mpibaij: mpirun -np 2 failed (see $BUILD_LOG)"
            HAVE_MPI=0
        fi
    else
        note "petsc-mpibaij: no mpirun (openmpi-bin)"
    fi
fi
[ "$HAVE_PETSC" = 1 ] && note "petsc-baij, petsc-aij: PETSc Seq matrices run on 1 thread (PETSc has no threaded MatMult); petsc-mpibaij (MPI ranks) on the grid set only"
[ "$HAVE_SCIPY" = 1 ] && note "scipy-bsr, scipy-csr: 1 thread (scipy's sparse matvec is serial)"
[ "$MODE" = gpu ] && note "gpu: every bsrmv GPU kernel timed on the sets $GPU_ALL_KERNEL_SETS, the dispatcher's pick (auto) on the others, timed with --gpu-traffic $GPU_TRAFFIC; cuSPARSE everywhere; the real set in the types $GPU_REAL_TYPES and the block orders $GPU_REAL_ORDERS, the others double, column-major; no CPU timing but the scaling set"

if [ "$MODE" = gpu ] && [ "$DRY" = 0 ]; then
    if ! timeout 120 "$BSRMV" bench --grid 2 --bs 1 --reps 1 --gpu --no-cpu --gpu-kernels auto --json \
            >/dev/null 2>>"$SUITE_LOG"; then
        log "$BSRMV bench --gpu --no-cpu fails (no GPU, not a CUDA build, or an older CLI): see $SUITE_LOG"
        exit 1
    fi
fi

# ---- matrices ------------------------------------------------------------------
if [ -z "$MATRICES" ]; then
    for d in "${BSRMV_MATRICES:-}" "$ROOT/shared/matrices" "$ROOT/../shared/matrices" "$ROOT/build-matrices"; do
        [ -n "$d" ] && [ -d "$d" ] && { MATRICES=$d; break; }
    done
fi
MTX_FILES=()
[ -n "$MATRICES" ] && MATRICES=$(cd "$MATRICES" && pwd)
if [ -n "$MATRICES" ]; then
    for f in "$MATRICES"/*.mtx.gz "$MATRICES"/*.mtx; do
        [ -f "$f" ] || continue
        stem=$(basename "$f"); stem=${stem%.gz}; stem=${stem%.mtx}
        if [ -z "$REAL_MATRICES" ] || [[ " $REAL_MATRICES " == *" $stem "* ]]; then
            MTX_FILES+=("$f")
        fi
    done
fi
[ ${#MTX_FILES[@]} -gt 0 ] || note "real, sweep: no Matrix Market files found (--matrices DIR, BSRMV_MATRICES, ../shared/matrices, build-matrices/)"

# ---- helpers ---------------------------------------------------------------------
elapsed() { echo $(($(date +%s) - START)); }
over_budget() { [ "$BUDGET" -gt 0 ] && [ "$(elapsed)" -ge "$BUDGET" ]; }
# Per-command limit: what is left of the budget (at least 30 s), else 600 s.
cmd_limit() {
    if [ "$BUDGET" -gt 0 ]; then
        local left=$((BUDGET - $(elapsed) + 30))
        [ $left -lt 30 ] && left=30
        [ $left -gt 600 ] && left=600
        echo $left
    else
        echo 600
    fi
}

skip() { # SET CASE BS REASON (BS empty: the case's own, JSON 0)
    log "skip $1 $2 bs ${3:-0}: $4"
    echo "{\"set\":\"$1\",\"case\":\"$(json_esc "$2")\",\"bs\":${3:-0},\"skipped\":\"$(json_esc "$4")\"}" \
        >>"$OUT_DIR/skipped.jsonl"
}
# tag SET CASE [VIA]: appends the suite's keys to each JSON line on stdin.
tag() {
    local extra
    extra=",\"set\":\"$1\",\"case\":\"$(json_esc "$2")\""
    [ -n "${3:-}" ] && extra+=",\"via\":\"$3\""
    extra=${extra//&/\\&}
    grep '^{' | sed "s|}\$|${extra//|/\\|}}|"
}
# run SET CASE VIA CMD...: runs CMD under the time limit, JSON lines to
# <set>.jsonl, stderr to the log; a failure is logged and counted.
run() {
    local set=$1 case=$2 via=$3 rc; shift 3
    if [ "$DRY" = 1 ]; then echo "+ $*"; return 0; fi
    timeout "$(cmd_limit)" "$@" 2>>"$SUITE_LOG" | tag "$set" "$case" "$via" >>"$OUT_DIR/$set.jsonl"
    rc=${PIPESTATUS[0]}
    if [ "$rc" != 0 ]; then
        log "FAILED (rc $rc, $set $case): $*"
        FAILED=$((FAILED + 1))
    fi
    return "$rc"
}

# Values in MB of SOURCE at bs (estimates for sizing, caps and reps).
grid_n() { # BS TARGET_MB [VALUE_BYTES]: smallest n whose 27-point grid holds TARGET_MB of values
    awk -v bs="$1" -v mb="$2" -v vb="${3:-8}" 'BEGIN { n = 2; while ((3*n-2)^3 * bs*bs * vb < mb * 1e6) n++; print n }'
}
est_mb() { # KIND ARG BS
    local kind=$1 arg=$2 bs=$3
    case $kind in
        grid) awk -v n="$arg" -v bs="$bs" 'BEGIN { printf "%d", (3*n-2)^3 * bs*bs * 8 / 1e6 }' ;;
        promote) awk -v nnz="${NNZ[$arg]}" -v bs="$bs" 'BEGIN { printf "%d", nnz * bs*bs * 8 / 1e6 }' ;;
        split)
            if [ "$bs" -le 8 ]; then
                awk -v b="${NNZB[$arg,$bs]}" -v bs="$bs" 'BEGIN { printf "%d", b * bs*bs * 8 / 1e6 }'
            else # past bs 8 the zero fill grows about linearly with bs (measured on
                 # bcsstk16: 6-12 MB at bs 12-32); never more than the padded matrix
                awk -v b8="${NNZB[$arg,8]}" -v m="${ROWS[$arg]}" -v bs="$bs" 'BEGIN {
                    v = b8 * 64 * 8 * bs / 8; p = int((m + bs - 1) / bs) * bs
                    if (v > p * p * 8) v = p * p * 8; printf "%d", v / 1e6 }'
            fi ;;
        powerlaw) awk -v s="$arg" -v bs="$bs" 'BEGIN { split(s, a, ","); printf "%d", a[1] * a[2] * bs*bs * 8 / 1e6 }' ;;
        arrow) awk -v s="$arg" -v bs="$bs" 'BEGIN { split(s, a, ","); printf "%d", a[1] * (2*a[2] + 1) * bs*bs * 8 / 1e6 }' ;;
    esac
}
# The cap on values: the sized sets (grids) get twice their target, the
# others MAX_MB.
cap_for() { case $1 in grid|scaling) echo $((GRID_MB * 2)) ;; *) echo "$MAX_MB" ;; esac; }
reps_for() { # MB: timed calls so that a measurement moves >= ~64 MB, at most 200
    awk -v mb="$1" -v r="$REPS" 'BEGIN { k = mb > 0 ? int(64 / mb) : 200; if (k > 200) k = 200; print (k > r ? k : r) }'
}
src_args() { # KIND ARG -> the CLI / peers_cpu source options
    case $1 in
        grid) echo "--grid $2" ;;
        promote) echo "--mtx ${FILE[$2]} --promote" ;;
        split) echo "--mtx ${FILE[$2]} --split" ;;
        powerlaw) echo "--powerlaw $2" ;;
        arrow) echo "--arrow $2" ;;
    esac
}

# ---- real matrices: nnz, rows, split block counts, natural bs ---------------------
declare -A NNZ ROWS NNZB FILE NATURAL
register_mtx() { # FILE SET: sizes, split block counts and natural bs from `bsrmv info`
    local f=$1 set=$2 stem info fills b nb fill
    stem=$(basename "$f"); stem=${stem%.gz}; stem=${stem%.mtx}
    FILE[$stem]=$f
    info=$("$BSRMV" info "$f" 2>>"$SUITE_LOG") || { log "bsrmv info $f failed"; return 1; }
    NNZ[$stem]=$(awk '$1 == "nnz" {print $2}' <<<"$info")
    ROWS[$stem]=$(awk '$1 == "size" {print $2}' <<<"$info")
    fills=
    while read -r b nb fill; do
        NNZB[$stem,$b]=$nb
        fills+="\"$b\":$fill,"
    done < <(awk '/aligned split/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {print $1, $2, $3}' <<<"$info")
    # Natural bs: the largest bs whose aligned split adds at most 25% zeros
    # (2, 3 or 6 for the structural matrices); 2 where none does.
    NATURAL[$stem]=$(awk '/aligned split/ {on = 1; next}
        on && $1 ~ /^[0-9]+$/ && $1 >= 2 && $3 <= 1.25 {b = $1} END {print b ? b : 2}' <<<"$info")
    echo "{\"set\":\"$set\",\"case\":\"$stem\",\"file\":\"$(basename "$f")\",\"rows\":${ROWS[$stem]},\"nnz\":${NNZ[$stem]},\"natural_bs\":${NATURAL[$stem]},\"fill\":{${fills%,}}}" \
        >>"$OUT_DIR/matrices.jsonl"
}
for f in "${MTX_FILES[@]}"; do register_mtx "$f" real; done

# ---- one matrix, one bs: bsrmv and the peers, interleaved -------------------------
DUMP=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo /tmp)/bsrmv_suite.XXXXXX")
trap 'rm -rf "$DUMP"' EXIT
DUMP_ARGS=() # peers_cpu writes the matrix there for scipy
[ "$HAVE_SCIPY" = 1 ] && DUMP_ARGS=(--dump "$DUMP")

# measure SET CASE KIND ARG BS: the CPU suite's unit of work.
measure() {
    local set=$1 case=$2 kind=$3 arg=$4 bs=$5 mb reps t
    mb=$(est_mb "$kind" "$arg" "$bs")
    if [ "$mb" -gt "$(cap_for "$set")" ]; then skip "$set" "$case" "$bs" "values ~${mb} MB > cap $(cap_for "$set") MB"; return; fi
    if over_budget; then skip "$set" "$case" "$bs" "time budget ${BUDGET} s spent"; return; fi
    reps=$(reps_for "$mb")
    local src; read -ra src <<<"$(src_args "$kind" "$arg")"
    log "$set $case bs $bs (~${mb} MB, $reps reps, $(elapsed) s)"
    if [ -n "$PEERS" ]; then
        run "$set" "$case" "" "$PEERS" "${src[@]}" --bs "$bs" --threads "$THREADS" --reps "$reps" \
            --rounds "$ROUNDS" --only "$ONLY" "${DUMP_ARGS[@]}"
    fi
    run "$set" "$case" cli "$BSRMV" bench "${src[@]}" --bs "$bs" --threads "$THREADS" --kernels auto \
        --json --no-stream --reps "$reps"
    if [ "$HAVE_SCIPY" = 1 ] && { [ "$DRY" = 1 ] || [ -f "$DUMP/meta.txt" ]; }; then
        OMP_NUM_THREADS=1 run "$set" "$case" "" "$PY" bench/peers/scipy_bsr.py "$DUMP" --reps "$reps" \
            --rounds "$ROUNDS"
    fi
    if [ "$HAVE_MPI" = 1 ] && [ "$set" = grid ]; then
        for t in ${THREADS//,/ }; do
            [ "$t" -gt 1 ] || continue
            run "$set" "$case" "" "${MPIRUN[@]}" -np "$t" "$PMPI" "${src[@]}" --bs "$bs" --reps "$reps" --rounds 1
        done
    fi
    rm -f "$DUMP"/*
}

# measure_gpu SET CASE KIND ARG BSLIST: one CLI process for the whole list
# (one CUDA context, one read of the file), GPU records only; after a
# failure the rest of the list goes on in a new process.  GPU_CONFIG: the
# value types and block order (--type, --order) where a set asks for others
# than double, column-major.
GPU_CONFIG=()
measure_gpu() {
    local set=$1 case=$2 kind=$3 arg=$4 list=() bs mb out rc last kernels=auto
    local traffic=$GPU_TRAFFIC
    [[ ",$GPU_ALL_KERNEL_SETS," == *",$set,"* ]] && kernels=all traffic=0
    for bs in ${5//,/ }; do
        mb=$(est_mb "$kind" "$arg" "$bs")
        if [ "$mb" -gt "$(cap_for "$set")" ]; then skip "$set" "$case" "$bs" "values ~${mb} MB > cap $(cap_for "$set") MB"
        else list+=("$bs"); fi
    done
    local src; read -ra src <<<"$(src_args "$kind" "$arg")"
    while [ ${#list[@]} -gt 0 ]; do
        if over_budget; then
            for bs in "${list[@]}"; do skip "$set" "$case" "$bs" "time budget ${BUDGET} s spent"; done
            return
        fi
        local joined; joined=$(IFS=,; echo "${list[*]}")
        local cmd=("$BSRMV" bench "${src[@]}" --bs "$joined" --gpu --no-cpu --gpu-kernels "$kernels" --json
                   --gpu-traffic "$traffic" --reps "$REPS" "${GPU_CONFIG[@]}")
        log "$set $case bs $joined, kernels $kernels ${GPU_CONFIG[*]} ($(elapsed) s)"
        if [ "$DRY" = 1 ]; then echo "+ ${cmd[*]}"; break; fi
        out=$(mktemp)
        timeout "$(cmd_limit)" "${cmd[@]}" 2>>"$SUITE_LOG" | tee "$out" | tag "$set" "$case" cli >>"$OUT_DIR/$set.jsonl"
        rc=${PIPESTATUS[0]}
        [ "$rc" = 0 ] && { rm -f "$out"; break; }
        FAILED=$((FAILED + 1))
        # The records of a bs come out together at its end (the pick's
        # among them): the failed bs is the one after the last complete one.
        last=$(grep -v '"backend":"stream"' "$out" | grep -o '"bs":[0-9]*' | tail -1 | cut -d: -f2)
        local done_last=0
        [ -n "$last" ] && grep -q "\"bs\":$last,.*\"kernel\":\"auto:" "$out" && done_last=1
        rm -f "$out"
        local rest=() seen=0 failed_bs=
        for bs in "${list[@]}"; do
            if [ -z "$last" ] && [ -z "$failed_bs" ]; then failed_bs=$bs; continue; fi
            if [ "$seen" = 1 ]; then
                if [ "$done_last" = 1 ] && [ -z "$failed_bs" ]; then failed_bs=$bs; continue; fi
                rest+=("$bs")
            fi
            [ "$bs" = "$last" ] && { seen=1; [ "$done_last" = 0 ] && failed_bs=$bs; }
        done
        if [ -n "$failed_bs" ]; then
            skip "$set" "$case" "$failed_bs" "bsrmv bench --gpu failed (rc $rc, see suite.log)"
        else
            log "FAILED (rc $rc) after the last bs of $set $case: wrong results? see the records and suite.log"
        fi
        list=("${rest[@]}")
    done
}

# case SET CASE KIND ARG BSLIST [ARG_OF_BS]: the whole list, in the mode's way.
# ARG_OF_BS, a function, gives the source argument per bs (sized sets).
run_case() {
    local set=$1 case=$2 kind=$3 arg=$4 bslist=$5 argf=${6:-} bs
    if [ -n "$argf" ]; then # sized per bs: one process per bs in both modes
        for bs in ${bslist//,/ }; do
            if [ "$MODE" = gpu ]; then measure_gpu "$set" "$case" "$kind" "$($argf "$bs")" "$bs"
            else measure "$set" "$case" "$kind" "$($argf "$bs")" "$bs"; fi
        done
    elif [ "$MODE" = gpu ]; then
        measure_gpu "$set" "$case" "$kind" "$arg" "$bslist"
    else
        for bs in ${bslist//,/ }; do measure "$set" "$case" "$kind" "$arg" "$bs"; done
    fi
}

grid_arg() { grid_n "$1" "$GRID_MB"; }
powerlaw_arg() {
    awk -v bs="$1" -v mb="$GEN_MB" -v m="$POWERLAW_MEAN" -v l="$POWERLAW_MAXLEN" -v e="$POWERLAW_EXP" \
        'BEGIN { n = int(mb * 1e6 / (m * bs*bs * 8)); if (n < l) n = l; printf "%d,%s,%d,%s", n, m, l, e }'
}
arrow_arg() {
    awk -v bs="$1" -v mb="$GEN_MB" -v d="$ARROW_DENSE" \
        'BEGIN { printf "%d,%d", int(mb * 1e6 / ((2*d + 1) * bs*bs * 8)), d }'
}

# ---- the sets -----------------------------------------------------------------------
# The stream read bandwidth per thread count (the horizontal lines of the plots).
log "stream read bandwidth, threads $SCALE_THREADS"
if [ "$DRY" = 1 ]; then echo "+ $BSRMV bench --grid 2 --bs 1 --threads $SCALE_THREADS --reps 1 --kernels auto --json"
else
    timeout 300 "$BSRMV" bench --grid 2 --bs 1 --threads "$SCALE_THREADS" --reps 1 --kernels auto --json \
        2>>"$SUITE_LOG" | grep '"backend":"stream"' | tag stream stream cli >>"$OUT_DIR/stream.jsonl" ||
        log "stream measurement failed"
fi

# the whole help first: grep -q stops reading at the match, and under
# pipefail the CLI's SIGPIPE would count as "no such flag"
have_cli_source() { local h; h=$("$BSRMV" bench --help 2>/dev/null); grep -q -- "$1" <<<"$h"; }

for set in ${SETS//,/ }; do
    log "== set $set ($(elapsed) s)"
    case $set in
        grid) run_case grid grid27 grid "" "$GRID_BS" grid_arg ;;
        scaling)
            for bs in ${SCALE_BS//,/ }; do
                n=$(grid_arg "$bs")
                if over_budget; then skip scaling grid27 "$bs" "time budget ${BUDGET} s spent"; continue; fi
                mb=$(est_mb grid "$n" "$bs")
                log "scaling grid27 bs $bs threads $SCALE_THREADS ($(elapsed) s)"
                run scaling grid27 cli "$BSRMV" bench --grid "$n" --bs "$bs" --threads "$SCALE_THREADS" \
                    --kernels auto --json --no-stream --reps "$(reps_for "$mb")"
                if [ -n "$PEERS" ] && [ "$HAVE_RSB" = 1 ]; then
                    run scaling grid27 "" "$PEERS" --grid "$n" --bs "$bs" --threads "$SCALE_THREADS" \
                        --reps "$(reps_for "$mb")" --rounds 1 --only bsrmv,librsb
                fi
            done
            [ -n "$PEERS" ] && [ "$HAVE_RSB" = 1 ] || [ "$USE_PEERS" = 0 ] ||
                note "scaling: bsrmv only (librsb, the one CPU peer with threads, is not available)" ;;
        real)
            for f in "${MTX_FILES[@]}"; do
                stem=$(basename "$f"); stem=${stem%.gz}; stem=${stem%.mtx}
                [ -n "${NNZ[$stem]:-}" ] || continue
                # CPU mode: one pass (-), in the CLI's default type and order
                for order in $([ "$MODE" = gpu ] && echo "$GPU_REAL_ORDERS" || echo -); do
                    [ "$order" = - ] || GPU_CONFIG=(--type "$GPU_REAL_TYPES" --order "$order")
                    run_case real "$stem:promote" promote "$stem" "$REAL_PROMOTE_BS"
                    run_case real "$stem:split" split "$stem" "${NATURAL[$stem]}"
                done
                GPU_CONFIG=()
            done ;;
        sweep)
            if [ -n "${NNZ[$SWEEP_MATRIX]:-}" ]; then
                run_case sweep "$SWEEP_MATRIX:split" split "$SWEEP_MATRIX" "$SWEEP_BS"
            else
                note "sweep: matrix $SWEEP_MATRIX not found"
            fi ;;
        generated)
            if have_cli_source --powerlaw && have_cli_source --arrow; then
                run_case generated powerlaw powerlaw "" "$GEN_BS" powerlaw_arg
                run_case generated arrow arrow "" "$GEN_BS" arrow_arg
            else
                note "generated: this bsrmv CLI has no --powerlaw/--arrow source yet: power-law and arrow skipped"
            fi
            if [ -n "$PEERS" ] && [ "$DRY" = 0 ] && ! "$PEERS" --arrow 4,1 --bs 1 --reps 1 --rounds 1 --only bsrmv \
                    >/dev/null 2>&1; then
                note "generated: peers_cpu built without the power-law/arrow generators (libbsrmv.a lacks them)"
            fi ;;
        spmm|mixed)
            # docs/SPMM.md, docs/MIXED.md: one process per bs (the grid is
            # sized per bs); on the GPU the dispatcher's pick and cuSPARSE,
            # on the CPU all threads (spmm) or THREADS (mixed).
            if [ "$set" = spmm ]; then
                bslist=$SPMM_BS what=(--k "$SPMM_K" --layout row,col)
                where=(--threads "$NPROC" --kernels auto)
            else
                bslist=$MIXED_BS what=(--type double,mixed)
                where=(--threads "$THREADS" --kernels auto)
            fi
            [ "$MODE" = gpu ] && where=(--gpu --no-cpu --gpu-kernels auto)
            for bs in ${bslist//,/ }; do
                n=$(grid_n "$bs" "$([ "$set" = spmm ] && echo "$SPMM_MB" || echo "$GRID_MB")")
                if over_budget; then skip "$set" grid27 "$bs" "time budget ${BUDGET} s spent"; continue; fi
                log "$set grid27 bs $bs ($(elapsed) s)"
                # GPU SpMM: the mixed pair beside the double one at SPMM_MIXED_BS
                types=()
                [ "$set" = spmm ] && [[ ",${SPMM_MIXED_BS:-}," == *",$bs,"* ]] && types=(--type double,mixed)
                run "$set" grid27 cli "$BSRMV" bench --grid "$n" --bs "$bs" "${what[@]}" "${types[@]}" \
                    "${where[@]}" --json --no-stream --reps "$(reps_for "$(est_mb grid "$n" "$bs")")"
            done ;;
        complex)
            # docs/COMPLEX.md: one process per (type, bs), the grid sized to
            # ~GRID_MB of that type's values.  GPU: every bsrmv candidate (the
            # table's best kernel) and cuSPARSE's complex paths; CPU: all
            # threads, the real matrix of the same grid and precision beside
            # it (its time over the complex one's is the cost of complex values).
            for t in z c; do
                if [ "$t" = z ]; then bslist=$COMPLEX_Z_BS vb=16 real=double
                else bslist=$COMPLEX_C_BS vb=8 real=float; fi
                if [ "$MODE" = gpu ]; then where=(--type "$t" --gpu --no-cpu --gpu-kernels all)
                else where=(--type "$real,$t" --threads "$NPROC" --kernels auto); fi
                for bs in ${bslist//,/ }; do
                    n=$(grid_n "$bs" "$GRID_MB" "$vb")
                    if over_budget; then skip complex grid27 "$bs" "time budget ${BUDGET} s spent (--type $t)"; continue; fi
                    mb=$(awk -v e="$(est_mb grid "$n" "$bs")" -v vb="$vb" 'BEGIN { printf "%d", e * vb / 8 }')
                    log "complex grid27 --type $t bs $bs (~$mb MB, $(elapsed) s)"
                    run complex grid27 cli "$BSRMV" bench --grid "$n" --bs "$bs" "${where[@]}" --json \
                        --no-stream --reps "$(reps_for "$mb")"
                done
            done ;;
        sym)
            # docs/SYMMETRIC.md: on the CPU full and sym at THREADS, on the GPU
            # the full storage's pick, cuSPARSE and the SYM kernels.
            if ! have_cli_source --sym; then
                note "sym: this bsrmv has no 'bench --sym': symmetric storage skipped"
            else
                where=(--threads "$THREADS")
                [ "$MODE" = gpu ] && where=(--gpu --no-cpu --gpu-kernels sym)
                for bs in ${SYM_BS//,/ }; do
                    n=$(grid_arg "$bs")
                    if over_budget; then skip sym grid27 "$bs" "time budget ${BUDGET} s spent"; continue; fi
                    log "sym grid27 bs $bs ($(elapsed) s)"
                    run sym grid27 cli "$BSRMV" bench --grid "$n" --bs "$bs" --sym "${where[@]}" --json \
                        --no-stream --reps "$(reps_for "$(est_mb grid "$n" "$bs")")"
                done
                for stem in $SYM_MATRICES; do
                    if [ -z "${FILE[$stem]:-}" ]; then note "sym: matrix $stem not found"; continue; fi
                    if over_budget; then skip sym "$stem:promote" 0 "time budget ${BUDGET} s spent"; continue; fi
                    log "sym $stem:promote bs $SYM_BS ($(elapsed) s)"
                    run sym "$stem:promote" cli "$BSRMV" bench --mtx "${FILE[$stem]}" --promote --bs "$SYM_BS" \
                        --sym "${where[@]}" --json --no-stream --reps "$REPS"
                done
            fi ;;
        bridge)
            # The stiffness matrices of `bsrmv bridge`, written as Matrix Market
            # files so that the peers read the same matrix as bsrmv.  Plain
            # .mtx in memory (/dev/shm where there is one), one at a time (up
            # to ~0.8 GB of text): gzip would triple the time of writing them.
            if ! "$BSRMV" bridge --help 2>/dev/null | grep -q -- --write-mtx; then
                note "bridge: this bsrmv has no 'bridge --write-mtx': bridge matrices skipped"
            else
                BRIDGE_DIR=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/bsrmv_bridge.XXXXXX")
                for model in truss frame; do
                    f=$BRIDGE_DIR/bridge_${model}_$BRIDGE_SEGMENTS.mtx
                    if over_budget; then skip bridge "bridge_$model" "" "time budget ${BUDGET} s spent"; continue; fi
                    if [ "$DRY" = 1 ]; then echo "+ $BSRMV bridge --model $model --segments $BRIDGE_SEGMENTS --write-mtx $f"; continue; fi
                    log "bridge: writing $f ($(elapsed) s)"
                    if "$BSRMV" bridge --model "$model" --segments "$BRIDGE_SEGMENTS" --write-mtx "$f" \
                            >>"$SUITE_LOG" 2>&1 && register_mtx "$f" bridge; then
                        stem=$(basename "$f" .mtx)
                        run_case bridge "$stem:split" split "$stem" "${NATURAL[$stem]}"
                    else
                        log "FAILED: bsrmv bridge --model $model --write-mtx (see suite.log)"
                    fi
                    rm -f "$f"
                done
                rm -rf "$BRIDGE_DIR"
            fi ;;
        *) note "unknown set '$set' skipped" ;;
    esac
done

# ---- meta, report ---------------------------------------------------------------------
END=$(date +%s)
# Cores used by other processes on average during the run: the machine's busy
# time minus the CPU time of the suite's children (bash's `times`, 2nd line;
# run in this shell: inside $(...) it would count the subshell's children).
TIMES_FILE=$(mktemp)
times >"$TIMES_FILE"
OWN_S=$(awk 'NR == 2 {s = 0; for (i = 1; i <= 2; i++) {split($i, a, /[ms]/); s += a[1] * 60 + a[2]}; print s}' "$TIMES_FILE")
rm -f "$TIMES_FILE"
OTHER_LOAD=$(awk -v b0="$BUSY_START" -v b1="$(busy_s)" -v own="$OWN_S" -v dt=$((END - START)) \
    'BEGIN { v = dt > 0 ? (b1 - b0 - own) / dt : 0; printf "%.2f", v < 0 ? 0 : v }')
{
    pv() { "$@" 2>/dev/null | head -1 || true; }
    meta_common
    printf '"llc":"%s","thp":"%s","gpu":"%s",' \
        "$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo '?')" \
        "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')" "$(json_esc "$GPU_NAME")"
    printf '"load_start":"%s","load_end":"%s","other_load":%s,"budget_s":%d,"failed_commands":%d,' \
        "$LOAD_START" "$(cut -d' ' -f1-3 /proc/loadavg)" "$OTHER_LOAD" "$BUDGET" "$FAILED"
    printf '"threads":"%s","scale_threads":"%s","reps":%d,"rounds":%d,"max_mb":%d,"grid_mb":%d,' \
        "$([ "$MODE" = gpu ] && echo "$SCALE_THREADS (scaling set only)" || echo "$THREADS")" "$SCALE_THREADS" "$REPS" "$ROUNDS" "$MAX_MB" "$GRID_MB"
    [ "$MODE" = gpu ] && printf '"gpu_all_kernel_sets":"%s","gpu_traffic":"%s","gpu_real_types":"%s","gpu_real_orders":"%s",' \
        "$GPU_ALL_KERNEL_SETS" "$GPU_TRAFFIC" "$GPU_REAL_TYPES" "$GPU_REAL_ORDERS"
    printf '"env":"GLIBC_TUNABLES=%s OPENBLAS_NUM_THREADS=1",' "$GLIBC_TUNABLES"
    printf '"peers":{"petsc":"%s","mpirun":"%s","librsb":"%s","scipy":"%s"},' \
        "$([ $HAVE_PETSC = 1 ] && pkg-config --modversion PETSc)" \
        "$([ $HAVE_MPI = 1 ] && json_esc "$(pv mpirun --version)")" \
        "$([ $HAVE_RSB = 1 ] && pkg-config --modversion librsb)" \
        "$([ $HAVE_SCIPY = 1 ] && "$PY" -c 'import scipy, numpy; print(scipy.__version__, "numpy", numpy.__version__)')"
    meta_notes
} >"$OUT_DIR/meta.json"
log "done in $((END - START)) s, $FAILED failed command(s), other processes used $OTHER_LOAD cores on average; results in $OUT_DIR"

# With --out the run is the caller's: its plots and report go beside it, and
# the tracked docs/RESULTS.md, docs/results/plots/ and README stay as they are.
if [ -n "$OUT_GIVEN" ]; then
    PLOT_ARGS=("$OUT_DIR" --out "$OUT_DIR/plots")
    REPORT_ARGS=(--"$MODE" "$OUT_DIR" --out "$OUT_DIR/RESULTS.md" --readme '')
else
    PLOT_ARGS=() REPORT_ARGS=()
fi
if [ "$REPORT" = 1 ] && [ "$DRY" = 0 ]; then
    if [ "$HAVE_MPL" = 1 ]; then
        "$PY" bench/plot.py "${PLOT_ARGS[@]}" || log "plot.py failed"
    else
        log "no matplotlib here: plots skipped (run bench/plot.py where it is installed)"
    fi
    if command -v "$PY" >/dev/null; then
        "$PY" bench/report.py "${REPORT_ARGS[@]}" || log "report.py failed"
    fi
fi
[ "$MODE" = gpu ] && [ "$DRY" = 0 ] &&
    log "report: copy $OUT_DIR to bench/results/ on the development machine, then run bench/plot.py and bench/report.py there"
[ "$DRY" = 1 ] && rm -rf "$OUT_DIR"
[ "$FAILED" = 0 ]
