#!/bin/sh
# The optional checks (make fuzz, make test-tsan) need clang, libFuzzer and
# LLVM's OpenMP runtime with Archer.  Installs them where apt-get runs as
# root; elsewhere says what is missing and leaves the targets to skip.
have() {
    command -v clang >/dev/null 2>&1 && ls /usr/lib/llvm-*/lib/libarcher.so >/dev/null 2>&1 &&
        ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1
}
have && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bsrmv: installing clang libomp-dev"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libomp-dev ||
        echo "bsrmv: could not install clang and libomp-dev; fuzz and TSan checks skip" >&2
else
    echo "bsrmv: clang, libFuzzer or libomp-dev missing (sudo apt-get install -y clang libomp-dev);" \
         "fuzz and TSan checks skip" >&2
fi
exit 0
