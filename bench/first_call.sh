#!/bin/sh
# What a program's first hooked product pays under the shim: the first and
# a later 512x256x384 sgemm of examples/matmul_demo, plainly and under the
# shim four ways (AMPSHIM_CPU_KERNEL=emulate: no oneDNN at all; the
# defaults; the defaults with ONEDNN_MAX_CPU_ISA=AVX2, a CPU without bf16
# units, where the probe asks oneDNN and hears no; and AMPSHIM_ENABLE=0),
# side by side: the modes alternate for ROUNDS rounds, each cell the median.
# Then what loading oneDNN alone costs (dlopen of libdnnl.so.2 in a fresh
# process). Prints the CPU's flags first.
# usage: first_call.sh LIBAMPSHIM MATMUL_DEMO [ROUNDS]
shim=$1 demo=$2 rounds=${3:-9}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
printf 'CPU: %s; flags: %s\n' "$(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)" \
    "$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|f16c|avx512f|avx512_bf16|avx512_fp16|amx_bf16' | tr '\n' ' ')"
modes="plain disabled emulate auto avx2"
run() {
    case $1 in
    plain) "$demo" ;;
    disabled) LD_PRELOAD=$shim AMPSHIM_ENABLE=0 "$demo" ;;
    emulate) LD_PRELOAD=$shim AMPSHIM_CPU_KERNEL=emulate "$demo" ;;
    auto) LD_PRELOAD=$shim "$demo" ;;
    avx2) LD_PRELOAD=$shim ONEDNN_MAX_CPU_ISA=AVX2 "$demo" ;;
    esac 2>/dev/null | sed -n 's/.*sgemm, \([0-9.]*\) ms; first call \([0-9.]*\) ms.*/\2 \1/p'
}
for r in $(seq "$rounds"); do
    for m in $modes; do run "$m" >>"$work/$m"; done
    /usr/bin/python3 -c 'import ctypes, time
t = time.perf_counter(); ctypes.CDLL("libdnnl.so.2"); print((time.perf_counter() - t) * 1e3)' \
        >>"$work/dlopen" 2>/dev/null
done
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else printf "-" }'; }
printf '%-34s %14s %14s %12s\n' "mode ($rounds rounds, medians)" "first call ms" "later call ms" "first/plain"
plain_first=$(cut -d' ' -f1 "$work/plain" | median)
for m in $modes; do
    first=$(cut -d' ' -f1 "$work/$m" | median)
    later=$(cut -d' ' -f2 "$work/$m" | median)
    case $m in
    plain) label="no shim" ;;
    disabled) label="shim, AMPSHIM_ENABLE=0" ;;
    emulate) label="shim, AMPSHIM_CPU_KERNEL=emulate" ;;
    auto) label="shim, defaults" ;;
    avx2) label="shim, ONEDNN_MAX_CPU_ISA=AVX2" ;;
    esac
    printf '%-34s %14s %14s %11.2fx\n' "$label" "$first" "$later" "$(echo "$first $plain_first" | awk '{ print ($2 > 0) ? $1 / $2 : 0 }')"
done
printf 'dlopen("libdnnl.so.2") alone, fresh process: %s ms (median)\n' "$(median <"$work/dlopen")"
