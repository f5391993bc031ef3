#!/bin/sh
# Installs what ampshim needs to build and test on Debian 12: the toolchain,
# OpenBLAS (LP64 and ILP64), Debian's reference BLAS (libblas3, for the
# reference-CBLAS test), Debian's LAPACK tester, Debian's numpy, scipy and
# torch as test clients, pytest and scikit-learn for the outside suites
# (tests/outside), and
# Open MPI for the scaler's two-rank agreement test, and oneDNN 2 (libdnnl2;
# libdnnl-dev for the types of its C API) for the native bf16 CPU path.
# With --fuzz also clang and its runtime (libFuzzer) for the parser fuzzer.
# clang-format checks the house style (the unit test format).
# Runs apt-get as root, or through sudo. Skips the install when all is there.
set -eu
packages="gcc meson ninja-build pkg-config clang-format libopenblas-dev libopenblas64-dev libblas3 libblas-test liblapack-test python3-numpy python3-scipy python3-torch python3-torchvision python3-pytest python3-sklearn libopenmpi-dev openmpi-bin libdnnl2 libdnnl-dev"
[ "${1:-}" = "--fuzz" ] && packages="$packages clang libclang-rt-14-dev"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
as_root=""
[ "$(id -u)" -eq 0 ] || as_root=sudo
$as_root apt-get update -q
DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -q --no-install-recommends $missing
