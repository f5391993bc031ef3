#!/bin/sh
# Compiles tests/unit/python_layouts.c against the headers of every CPython
# found (Debian's python3-dev, and any under ~/.pyenv or /usr/local), so
# each row of runtime/python_frames.c's layouts is checked against that
# version's own headers. Skips (77) when no headers are installed.
#   sh python_layouts.sh SOURCE_ROOT BUILD_ROOT CC
set -u
src=$1 build=$2 cc=${3:-cc}
found=0 failed=0
for inc in /usr/include/python3.[0-9]* /usr/local/include/python3.[0-9]* \
           "$HOME"/.pyenv/versions/3.*/include/python3.[0-9]*; do
    [ -f "$inc/Python.h" ] || continue
    case $inc in *t) continue ;; esac # free-threaded headers: not read
    ver=$(basename "$inc")
    case $ver in python3.9|python3.1[0-3]) ;; *) continue ;; esac
    found=$((found + 1))
    out=$(mktemp)
    if "$cc" -w -I"$inc" -I"$src" -I"$build" -o "$out" "$src/tests/unit/python_layouts.c" -ldl -lpthread; then
        "$out" || failed=$((failed + 1))
    else
        echo "FAIL $inc: does not compile"
        failed=$((failed + 1))
    fi
    rm -f "$out"
done
[ "$found" -gt 0 ] || { echo "no CPython headers (python3-dev)"; exit 77; }
echo "python-layouts: $((found - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
