#!/bin/sh
# Installs what the build needs from the distribution's packages, or says
# exactly what is missing when it cannot.
set -e
missing=""
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
# pkg-config: the install test builds a consumer with it
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
# MPI is optional (distributed matrices): installed where we can, else noted.
optional=""
command -v mpiexec >/dev/null 2>&1 || optional="$optional openmpi-bin"
command -v mpicc >/dev/null 2>&1 || optional="$optional libopenmpi-dev"
if [ -n "$optional" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        missing="$missing$optional"
    else
        echo "bsrmv: optional packages missing:$optional (distributed matrices are left out)" >&2
    fi
fi
[ -n "$missing" ] || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bsrmv: installing:$missing"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
else
    echo "bsrmv: missing packages:$missing (install them, e.g. sudo apt-get install -y$missing)" >&2
    exit 1
fi
