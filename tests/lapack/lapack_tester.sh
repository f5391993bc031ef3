#!/bin/sh
# Debian's LAPACK tester (liblapack-test: xlintsts and xeigtsts, real single
# precision) under the shim, asked to lower every call made from inside the
# BLAS and LAPACK libraries (AMPSHIM_CALLERS): those calls are the
# libraries' own business, so every test must print exactly what it prints
# without the shim (timings aside). The previous release failed 77,633 tests
# this way. Skips (77) without liblapack-test.
# usage: lapack_tester.sh PRELOAD
preload=$1
dir=/usr/lib/x86_64-linux-gnu/lapack
[ -x "$dir/xlintsts" ] && [ -x "$dir/xeigtsts" ] || { echo "no liblapack-test; skipped"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
for t in "xlintsts stest.in" "xeigtsts sep.in" "xeigtsts svd.in" "xeigtsts sgg.in" \
         "xeigtsts ssg.in" "xeigtsts nep.in" "xeigtsts sgd.in" "xeigtsts lse.in" \
         "xeigtsts glm.in" "xeigtsts gqr.in"; do
    set -- $t
    "$dir/$1" < "$dir/$2" 2>&1 | grep -vi "time" > plain.out
    LD_PRELOAD=$preload AMPSHIM_CALLERS='liblapack*,libopenblas*,libblas*' \
        "$dir/$1" < "$dir/$2" 2>&1 | grep -vi "time" > shim.out
    if cmp -s plain.out shim.out; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $1 < $2 prints otherwise under the shim:"
        diff plain.out shim.out | head -20
    fi
done
echo "lapack_tester: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
