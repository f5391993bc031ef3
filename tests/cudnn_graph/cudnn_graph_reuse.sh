#!/bin/sh
# The cuDNN graph book never reads a plan through a reference to a
# descriptor the program destroyed (its address perhaps another's now): a
# program of the backend API runs the address-reuse sequence
# (tests/cudnn_graph/cudnn_graph_build.h, gb_reuse) without the shim and under it
# (lowered, at AMPSHIM_LOG=info); A's plan must answer the workspace cuDNN
# answers without the shim (it runs as made, never on B's convolution),
# with the shim's line saying why. Skips (77) when the allocator did not
# give graph A's address to graph B (a sanitizer's quarantine).
# usage: cudnn_graph_reuse.sh PRELOAD PROGRAM ARGS... (ARGS ending in reuse)
set -u
preload=$1
shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# Without the shim: the preload less libampshim.so (a sanitizer's runtime
# stays, for an instrumented program).
plain_preload=$(printf '%s\n' $preload | grep -v 'libampshim\.so' | tr '\n' ' ')
plain=$(LD_PRELOAD=$plain_preload "$@") || { echo "FAIL without the shim: $plain"; exit 1; }
shimmed=$(LD_PRELOAD=$preload AMPSHIM_LOG=info AMPSHIM_LOWER_MIN=0 "$@" 2>"$err") ||
    { echo "FAIL under the shim: $shimmed"; cat "$err"; exit 1; }
echo "without the shim: $plain"
echo "under the shim:   $shimmed"
grep -v ' -> ' "$err"
case "$plain$shimmed" in
*"did not take"*)
    echo "skipped: the allocator did not give graph A's address to graph B"
    exit 77
    ;;
esac
[ "${plain#*workspace }" = "${shimmed#*workspace }" ] ||
    { echo "FAIL: A's plan answered another workspace under the shim"; exit 1; }
grep -q "refers to a descriptor the program destroyed" "$err" ||
    { echo "FAIL: no line says why A's plan ran as made"; exit 1; }
echo "ok: A's plan ran as made"
