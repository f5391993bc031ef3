#!/bin/sh
# Installs what ampshim needs to build and test on Debian 12: the toolchain,
# OpenBLAS (LP64 and ILP64), Debian's reference BLAS (libblas3, for the
# reference-CBLAS test), Debian's LAPACK tester, Debian's numpy, scipy and
# torch as test clients, pytest and scikit-learn for the outside suites
# (tests/outside), and
# Open MPI for the scaler's two-rank agreement test, and oneDNN 2 (libdnnl2;
# libdnnl-dev for the types of its C API) for the native bf16 CPU path.
# With --fuzz also clang and its runtime (libFuzzer) for the parser fuzzer.
# Then pip's numpy, scipy and pytest, the wheels most people have, in a
# virtual environment, .venv-pip in the source tree (AMPSHIM_PIP_VENV names
# another), for the pip client tests and outside suites (tests/pip); without
# PyPI it says so and those tests skip. With --pip-torch also pip's torch
# (the CUDA wheel, about 3 GB with its nvidia packages) in .venv-pip-torch
# beside it, for the pip-torch test, its wheels cached for the next clone.
# clang-format checks the house style (the unit test format); valgrind's
# callgrind bounds the hook's instructions per call (hook-instructions-bounded).
# Runs apt-get as root, or through sudo. Skips the install when all is there.
set -eu
packages="gcc meson ninja-build pkg-config clang-format libopenblas-dev libopenblas64-dev libblas3 libblas-test liblapack-test python3-numpy python3-scipy python3-torch python3-torchvision python3-pytest python3-sklearn libopenmpi-dev openmpi-bin libdnnl2 libdnnl-dev python3-dev"
packages="$packages python3-venv valgrind"
pip_torch=0
for arg in "$@"; do
    case $arg in
    --fuzz) packages="$packages clang libclang-rt-14-dev" ;;
    --pip-torch) pip_torch=1 ;;
    *) echo "usage: install-deps.sh [--fuzz] [--pip-torch]" >&2; exit 2 ;;
    esac
done
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    as_root=""
    [ "$(id -u)" -eq 0 ] || as_root=sudo
    $as_root apt-get update -q
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -q --no-install-recommends $missing
fi

# pip's wheels: the newest numpy and scipy (their own OpenBLAS, prefixed
# names, ILP64 and LP64) and pytest, made once and kept.
venv=${AMPSHIM_PIP_VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv-pip}
if ! "$venv/bin/python" -c 'import numpy, scipy, pytest, hypothesis' 2>/dev/null; then
    echo "pip: numpy, scipy and pytest into $venv"
    if ! { /usr/bin/python3 -m venv "$venv" &&
           "$venv/bin/python" -m pip install -q --disable-pip-version-check numpy scipy pytest hypothesis; }; then
        echo "pip: could not install the wheels (is PyPI reachable?): the pip tests will skip"
    fi
fi
# pip's torch: its wheels (about 3 GB) kept in a cache of their own
# (AMPSHIM_WHEEL_CACHE, else ~/.cache/ampshim/wheels), so that a fresh clone
# on the same machine installs them again without downloading anything.
if [ "$pip_torch" -eq 1 ] && ! "$venv-torch/bin/python" -c 'import torch, numpy' 2>/dev/null; then
    wheels=${AMPSHIM_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ampshim/wheels}
    echo "pip: torch and numpy into $venv-torch (wheels kept in $wheels)"
    pip_quiet="-q --disable-pip-version-check"
    if ! { /usr/bin/python3 -m venv "$venv-torch" && mkdir -p "$wheels" &&
           { "$venv-torch/bin/python" -m pip install $pip_quiet --no-index --find-links "$wheels" torch numpy 2>/dev/null ||
             { "$venv-torch/bin/python" -m pip download $pip_quiet -d "$wheels" torch numpy &&
               "$venv-torch/bin/python" -m pip install $pip_quiet --no-index --find-links "$wheels" torch numpy; }; }; }; then
        echo "pip: could not install torch (is PyPI reachable?): the pip-torch test will skip"
    fi
fi
