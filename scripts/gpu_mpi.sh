#!/usr/bin/env bash
# Distributed SpMV on GPU ranks, for a machine with 2, 4 or 8 GPUs,
# OpenMPI and NCCL, in phases (each fits a 10-minute command; the build directory
# build-gpu-mpi/ and the records in it carry over between calls):
#   build    configure and build (CUDA + MPI + NCCL), -j16
#   test     the distributed tests: CPU ranks 1-4, GPU ranks (mpirun -n 2)
#   sanitize the GPU-rank test under compute-sanitizer memcheck (NCCL probes
#            kernels it was not built for: API errors are not reported)
#   strong   27-point grids of >= 8 GB at bs 3 and bs 6 and a power-law
#            matrix at bs 4, on 1, 2, 4 and 8 GPUs, as many as there are
#            (bsrmv_mpi_bench --gpu)
#   weak     the bs 3 and bs 6 grids stretched along z by the GPU count on
#            2, 4 and 8 GPUs (each GPU keeps the 1-GPU size)
#   ksparse  the KSPARSE paper's single-process multi-GPU SpMV on the strong
#            matrices, on the same GPU counts (bsrmv_ksparse_multigpu)
#   solve    distributed BiCGSTAB with block Jacobi on GPU ranks, reservoir
#            120^3 with 4 components, on the same GPU counts (bsrmv_mpi_bench --gpu
#            --solve; 200 iterations, median of 3 solves): time per
#            iteration and efficiency against the bandwidth bound (about a
#            minute)
# No phase named: all of them (about 16 minutes).  Every call writes its
# logs, all records so far (bench.jsonl) and the summary table
# (summary.txt: scaling, hidden exchange) under $OUT.  A step that fails is
# logged and the rest go on; the exit status says whether any failed.
#
# Under a 10-minute limit per command, one phase group per call:
#   OUT=/some/dir scripts/gpu_mpi.sh build       (again if it ran out of time:
#                                                 the build resumes)
#   OUT=/some/dir scripts/gpu_mpi.sh test sanitize
#   OUT=/some/dir scripts/gpu_mpi.sh strong
#   OUT=/some/dir scripts/gpu_mpi.sh weak ksparse
#   OUT=/some/dir scripts/gpu_mpi.sh solve
# (default OUT: ./gpu_mpi_out)
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-$ROOT/gpu_mpi_out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
BUILD=build-gpu-mpi
FAILED=0
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"

note() { echo "$*" | tee -a "$SUMMARY"; }
step() { # step NAME TIMEOUT_S CMD...: runs CMD, log in $OUT/NAME.log
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    note "$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" $((SECONDS - t0)))"
    [ "$rc" -eq 0 ] || FAILED=1
    return "$rc"
}

PHASES=${*:-build test sanitize strong weak ksparse solve}
RECORDS=$ROOT/$BUILD/gpu_mpi_records.jsonl
{ nvidia-smi; nvidia-smi topo -m; mpirun --version; ls -l /usr/include/nccl.h /usr/lib/x86_64-linux-gnu/libnccl* 2>&1; } \
    > "$OUT/machine.txt" 2>&1
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
note "phases: $PHASES; GPUs: $NGPU"
has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }

if has build; then
    step configure 120 cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DBSRMV_CUDA=ON -DBSRMV_MPI=ON
    grep -q 'BSRMV_NCCL_LIBRARY:FILEPATH=.*nccl' $BUILD/CMakeCache.txt || note "NCCL not found by CMake"
    step build 450 cmake --build $BUILD -j16 --target bsrmv_mpi_bench bsrmv_ksparse_multigpu \
        test_mpi test_mpi_gpu
fi
[ -x $BUILD/bsrmv_mpi_bench ] || { note "not built: run the build phase first"; exit 1; }

if has test; then
    step test_cpu_ranks 300 bash -c "cd $BUILD && ctest -R 'test_mpi_[1-4]' --output-on-failure"
    step test_gpu_ranks 300 mpirun -n 2 --bind-to none $BUILD/tests/mpi/test_mpi_gpu
fi
if has sanitize; then
    if command -v compute-sanitizer > /dev/null; then
        step test_gpu_sanitizer 420 mpirun -n 2 --bind-to none compute-sanitizer --tool memcheck --report-api-errors no \
            --error-exitcode 9 $BUILD/tests/mpi/test_mpi_gpu
    else
        note "compute-sanitizer not found: skipped"
    fi
fi

