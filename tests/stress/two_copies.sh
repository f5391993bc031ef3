#!/bin/sh
# Two copies of libampshim in one process (LD_PRELOAD names two builds): the
# second stays inert with one warning, every call is intercepted once (the
# report counts what one copy counts), results are right; disabled, nothing
# is printed.
# usage: two_copies.sh LIBAMPSHIM BLAS_CHECK
lib=$1 check=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cp "$lib" "$work/copy.so"
failed=0
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
env LD_PRELOAD="$lib" AMPSHIM_REPORT=stderr "$check" lower bf16 >/dev/null 2>"$work/one" ||
    bad "one copy: blas_check failed"
env LD_PRELOAD="$lib $work/copy.so" AMPSHIM_REPORT=stderr "$check" lower bf16 >/dev/null \
    2>"$work/two" || bad "two copies: blas_check failed"
[ "$(grep -c 'another copy of libampshim' "$work/two")" -eq 1 ] ||
    bad "two copies: want one 'another copy' warning"
one=$(grep '^total' "$work/one") two=$(grep '^total' "$work/two")
[ -n "$one" ] && [ "$one" = "$two" ] || bad "two copies count differently: '$one' vs '$two'"
env LD_PRELOAD="$lib $work/copy.so" AMPSHIM_ENABLE=0 "$check" identical >/dev/null 2>"$work/off" ||
    bad "two copies disabled: blas_check failed"
[ ! -s "$work/off" ] || bad "two copies disabled: printed $(cat "$work/off")"
echo "two_copies: $failed failed"
[ $failed -eq 0 ]
