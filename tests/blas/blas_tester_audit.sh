#!/bin/sh
# Debian's BLAS tester (libblas-test: xblat3s, the real single-precision
# level 3) under the accuracy audit. With AMPSHIM_AUDIT=1 (bf16 and fp16)
# the program keeps the fp32 results, so its summary must be byte for byte
# the one it writes without the shim; with follow it keeps the lowered ones,
# so it must be byte for byte the summary of a plain lowered run (which
# fails SGEMM, SSYMM, STRMM, SSYRK and SSYR2K as "less than half accurate",
# the tester's own verdict on bf16). The audit report must name the sites.
# Skips (77) without libblas-test.
# usage: blas_tester_audit.sh PRELOAD
preload=$1
dir=/usr/lib/x86_64-linux-gnu/blas
[ -x "$dir/xblat3s" ] || { echo "no libblas-test; skipped"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
run() { # NAME [VAR=VALUE...]: the tester's summary file saved as NAME
    name=$1
    shift
    rm -f sblat3.out
    env "$@" "$dir/xblat3s" < "$dir/sblat3.in" > /dev/null 2> "$name.err"
    cp sblat3.out "$name.summ" 2>/dev/null || : > "$name.summ"
}
run plain
run audit LD_PRELOAD="$preload" AMPSHIM_AUDIT=1
run audit16 LD_PRELOAD="$preload" AMPSHIM_AUDIT=1 AMPSHIM_CPU_DTYPE=fp16
run sampled LD_PRELOAD="$preload" AMPSHIM_AUDIT=1 AMPSHIM_AUDIT_SAMPLE=7
run lowered LD_PRELOAD="$preload"
run follow LD_PRELOAD="$preload" AMPSHIM_AUDIT=follow
passed=0 failed=0
expect() { # WHAT CONDITION...
    what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failed=$((failed + 1)); fi
}
clean() { [ -s "$1" ] && ! grep -qi "failed\|less than half" "$1"; }
expect "the tester passes without the shim" clean plain.summ
for m in audit audit16 sampled; do
    expect "AMPSHIM_AUDIT=1 ($m): summary byte for byte as without the shim" cmp -s plain.summ $m.summ
done
expect "the lowered run fails as the tester judges bf16" grep -qi "less than half accurate" lowered.summ
expect "follow: summary byte for byte as the lowered run" cmp -s lowered.summ follow.summ
expect "the audit report ranks sgemm_'s site" grep -q "sgemm_ *xblat3s+0x" audit.err
expect "no report without the audit" [ ! -s lowered.err ]
echo "blas_tester_audit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
