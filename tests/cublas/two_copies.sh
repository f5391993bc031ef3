#!/bin/sh
# Two copies of the fake cuBLAS 13, each in its own folder beside an
# extension module linked to it (tests/fakes/copies), then cublas_twins on
# the two extensions: each call must reach its own copy. With EXT "-", the
# program is given the two copies' paths instead (cublas_copies_dlsym).
# usage: two_copies.sh PROGRAM FAKE_CUBLAS_COPY EXT|- MODE
set -eu
work=$(mktemp -d "${TMPDIR:-/tmp}/two-copies.XXXXXX")
trap 'rm -rf "$work"' EXIT
for d in a b; do
    mkdir "$work/$d"
    cp "$2" "$work/$d/libcublas.so.13"
    [ "$3" = - ] || cp "$3" "$work/$d/libext.so"
done
if [ "$3" = - ]; then
    "$1" "$work/a/libcublas.so.13" "$work/b/libcublas.so.13" "$4"
else
    "$1" "$work/a/libext.so" ext_sgemm_13 13 "$work/b/libext.so" ext_sgemm_13 13 "$4"
fi
