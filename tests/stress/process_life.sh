#!/bin/sh
# Runs every mode of process_life under the shim: each must exit 0, in time,
# with nothing at all on stderr.
# usage: process_life.sh PRELOAD PROCESS_LIFE
preload=$1 program=$2
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
failed=0
# fork_native checks the native executor across fork: without pay checks
# (AMPSHIM_CPU_TIMING_SAMPLE=0), which run the busy thread's product in
# OpenBLAS now and then, and OpenBLAS 0.3.21's own fork handler
# (blas_thread_shutdown_) was seen to wait for ever on an idle worker when
# a threaded OpenBLAS call had just ended in another thread (ampshim(7),
# PAY CHECKS).
for mode in ${PROCESS_LIFE_MODES:-fork fork_native spawn atexit cancel rlimit rlimit_native}; do
    sample=
    [ $mode = fork_native ] && sample=AMPSHIM_CPU_TIMING_SAMPLE=0
    env LD_PRELOAD="$preload" PROCESS_LIFE_ATEXIT=1 $sample timeout 60 "$program" $mode 2>"$err"
    rc=$?
    [ $rc -eq 0 ] || { echo "FAIL $mode: exit $rc"; failed=$((failed + 1)); }
    [ ! -s "$err" ] || { echo "FAIL $mode: printed on stderr:"; head -5 "$err"; failed=$((failed + 1)); }
done
echo "process_life: $failed failed"
[ $failed -eq 0 ]
