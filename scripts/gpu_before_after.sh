#!/bin/bash
# Before/after of the GPU grid table on one device, in one call: the code
# before a change (a `git archive` unpacked in ab_base/, made on the
# development machine:  mkdir ab_base && git archive BASE | tar -x -C ab_base)
# against the working tree, case by case interleaved (scripts/gpu_ab.sh),
# then the quick GPU tests, the examples (spmv_gpu on the device) and the
# install test of the working tree.  Output under $OUT: ab.jsonl, the table
# (ab_table.txt), build and test logs.  About 8 minutes on an H100.
set -u
OUT=${OUT:-/tmp/gpu_before_after}
mkdir -p "$OUT"
[ -d ab_base ] || { echo "no ab_base/: unpack the base commit there first" >&2; exit 2; }
export OUT
export CASES=${CASES:-"--grid 71 --bs 2
--grid 55 --bs 3
--grid 46 --bs 4
--grid 42 --bs 5
--grid 35 --bs 6
--grid 32 --bs 7
--grid 29 --bs 8
--grid 22 --bs 12
--grid 18 --bs 16
--grid 14 --bs 24
--grid 12 --bs 32
--grid 46 --bs 4 --type float
--grid 35 --bs 6 --type float --order row
--powerlaw 1100000,8,20000 --bs 2
--powerlaw 290000,8,20000 --bs 4
--powerlaw 75000,8,20000 --bs 8"}
VARIANTS="base@ab_base: new:" KERNELS=${KERNELS:-auto} bash scripts/gpu_ab.sh | tee "$OUT/ab_table.txt"
# the working tree's quick GPU tests and the examples, from the A/B build
( cd build-ab-new && cmake . -DBUILD_TESTING=ON >/dev/null &&
  cmake --build . -j "$(nproc)" >"$OUT/test_build.log" 2>&1 &&
  ctest -R "test_gpu_quick|test_gpu_solve|example_|install_consumer" --output-on-failure ) \
    >"$OUT/ctest.log" 2>&1
tail -8 "$OUT/ctest.log"
