#!/bin/sh
# The tree's floors and the shim's wings. Each folder includes only its own
# and lower floors' headers, so no import circle can run through them:
#   policy/ < loader/ < runtime/ < kernels/ < shim/
# (policy: the generated lists and their parser; loader: the dynamic
# loader; runtime: configuration, control, threads, callers, decisions, the
# audit; kernels: conversions; shim: the hooks.) The tools, the scaler, the
# audit module and the tests stand outside and may include any.
# Inside shim/: the core (files directly in shim/: loading, resolution, the
# API, regions), the shared CUDA services (shim/cuda/) and one wing per
# library family (shim/blas, shim/cudnn_graph, ...). A wing includes its own
# headers, the core's, the CUDA services' and lower floors', never another
# wing's; the services include the core's and lower floors'; the core
# includes no wing, but for shim/fork.c, whose one table names each wing's
# fork handler (its rows are the order the locks nest).
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
# The room of a file under shim/: core, cuda (the services) or its wing.
room() {
    case $1 in
        shim/*/*) r=${1#shim/}; echo "${r%%/*}" ;;
        *) echo core ;;
    esac
}
passed=0 failed=0 wings=0
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
            continue
        fi
        if [ "$own" -eq 4 ] && [ "$theirs" -eq 4 ]; then
            from=$(room "$f") to=$(room "$inc")
            ok=1
            if [ "$to" = core ] || [ "$to" = "$from" ]; then
                ok=1
            elif [ "$to" = cuda ]; then
                [ "$from" = core ] && [ "$f" != shim/fork.c ] && ok=0
            elif [ "$f" != shim/fork.c ]; then
                ok=0
            fi
            if [ "$ok" -eq 0 ]; then
                echo "FAIL $f ($from) includes $inc ($to): a wing includes only its own, the core's and shim/cuda's headers"
                failed=$((failed + 1))
                continue
            fi
        fi
        passed=$((passed + 1))
    done
done
# Every library family (policy/data/families.txt) is a wing of its own with
# sources in it (a wing flattened back into shim/ would pass the rule above
# unseen), and so are the CUDA services.
for w in cuda $(awk '!/^#/ && NF { print tolower($1) }' policy/data/families.txt); do
    if ls shim/"$w"/*.c >/dev/null 2>&1; then
        wings=$((wings + 1))
    else
        echo "FAIL shim/$w has no sources"
        failed=$((failed + 1))
    fi
done
echo "layering: $passed passed, $failed failed ($wings rooms under shim/)"
[ "$failed" -eq 0 ]
