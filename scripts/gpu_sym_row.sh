#!/bin/bash
# Row-major against column-major blocks in symmetric storage on one GPU
# machine, in one call (the SYM kernels' compile-time-bs mappings,
# docs/SYMMETRIC.md): scripts/gpu_sym.sh with a build in build-gpu (Release,
# sm_90), the symmetric GPU tests (real, complex) and test_sym, then GPU
# records only, both orders, of SPD 27-point grids of ~400 MB at bs 3, 4
# and 6 and promoted bcsstk16 at bs 3, 4 and 6.  Under $OUT: summary.txt
# (every record, then the symmetric storage against the full storage's pick
# per matrix, bs and order), sym_row.jsonl (the JSON lines), stdout.txt and
# logs.tar.gz (build, test and bench logs): few files, as a device call
# brings back.  gpu_sym.sh's variables apply (TARGETS= builds everything).
cd "$(dirname "$0")/.." || exit 1
FINAL=${OUT:-/tmp/gpu_sym_row_out}
mkdir -p "$FINAL"
WORK=$(mktemp -d)
export OUT=$WORK
export BUILD="${BUILD:-build-gpu}"
export TARGETS="${TARGETS-bsrmv_cli test_gpu_sym test_gpu_complex test_sym}"
export TESTS="${TESTS:-^(test_gpu_sym|test_gpu_complex|test_sym)\$}" CTEST_J="${CTEST_J:-3}"
export GRIDS="${GRIDS:-58:3 48:4 38:6}" MATRICES="${MATRICES:-bcsstk16}" MTX_BS="${MTX_BS:-3,4,6}"
export ORDERS="${ORDERS:-row col}" SKIP_CPU="${SKIP_CPU-1}"
t0=$(date +%s)
scripts/gpu_sym.sh 2>&1 | tee "$FINAL/stdout.txt"
echo "== total $(( $(date +%s) - t0 )) s" | tee -a "$FINAL/stdout.txt"
cp "$WORK/summary.txt" "$FINAL/" 2>/dev/null
cat "$WORK"/*.jsonl >"$FINAL/sym_row.jsonl" 2>/dev/null
tar czf "$FINAL/logs.tar.gz" -C "$WORK" --exclude='*.jsonl' .
rm -rf "$WORK"
