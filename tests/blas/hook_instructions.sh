#!/bin/sh
# The hook's instructions per call, bounded: a 4x4 cblas_sgemm counted by
# callgrind (the instructions of a loop of 4000 calls minus those of 2000,
# per call) without the shim and under it disabled, passing through, kept
# by the size rule (small) and lowered. Instruction counts do not depend on
# the machine's load, so this is no timing test. Each mode's cost over the
# run without the shim must stay under its bound: the fast path a hot loop
# pays on every call (disabled, passthrough), a call the size rule keeps,
# and the whole lowered path (plan, gate, guard, audit, execute). The
# bounds are about 1.5 times what was measured (Zen 4 and Intel with AMX,
# docs/measured.md): a change that makes a path much longer fails here,
# not in a benchmark someone must remember to run.
# usage: hook_instructions.sh PROGRAM LIBAMPSHIM
set -u
prog=$1 shim=$2
command -v valgrind >/dev/null 2>&1 || { echo "no valgrind: skipped"; exit 77; }
# Each mode names its settings; none comes from outside (meson's test
# environment sets AMPSHIM_LOWER_MIN=0, which would lower the small mode).
for v in $(env | sed -n 's/^\(AMPSHIM_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/hook-instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT
# ir N ENV...: the instructions callgrind counts for N calls.
ir() {
    n=$1
    shift
    env -u LD_PRELOAD "$@" valgrind --tool=callgrind --callgrind-out-file="$work/out" \
        "$prog" "$n" > /dev/null 2> "$work/err" || { cat "$work/err"; return 1; }
    sed -n 's/^summary: *//p' "$work/out" | head -1
}
# per_call ENV...: instructions per call.
per_call() {
    a=$(ir 2000 "$@") && b=$(ir 4000 "$@") || return 1
    echo $(((b - a) / 2000))
}
base=$(per_call OPENBLAS_NUM_THREADS=1) || exit 1
failed=0
printf '%-12s %12s %12s %12s\n' mode "instr/call" "over none" bound
printf '%-12s %12s %12s %12s\n' none "$base" 0 -
# mode, bound over the run without the shim, the settings.
while read -r mode bound settings; do
    # shellcheck disable=SC2086
    n=$(per_call OPENBLAS_NUM_THREADS=1 LD_PRELOAD="$shim" $settings) || exit 1
    over=$((n - base))
    verdict=ok
    if [ "$over" -gt "$bound" ]; then
        verdict=FAIL
        failed=$((failed + 1))
    fi
    printf '%-12s %12s %12s %12s %s\n' "$mode" "$n" "$over" "$bound" "$verdict"
done <<MODES
disabled 60 AMPSHIM_ENABLE=0
passthrough 300 AMPSHIM_POLICY=cpu:mm=passthrough
small 1100 AMPSHIM_LOWER_MIN=auto AMPSHIM_SPREAD_LOSS=off
lowered 4500 AMPSHIM_LOWER_MIN=0 AMPSHIM_CPU_KERNEL=emulate AMPSHIM_SPREAD_LOSS=off
MODES
echo "hook_instructions: $failed over their bound"
[ "$failed" -eq 0 ]