bench() { # bench NAME RANKS ARGS...
    local name=$1 np=$2
    shift 2
    step "$name" 300 mpirun -n "$np" --bind-to none $BUILD/bsrmv_mpi_bench --gpu --reps 50 "$@" &&
        grep '^{' "$OUT/$name.log" >> "$RECORDS"
}
ksparse() { # ksparse NAME GPUS ARGS...
    local name=$1 g=$2
    shift 2
    step "$name" 300 $BUILD/bsrmv_ksparse_multigpu --gpus "$g" --reps 50 "$@" &&
        grep '^{' "$OUT/$name.log" >> "$RECORDS"
}
# >= 8 GB of matrix: bs 3, 160^3 nodes (8.4 GB); bs 6, 102^3 nodes (8.4 GB);
# power law: 4M block rows, 16 blocks each on average, bs 4 (8.4 GB).
# STRONG3=N and STRONG6=N take larger strong-scaling grids (308 and 196:
# ~60 GB, half an H200); the weak runs keep 8.4 GB per GPU.
STRONG3=${STRONG3:-160} STRONG6=${STRONG6:-102}
COUNTS=""
for np in 1 2 4 8; do [ "$np" -le "$NGPU" ] && COUNTS="$COUNTS $np"; done
for np in $COUNTS; do
    if has strong; then
        bench strong_bs3_np$np $np --grid "$STRONG3" --bs 3
        bench strong_bs6_np$np $np --grid "$STRONG6" --bs 6
        bench powerlaw_bs4_np$np $np --powerlaw 4000000,16,40000 --bs 4
    fi
    if has ksparse; then
        ksparse ksparse_bs3_g$np $np --grid 160 --bs 3
        ksparse ksparse_bs6_g$np $np --grid 102 --bs 6
        ksparse ksparse_pl_bs4_g$np $np --powerlaw 4000000,16,40000 --bs 4
    fi
done
if has weak; then
    for np in $COUNTS; do
        [ "$np" -ge 2 ] || continue
        bench weak_bs3_np$np "$np" --grid 160,160,$((160 * np)) --bs 3
        bench weak_bs6_np$np "$np" --grid 102,102,$((102 * np)) --bs 6
    done
fi
if has solve; then
    for np in $COUNTS; do
        step solve_bicgstab_np$np 150 mpirun -n "$np" --bind-to none $BUILD/bsrmv_mpi_bench --gpu \
            --solve bicgstab --reservoir 120,120,120 --bs 4 --max-iter 200 --repeat 3 &&
            grep '^{' "$OUT/solve_bicgstab_np$np.log" >> "$RECORDS"
    done
fi
BENCH=$OUT/bench.jsonl
touch "$RECORDS"
cp "$RECORDS" "$BENCH"

# Strong scaling, weak efficiency and the hidden exchange from the records.
python3 - "$BENCH" >> "$SUMMARY" 2>&1 << 'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
dist = {(r['matrix'], r['bs'], r['ranks']): r for r in recs if r['bench'] == 'mpi_spmv'}
ks = {(r['matrix'], r['bs'], r['gpus'], r['x_broadcast']): r for r in recs
      if r['bench'] == 'ksparse_multigpu'}
def f(v, w, d):
    return f"{v:{w}.{d}f}" if isinstance(v, (int, float)) else f"{'-':>{w}}"
print("\nmatrix                       bs ranks      ms   GB/s  halo_MB  exch_ms  prod_ms  "
      "spmv/prod  hidden")
for (m, bs, p), r in sorted(dist.items()):
    print(f"{m:28s} {bs:2d} {p:5d} {f(r['ms'], 7, 3)} {f(r['gbps'], 6, 0)} "
          f"{f(r['halo_bytes'] / 1e6, 8, 3)} {f(r['exchange_ms'], 8, 3)} "
          f"{f(r['products_ms'], 8, 3)} {f(r['ratio_to_products'], 10, 3)} "
          f"{f(r['hidden_overlap'], 7, 2)}")
print("\nstrong scaling (time 1 rank / time P ranks):")
for (m, bs, p), r in sorted(dist.items()):
    if p > 1 and (m, bs, 1) in dist:
        print(f"  halo design  {m:28s} bs {bs} P {p}: {dist[(m, bs, 1)]['ms'] / r['ms']:.3f}x")
for (m, bs, g, xb), r in sorted(ks.items()):
    if g > 1 and (m, bs, 1, xb) in ks:
        print(f"  KSPARSE      {m:28s} bs {bs} P {g} {'x broadcast' if xb else 'x replicated'}: "
              f"{ks[(m, bs, 1, xb)]['ms'] / r['ms']:.3f}x")
print("\nweak scaling efficiency (time 1 rank / time P ranks at P times the size):")
for (m, bs, p), r in sorted(dist.items()):
    edge = {3: 160, 6: 102}.get(bs)
    if p > 1 and edge and m.endswith(f"x{edge * p}") and (f"grid27_{edge}x{edge}x{edge}", bs, 1) in dist:
        print(f"  {m} bs {bs} P {p}: {dist[(f'grid27_{edge}x{edge}x{edge}', bs, 1)]['ms'] / r['ms']:.3f}")
sv = {(r['matrix'], r['method'], r['bs'], r['ranks']): r for r in recs
      if r['bench'] == 'mpi_solve' and r.get('backend') == 'gpu'}
if sv:
    print("\ndistributed GPU solve (block Jacobi; bound = bytes per iteration / summed read "
          "bandwidth):")
    print("matrix                   method    bs ranks  iters  ms/iter   GB/s  read_GB/s  "
          "bound_ms  efficiency  speedup")
for (m, me, bs, p), r in sorted(sv.items()):
    one = sv.get((m, me, bs, 1))
    sp = one['ms_per_iteration'] / r['ms_per_iteration'] if one else None
    print(f"{m:24s} {me:8s} {bs:3d} {p:5d} {r['iterations']:6d} "
          f"{f(r['ms_per_iteration'], 8, 3)} {f(r['gbps'], 6, 0)} {f(r['read_gbps'], 10, 0)} "
          f"{f(r['bound_ms_per_iteration'], 9, 3)} {f(r['efficiency'], 11, 3)} {f(sp, 8, 3)}")
EOF
note "records: $BENCH"
exit $FAILED
