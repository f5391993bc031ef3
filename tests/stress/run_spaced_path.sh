#!/bin/sh
# `ampctl run` from a build tree whose path has a space: the program and its
# children get the shim (LD_PRELOAD cannot hold such a path; ampctl names
# it through a link of its own).
# usage: run_spaced_path.sh AMPCTL LIBAMPSHIM BLAS_CHECK
ampctl=$1 lib=$2 check=$3
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
tree="$work/a b:c"
mkdir -p "$tree/tools/ampctl"
cp "$ampctl" "$tree/tools/ampctl/ampctl"
cp "$lib" "$tree/libampshim.so"
: >"$tree/build.ninja" # what makes it a build tree to ampctl
# blas_check lower fails unless the shim is loaded; run it in a child of sh.
"$tree/tools/ampctl/ampctl" run -- sh -c '"$1" lower bf16 >/dev/null && echo child-ok' sh "$check" \
    >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 0 ] && grep -q child-ok "$work/out" && [ ! -s "$work/err" ]; then
    echo "run_spaced_path: ok"
else
    echo "FAIL ampctl run from '$tree': exit $rc"; cat "$work/err"
    exit 1
fi
