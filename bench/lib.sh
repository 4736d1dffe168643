# shellcheck shell=bash
# Helpers shared by bench/suite.sh and bench/cpu_peers.sh (sourced).
# The caller sets LOG_TAG, INSTALL (0/1) and may read NOTES (the messages of
# note, for the results header).

NOTES=()
log() { echo "$LOG_TAG: $*" >&2; }
note() { NOTES+=("$*"); log "$*"; }

IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1
APT_UPDATED=0

# apt_get PKG PKGCONFIG_NAME: 0 if the pkg-config module is (now) there.
# Installs with apt-get only as root, after apt-cache shows a candidate.
apt_get() {
    local pkg=$1 pc=$2 cand
    pkg-config --exists "$pc" 2>/dev/null && return 0
    if [ "$INSTALL" = 0 ]; then
        note "$pkg: not installed (--no-install)"
        return 1
    fi
    if [ "$IS_ROOT" != 1 ] || ! command -v apt-get >/dev/null; then
        note "$pkg: not installed and cannot apt-get (need root and apt)"
        return 1
    fi
    cand=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if { [ -z "$cand" ] || [ "$cand" = "(none)" ]; } && [ "$APT_UPDATED" = 0 ]; then
        log "apt-get update (no candidate for $pkg yet)"
        timeout 120 apt-get update -qq >/dev/null 2>&1 || true
        APT_UPDATED=1
        cand=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
    fi
    if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
        note "$pkg: no installation candidate in the apt sources"
        return 1
    fi
    log "apt-get install -y $pkg ($cand)"
    if ! DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y --no-install-recommends \
            "$pkg" >"/tmp/bench_apt_$pkg.log" 2>&1; then
        note "$pkg: apt-get install failed (see /tmp/bench_apt_$pkg.log)"
        return 1
    fi
    pkg-config --exists "$pc"
}

# pip_get MODULE [PIP_NAME]: 0 if python can import MODULE (now).
pip_get() {
    local mod=$1 pkg=${2:-$1}
    if ! command -v "$PY" >/dev/null; then
        note "$pkg: no $PY"
        return 1
    fi
    "$PY" -c "import $mod" 2>/dev/null && return 0
    if [ "$INSTALL" = 0 ]; then
        note "$pkg: not importable (--no-install)"
        return 1
    fi
    log "pip install $pkg"
    if timeout 600 "$PY" -m pip install -q "$pkg" >"/tmp/bench_pip_$pkg.log" 2>&1 &&
       "$PY" -c "import $mod" 2>/dev/null; then
        return 0
    fi
    note "$pkg: not importable and pip install failed (see /tmp/bench_pip_$pkg.log)"
    return 1
}
