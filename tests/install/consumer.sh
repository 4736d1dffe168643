#!/bin/sh
# Install the build into a fresh prefix, check what its shared library
# exports, then build examples/spmv_cpu.c against it as a user would: with
# CMake (find_package, the shared and the static library; the distributed
# library where it is installed) and with pkg-config (no --static), and run
# each.
#   consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR C_COMPILER
set -eu
build=$1 src=$2 work=$3 libdir=$4 cc=$5
expect="y = 16 20 20 22"
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/bsrmv.h" && test -f "$prefix/include/bsrmv_version.h"
ls "$prefix/$libdir"/libbsrmv.so.* >/dev/null
"$prefix/bin/bsrmv" --version

echo "== exported symbols"
# The shared library exports the API of the installed headers and nothing
# else: every dynamic symbol it defines is a bsrmv_ name that a header
# declares (internal helpers such as bsrmv_fail are hidden).
if command -v nm >/dev/null; then
    syms=$(nm -D --defined-only "$prefix/$libdir/libbsrmv.so" | awk 'NF >= 3 {print $3}')
    n=0
    for s in $syms; do
        case $s in
        bsrmv_*) ;;
        *) echo "exported outside the bsrmv_ prefix: $s"; exit 1 ;;
        esac
        if ! grep -qw "$s" "$prefix/include"/bsrmv*.h; then
            echo "exported but in no installed header: $s"
            exit 1
        fi
        n=$((n + 1))
    done
    [ "$n" -gt 0 ]
    echo "$n symbols, all bsrmv_ and declared in the installed headers"
else
    echo "nm not found: the export check skipped"
fi

echo "== CMake consumer"
cmake -S "$src/tests/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DBSRMV_EXAMPLE="$src/examples/spmv_cpu.c" >"$work/cmake.log"
cmake --build "$work/cmake" >>"$work/cmake.log"
for v in shared static; do
    out=$("$work/cmake/consumer_$v")
    echo "consumer_$v: $out"
    [ "$out" = "$expect" ]
done
# an install with the distributed library has its CMake target too
if [ -f "$prefix/include/bsrmv_mpi.h" ]; then
    test -x "$work/cmake/consumer_mpi"
    echo "consumer_mpi: built against bsrmv::bsrmv_mpi"
fi

echo "== pkg-config consumer"
if ! command -v pkg-config >/dev/null; then
    echo "pkg-config not found: that part skipped"
    exit 77
fi
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs bsrmv)
echo "pkg-config --cflags --libs bsrmv: $flags"
# shellcheck disable=SC2086
"$cc" -o "$work/consumer_pc" "$src/examples/spmv_cpu.c" $flags
out=$(LD_LIBRARY_PATH="$prefix/$libdir" "$work/consumer_pc")
echo "consumer_pc: $out"
[ "$out" = "$expect" ]
