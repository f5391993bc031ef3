#!/bin/sh
# The floors hold at link time: no object of a lower floor references a
# symbol an object of a higher floor defines. The floors, bottom up, by the
# source folder an object was compiled from: loader/, kernels/, policy/
# (and the generated policy tables), runtime/, shim/. The include check
# (layering.sh) reads #include lines; this reads the objects themselves
# (nm), so a declaration written by hand, a thread-local or a function
# reached without a header cannot hide an upward call. A name the C
# library defines too is an interposition (the shim's dlopen, dlsym,
# dlclose, _exit), not an upward call: a floor calls the C library's.
# Before the build's objects, the check runs on two objects made here, one
# of runtime/ calling one of shim/, and must fail on them.
# usage: floors.sh BUILD_DIR
set -u
build=$1
libc=$(ldd "$(command -v sh)" | awk '/libc\.so/ { print $3; exit }')
work=$(mktemp -d "${TMPDIR:-/tmp}/floors.XXXXXX")
trap 'rm -rf "$work"' EXIT
nm -D --defined-only "$libc" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u > "$work/libc"

# floors OBJECT...: one line per upward reference, "object -> symbol
# (defined in object)".
floors() {
    for o in "$@"; do
        b=$(basename "$o")
        nm --defined-only -g "$o" | awk -v b="$b" 'NF == 3 { print "D", $3, b }'
        nm -u "$o" | awk -v b="$b" '{ print "U", $2, b }'
    done | awk -v libc="$work/libc" '
        function floor(obj) {
            if (obj ~ /^loader_/) return 0
            if (obj ~ /^kernels_/) return 1
            if (obj ~ /^policy_/ || obj ~ /^meson-generated_.*policy/) return 2
            if (obj ~ /^runtime_/) return 3
            if (obj ~ /^shim_/) return 4
            return -1
        }
        BEGIN { while ((getline s < libc) > 0) in_libc[s] = 1 }
        $1 == "D" { def[$2] = $3; next }
        { use[NR] = $2 " " $3 }
        END {
            for (i in use) {
                split(use[i], u, " ")
                if (!(u[1] in def) || (u[1] in in_libc)) continue
                from = floor(u[2]); to = floor(def[u[1]])
                if (from >= 0 && to > from)
                    print u[2] " -> " u[1] " (defined in " def[u[1]] ")"
            }
        }' | sort -u
}

# The check can fail: runtime/ calling shim/.
printf 'int amp_shim_thing(void) { return 1; }\n' > "$work/shim_thing.c"
printf 'int amp_shim_thing(void);\nint amp_runtime_thing(void) { return amp_shim_thing(); }\n' \
    > "$work/runtime_thing.c"
cc -c -o "$work/shim_thing.c.o" "$work/shim_thing.c" &&
    cc -c -o "$work/runtime_thing.c.o" "$work/runtime_thing.c" || exit 1
seen=$(floors "$work/shim_thing.c.o" "$work/runtime_thing.c.o")
if [ "$seen" != "runtime_thing.c.o -> amp_shim_thing (defined in shim_thing.c.o)" ]; then
    echo "FAIL the check does not see runtime/ calling shim/ ($seen)"
    exit 1
fi

objects=$(ls "$build"/libampshim-core.a.p/*.o "$build"/libampshim.so.p/*.o 2>/dev/null)
count=$(printf '%s\n' "$objects" | grep -c .)
if [ "$count" -lt 10 ]; then
    echo "FAIL found $count objects under $build (libampshim-core.a.p, libampshim.so.p)"
    exit 1
fi
# shellcheck disable=SC2086
up=$(floors $objects)
if [ -n "$up" ]; then
    printf '%s\n' "$up" | sed 's/^/FAIL upward: /'
    echo "floors: $(printf '%s\n' "$up" | wc -l) upward references in $count objects"
    exit 1
fi
echo "floors: $count objects, no upward reference (loader < kernels < policy < runtime < shim)"
