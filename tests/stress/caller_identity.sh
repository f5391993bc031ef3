#!/bin/sh
# Issue 21, defects 1 and 5 to 8: callers the shim must name right, one
# check each, every run silent on stderr.
#   1  AMPSHIM_AUDIT=1 with 300 call sites (more than the audit's 256): no
#      result changes, the unrecorded sites included
#   8  the policy the audit writes for 260 sites, all kept in fp32, is kept
#      whole by the parser: every site runs fp32, no warning
#   7  a caller in no loaded object is "?": AMPSHIM_CALLERS='*' selects it,
#      cblas_sgemm@?:*=fp32 keeps it, the audit's entry for it keeps it
#   5  after dlclose, libcaller-b.so loaded where libcaller-a.so was gets
#      its own answers (call-site policy, AMPSHIM_CALLERS)
#   6  ... and its own audit site
# usage: caller_identity.sh PRELOAD PROGRAM LIBCALLER_A LIBCALLER_B
preload=$1 program=$2 lib_a=$3 lib_b=$4
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# expect WHAT WANT ENV... -- ARGS: runs the program under the shim with ENV;
# its output must be WANT and its stderr empty.
expect() {
    what=$1 want=$2
    shift 2
    got=$(env LD_PRELOAD="$preload" "$@" 2>"$dir/err")
    rc=$?
    if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
        bad "$what: got '$got' (exit $rc), want '$want'"
    elif [ -s "$dir/err" ]; then
        bad "$what: printed on stderr: $(head -3 "$dir/err")"
    else
        ok
    fi
}

# 1: more sites than the audit keeps.
expect "lowered without the audit" "lowered=300 fp32=0" "$program" sites 300
expect "AMPSHIM_AUDIT=1, 300 sites: no result changed" "lowered=0 fp32=300" \
    AMPSHIM_AUDIT=1 AMPSHIM_REPORT="$dir/report1" "$program" sites 300
expect "AMPSHIM_AUDIT=follow, 300 sites: every call lowered" "lowered=300 fp32=0" \
    AMPSHIM_AUDIT=follow AMPSHIM_REPORT="$dir/report1f" "$program" sites 300

# 8: a policy of 256 fp32 entries (the audit keeps 256 of the 260 sites).
expect "audit of 260 sites, tolerance 1e-9" "lowered=0 fp32=260" AMPSHIM_AUDIT=1 \
    AMPSHIM_AUDIT_TOLERANCE=1e-9 AMPSHIM_REPORT="$dir/report8" \
    AMPSHIM_AUDIT_POLICY="$dir/policy8" "$program" sites 260
entries=$(grep -c '=fp32' "$dir/policy8")
[ "$entries" -eq 256 ] && ok || bad "the audit policy keeps $entries sites in fp32, want 256"
expect "the audit's policy: its 256 sites in fp32, no warning" "lowered=4 fp32=256" \
    AMPSHIM_POLICY_FILE="$dir/policy8" "$program" sites 260

# 7: a caller in no loaded object.
jit_plain=$("$program" jit)
rc=$?
if [ $rc -eq 77 ]; then
    echo "SKIP jit: no anonymous executable mapping here"
else
    [ "$jit_plain" = "jit=F" ] && ok || bad "jit without the shim: $jit_plain"
    expect "jit lowered" "jit=L" "$program" jit
    expect "AMPSHIM_CALLERS='*' selects a JIT caller" "jit=L" AMPSHIM_CALLERS='*' "$program" jit
    expect "AMPSHIM_CALLERS='?' selects a JIT caller" "jit=L" AMPSHIM_CALLERS='?' "$program" jit
    expect "cblas_sgemm@?:*=fp32 keeps a JIT caller" "jit=F" \
        AMPSHIM_POLICY='cblas_sgemm@?:*=fp32' "$program" jit
    expect "audit of the JIT caller" "jit=F" AMPSHIM_AUDIT=1 AMPSHIM_AUDIT_TOLERANCE=1e-9 \
        AMPSHIM_REPORT="$dir/report7" AMPSHIM_AUDIT_POLICY="$dir/policy7" "$program" jit
    grep -q '^cpu:cblas_sgemm@?:\*=fp32' "$dir/policy7" && ok ||
        bad "the audit's entry for the JIT caller: $(grep -v '^#' "$dir/policy7")"
    expect "the audit's policy keeps the JIT caller" "jit=F" \
        AMPSHIM_POLICY_FILE="$dir/policy7" "$program" jit
fi

# 5 and 6: a library loaded where a closed one was.
"$program" dlclose "$lib_a" "$lib_b" >/dev/null
rc=$?
if [ $rc -eq 77 ]; then
    echo "SKIP dlclose: libcaller-b.so was not loaded at libcaller-a.so's address"
else
    expect "both lowered" "a=L b=L" "$program" dlclose "$lib_a" "$lib_b"
    expect "cblas_sgemm@libcaller-b.so=fp32 after dlclose" "a=L b=F" \
        AMPSHIM_POLICY='cblas_sgemm@libcaller-b.so=fp32' "$program" dlclose "$lib_a" "$lib_b"
    expect "AMPSHIM_CALLERS=libcaller-a.so after dlclose" "a=L b=F" \
        AMPSHIM_CALLERS='libcaller-a.so' "$program" dlclose "$lib_a" "$lib_b"
    expect "audit across dlclose" "a=F b=F" AMPSHIM_AUDIT=1 AMPSHIM_AUDIT_TOLERANCE=1e-9 \
        AMPSHIM_REPORT="$dir/report6" AMPSHIM_AUDIT_POLICY="$dir/policy6" \
        "$program" dlclose "$lib_a" "$lib_b"
    grep -q '@libcaller-a.so:multiply_in_a=fp32' "$dir/policy6" && ok ||
        bad "the audit's policy names libcaller-a.so: $(grep -v '^#' "$dir/policy6")"
    grep -q '@libcaller-b.so:multiply_in_b=fp32' "$dir/policy6" && ok ||
        bad "the audit's policy names libcaller-b.so: $(grep -v '^#' "$dir/policy6")"
fi
echo "caller_identity: $passed passed, $failed failed"
[ $failed -eq 0 ]
