# shellcheck shell=bash
# The matrix sets of bench/suite.sh: the one place that says what is measured
# and how large.  Sourced by suite.sh after MODE (cpu|gpu), QUICK (0|1) and
# NPROC are set; every value can be overridden from the environment.
#
# set        what                                                   source
# grid       27-point grids, values ~GRID_MB per bs (past the caches) --grid N
# real       every matrix of the matrices directory, promoted to     --mtx F --promote
#            each REAL_PROMOTE_BS (KSPARSE, Abdelfattah et al. 6.2),
#            and split at its natural bs (see natural_bs in suite.sh) --mtx F --split
# sweep      SWEEP_MATRIX split at every bs of SWEEP_BS, zero-filled  --mtx F --split
#            (Eberhardt & Hoemmen Fig. 9)
# generated  power-law block rows and an arrow (dense first rows and  --powerlaw, --arrow
#            columns), values ~GEN_MB per bs
# bridge     the bridge stiffness matrices (Evtushenko 001_*.txt; `bsrmv
#            bridge --write-mtx`): truss (bs 2) and frame (bs 3) models,
#            BRIDGE_SEGMENTS deck panels (~100 MB of values each at the
#            default), split at their natural bs like the real matrices
# scaling    grids of GRID_MB at SCALE_BS, bsrmv only, threads 1,2,4,..,NPROC
#            with the stream bandwidth per thread count (Fig. 10)
# sym        symmetric storage against the full storage of the same    --grid N --sym,
#            matrix (docs/SYMMETRIC.md): SPD 27-point grids of GRID_MB  --mtx F --promote --sym
#            at SYM_BS and the symmetric SYM_MATRICES promoted to SYM_BS
# spmm       several vectors at once (docs/SPMM.md): 27-point grids of    --grid N --k LIST
#            ~SPMM_MB at SPMM_BS, k in SPMM_K, both layouts: bsrmv_spmm  --layout row,col
#            against k separate SpMVs, on the GPU also cusparseSpMM
#            (BSR and CSR algorithms) and at SPMM_MIXED_BS the mixed
#            pair (float values, double vectors); vectors per second
# mixed      mixed precision (docs/MIXED.md): float values with double  --grid N
#            vectors against double/double, grids of GRID_MB at MIXED_BS --type double,mixed
# complex    complex values (docs/COMPLEX.md): grids of ~GRID_MB of      --grid N --type z|c
#            complex values, complex double at COMPLEX_Z_BS and complex
#            float at COMPLEX_C_BS; on the GPU every bsrmv candidate and
#            the cuSPARSE complex paths, on the CPU all threads with the
#            real matrix of the same grid and precision beside it
#            (--type double,z or float,c)
#
# A (matrix, bs) whose values would exceed MAX_MB is skipped and listed as
# such in the results (skipped.jsonl, RESULTS.md).

if [ "$MODE" = gpu ]; then
    # H100/H200: 50-60 MB of L2; 512 MB of values stream from HBM.  The whole
    # GPU run (one CLI process per matrix, no CPU timing but the scaling
    # set) is ~6.5-8 min on an H100: the estimate is in suite.sh's header.
    : "${GRID_BS:=1,2,3,4,6,8,12,16,24,32}"
    : "${GRID_MB:=512}"
    : "${MAX_MB:=1024}"
    : "${GEN_MB:=512}"
    : "${REPS:=10}"          # CPU calls per measurement; GPU: max(REPS, 50)
    : "${ROUNDS:=1}"
    # SpMM: 5x the L2; 7 bs x 8 (k, layout) cases x 7 paths, ~15 s per bs
    # (grid, reference, cuSPARSE's CSR expansion, checks): ~2 min
    : "${SPMM_BS:=2,3,4,5,6,7,8}"
    : "${SPMM_MB:=256}"
    : "${SPMM_K:=2,4,8,16}"
    # the mixed pair's SpMM (float values, double vectors) beside the
    # double one at these bs: ~10 s per bs (no cuSPARSE path)
    : "${SPMM_MIXED_BS:=3,6}"
    # complex: 14 processes of ~2-4 s (CUDA start-up, a ~512 MB grid, every
    # candidate, 2-5 cuSPARSE paths): ~40 s
    : "${COMPLEX_Z_BS:=2,3,4,5,6,7,8}"
    : "${COMPLEX_C_BS:=2,3,4,5,6,7,8}"
