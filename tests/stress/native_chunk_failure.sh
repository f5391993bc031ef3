#!/bin/sh
# Runs native_chunk_failure in front of the oneDNN fault injector (every
# third execution fails) with two BLAS threads, so the products are split
# into chunks that run at once. Skips (77) without the real libdnnl.so.2.
# usage: native_chunk_failure.sh PRELOAD INJECTOR_DIR PROGRAM
preload=$1 injector_dir=$2 program=$3
real=$(/sbin/ldconfig -p 2>/dev/null | awk '/libdnnl\.so\.2 .*x86-64/ { print $NF; exit }')
[ -n "$real" ] && [ -e "$real" ] || { echo "SKIP: no libdnnl.so.2"; exit 77; }
exec env LD_LIBRARY_PATH="$injector_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    DNNL_FAULT_REAL="$real" DNNL_FAULT_EVERY=3 DNNL_FAULT_REPORT=1 \
    OPENBLAS_NUM_THREADS=2 AMPSHIM_CPU_KERNEL=native LD_PRELOAD="$preload" "$program"
