#!/bin/sh
# Builds the Python package (python/) into a virtual environment under
# build-python/ and runs its tests.  Part of `make test`; skipped with a
# message when there is no Python 3.9+.  The package is built CPU-only here
# (BSRMV_PY_CUDA=AUTO builds the CUDA backend too where nvcc is found), with
# one compile-time CPU block size: these tests check the binding, ctest the
# kernels (`pip install ./python` builds them all).
set -e
cd "$(dirname "$0")/.."
root=$(pwd)
py=${PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    echo "bsrmv: no Python 3.9+ ($py): Python package tests skipped"
    exit 0
fi
# Debian's python3 keeps venv (ensurepip) and the headers in separate packages.
apt_install() {
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bsrmv: installing $*"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
    else
        echo "bsrmv: missing packages for the Python build: $* (e.g. sudo apt-get install -y $*)" >&2
        exit 1
    fi
}
"$py" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || apt_install python3-dev
venv=$root/build-python/venv
if [ ! -x "$venv/bin/python" ]; then
    if ! "$py" -m venv "$venv" >/dev/null 2>&1; then
        rm -rf "$venv"
        apt_install python3-venv
        "$py" -m venv "$venv"
    fi
fi
vpy=$venv/bin/python
"$vpy" -m pip install -q --disable-pip-version-check numpy scipy pytest nanobind scikit-build-core
# bsrmv.mpi's tests run where MPI is (the package then builds it): mpi4py
# builds against the same MPI's mpicc
if command -v mpicc >/dev/null 2>&1 && command -v mpiexec >/dev/null 2>&1; then
    "$vpy" -m pip install -q --disable-pip-version-check mpi4py
fi
"$vpy" -m pip install -q --disable-pip-version-check --no-build-isolation \
    -C cmake.define.BSRMV_CUDA="${BSRMV_PY_CUDA:-OFF}" -C cmake.define.BSRMV_CPU_FEW_SIZES=ON \
    -C build-dir="$root/build-python/{wheel_tag}" ./python
cd python
# pytest: 0 all passed, 1 failures, 5 no tests collected (an error here too)
status=0
"$vpy" -m pytest -q -p no:cacheprovider tests || status=$?
if [ "$status" = 5 ]; then
    echo "bsrmv: pytest collected no tests" >&2
fi
exit "$status"