else
    # 32 MiB L3 here: 320 MB of values is 10x the cache (bsrmv bench --example).
    : "${GRID_BS:=1,2,3,4,6,8,16}"
    : "${GRID_MB:=320}"
    : "${MAX_MB:=256}"
    : "${GEN_MB:=256}"
    : "${REPS:=10}"
    : "${ROUNDS:=2}"         # peers_cpu and scipy rounds (order rotating)
    # SpMM on all threads: 4x the L3, ~15 s per bs here
    : "${SPMM_BS:=2,3,4,6,8}"
    : "${SPMM_MB:=128}"
    : "${SPMM_K:=4,8}"
    # complex double beside double on all threads, ~5 s per bs here
    : "${COMPLEX_Z_BS:=3,6}"
    : "${COMPLEX_C_BS:=}"
fi
: "${MIXED_BS:=2,3,4,6,8}"
: "${REAL_PROMOTE_BS:=2,3,4,6,8,12,16,24,32}"
: "${REAL_MATRICES:=}"       # empty: every *.mtx.gz / *.mtx of the directory
: "${SWEEP_MATRIX:=bcsstk16}"
: "${SWEEP_BS:=$(seq -s, 2 32)}"
: "${GEN_BS:=2,4,8}"
: "${POWERLAW_MEAN:=16}"     # mean blocks per block row
: "${POWERLAW_MAXLEN:=4096}" # longest block row
: "${POWERLAW_EXP:=2.0}"     # tail exponent
: "${ARROW_DENSE:=4}"        # dense block rows and columns
: "${SCALE_BS:=1,3,8}"
: "${BRIDGE_SEGMENTS:=190000}" # truss: ~0.53 KB of values per panel, frame ~0.8 KB
: "${SYM_BS:=3,4,6}"
: "${SYM_MATRICES:=bcsstk16 bcsstk25 s1rmq4m1 crystm01 msc04515}"


if [ "$QUICK" = 1 ]; then
    BRIDGE_SEGMENTS=20000
    # A first look: three matrices, a few block sizes, smaller grids.
    GRID_BS=1,3,8
    # (the GPU keeps larger matrices: its L2 is 50-60 MB)
    GRID_MB=$([ "$MODE" = gpu ] && echo 256 || echo 128)
    MAX_MB=$([ "$MODE" = gpu ] && echo 512 || echo 160)
    GEN_MB=$GRID_MB
    GEN_BS=4
    REAL_PROMOTE_BS=2,4,8,16
    REAL_MATRICES=${QUICK_MATRICES:-bcsstk16 s1rmq4m1 nasa2910}
    SWEEP_BS=2,3,4,5,6,8,12,16,24,32
    SCALE_BS=3
    SYM_BS=3
    SYM_MATRICES=bcsstk16
    SPMM_BS=3
    MIXED_BS=3
    COMPLEX_Z_BS=3
    COMPLEX_C_BS=$([ "$MODE" = gpu ] && echo 3)
    REPS=5
    ROUNDS=1
fi

# Thread counts (CPU mode): every measurement runs at 1 and all threads
# (peers with threads too); the scaling set, in both modes, walks the powers
# of two up to NPROC.
: "${THREADS:=$( [ "$NPROC" -gt 1 ] && echo "1,$NPROC" || echo 1 )}"
: "${SCALE_THREADS:=$(t=1; l=1; while [ $((t * 2)) -lt "$NPROC" ]; do t=$((t * 2)); l+=",$t"; done
                      [ "$NPROC" -gt 1 ] && l+=",$NPROC"; echo "$l")}"

# GPU: the sets that time every bsrmv GPU kernel (per-kernel data of the
# GB/s-vs-bs plots); the others time the dispatcher's pick and cuSPARSE.
: "${GPU_ALL_KERNEL_SETS:=grid,sweep}"
# the GPU timing modes of the other sets (bench --gpu-traffic): solver-like, then back to back
: "${GPU_TRAFFIC:=cg,0}"
# GPU: the value types and block orders of the real set (one CLI process per
# matrix and order, the types in it); the other sets are double, column-major
: "${GPU_REAL_TYPES:=double,float}"
: "${GPU_REAL_ORDERS:=col row}"

# Sets in the order they run: when a time budget is given (--budget, the
# GPU default), what does not fit is skipped and listed, so the cheap and
# central ones come first.
: "${SETS:=grid,spmm,mixed,complex,scaling,sweep,real,generated,bridge,sym}"
