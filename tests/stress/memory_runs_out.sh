#!/bin/sh
# memory_runs_out under the shim with 1 GB of address space: it must end
# in time (60 s), with its answer (issue 51, item 11).
# usage: memory_runs_out.sh PRELOAD PROGRAM
ulimit -v 1000000 || { echo "no ulimit -v: skipped"; exit 77; }
LD_PRELOAD=$1 OPENBLAS_NUM_THREADS=1 timeout 60 "$2"
rc=$?
[ $rc -eq 124 ] && echo "FAIL: it did not end in 60 s (the BLAS retrying for memory)"
exit $rc
