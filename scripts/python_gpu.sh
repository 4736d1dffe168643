#!/bin/bash
# GPU machine (no network; nanobind, scikit-build-core, CuPy and PyTorch
# installed): builds the Python package with the CUDA backend, runs the
# Python tests (the GPU ones included) and the GPU benchmark (bsrmv vs CuPy's
# CSR @ and PyTorch's BSR addmv on 27-point grids, bs 2,3,4,6,8).
# Everything it prints also lands under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build-python/out}
mkdir -p "$OUT"
py=${PYTHON:-python3}
site=$PWD/build-python/gpu-site
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-16}
# installs into its own --target folder only, never into the system site
export PIP_BREAK_SYSTEM_PACKAGES=1

{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version | tail -1
    "$py" - <<'PY'
import importlib
for m in ("numpy", "scipy", "pytest", "nanobind", "scikit_build_core", "cupy", "torch"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "MISSING", type(e).__name__)
PY
} 2>&1 | tee "$OUT/env.txt"

rm -rf "$site"
echo "== build (BSRMV_CUDA=ON, -j$CMAKE_BUILD_PARALLEL_LEVEL)"
start=$(date +%s)
if ! "$py" -m pip install --no-build-isolation --no-deps --no-index --target "$site" \
        -C cmake.define.BSRMV_CUDA=ON -C build-dir="$PWD/build-python/gpu-{wheel_tag}" \
        ./python >"$OUT/build.log" 2>&1; then
    tail -60 "$OUT/build.log"
    echo "python_gpu: build failed (full log: build.log)"
    exit 1
fi
echo "built in $(( $(date +%s) - start )) s"
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
"$py" -c "import bsrmv.gpu as g; print('bsrmv sees', g.device_count(), 'device(s)')" \
    2>&1 | tee -a "$OUT/env.txt"

status=0
echo "== tests"
if "$py" -c "import pytest, scipy" 2>/dev/null; then
    (cd python && "$py" -m pytest -q -p no:cacheprovider -rs tests) 2>&1 | tee "$OUT/pytest.txt"
    status=${PIPESTATUS[0]}
else
    echo "pytest or scipy missing here: tests not run" | tee "$OUT/pytest.txt"
    status=1
fi

echo "== benchmark"
GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$py" python/bench/bench_gpu.py 2>&1 \
    | tee "$OUT/bench_gpu.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$py" python/bench/bench_gpu.py --dtype float32 \
    --bs 2,4,8 2>&1 | tee -a "$OUT/bench_gpu.txt"
echo "== CPU call overhead on this host"
GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$py" python/bench/bench_cpu.py --skip-large 2>&1 \
    | tee "$OUT/bench_cpu_overhead.txt"
exit "$status"
