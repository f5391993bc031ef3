#!/bin/sh
# Runs every mode of process_life under the shim: each must exit 0, in time,
# with nothing at all on stderr.
# usage: process_life.sh PRELOAD PROCESS_LIFE
preload=$1 program=$2
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
failed=0
for mode in ${PROCESS_LIFE_MODES:-fork fork_native spawn atexit cancel rlimit rlimit_native}; do
    env LD_PRELOAD="$preload" PROCESS_LIFE_ATEXIT=1 timeout 60 "$program" $mode 2>"$err"
    rc=$?
    [ $rc -eq 0 ] || { echo "FAIL $mode: exit $rc"; failed=$((failed + 1)); }
    [ ! -s "$err" ] || { echo "FAIL $mode: printed on stderr:"; head -5 "$err"; failed=$((failed + 1)); }
done
echo "process_life: $failed failed"
[ $failed -eq 0 ]
