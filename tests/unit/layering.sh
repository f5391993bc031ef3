#!/bin/sh
# The tree's floors: each folder includes only its own and lower floors'
# headers, so no import circle can run through them.
#   policy/ < loader/ < runtime/ < kernels/ < shim/
# (policy: the generated lists and their parser; loader: the dynamic
# loader; runtime: configuration, control, threads, callers, decisions, the
# audit; kernels: conversions and oneDNN; shim: the hooks.) The tools, the
# scaler, the audit module and the tests stand outside and may include any.
# Also: a file's quoted includes name files that exist (no stale paths).
# usage: layering.sh SOURCE_ROOT
root=$1
cd "$root" || exit 1
floor() {
    case $1 in
        policy/*) echo 0 ;; loader/*) echo 1 ;; runtime/*) echo 2 ;;
        kernels/*) echo 3 ;; shim/*) echo 4 ;; *) echo 9 ;;
    esac
}
passed=0 failed=0
for f in $(find policy loader runtime kernels shim -name '*.[ch]' | sort); do
    own=$(floor "$f")
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
        case $inc in
            ampshim_generated.h | ampshim.h) continue ;;
        esac
        if [ ! -f "$inc" ]; then
            echo "FAIL $f includes $inc, which is not a file of the tree"
            failed=$((failed + 1))
            continue
        fi
        theirs=$(floor "$inc")
        if [ "$theirs" -gt "$own" ]; then
            echo "FAIL $f (floor $own) includes $inc (floor $theirs): an upward import"
            failed=$((failed + 1))
        else
            passed=$((passed + 1))
        fi
    done
done
echo "layering: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
