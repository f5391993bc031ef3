#!/bin/sh
# The native executor's fallbacks: wherever it cannot run, a lowered sgemm
# runs on the emulated path, bit for bit as before (native_check emulated),
# and says why in one info line per process; asked for emulation, it says
# nothing. usage: native_fallbacks.sh LIBAMPSHIM NATIVE_CHECK
shim=$1 check=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 skipped=0

# run NAME WANT_LINES PATTERN [VAR=VALUE...]: native_check emulated under the
# shim with the settings; its stderr must have WANT_LINES lines about the
# CPU kernel, each containing PATTERN.
run() {
    name=$1 want=$2 pattern=$3
    shift 3
    if ! env LD_PRELOAD="$shim" AMPSHIM_LOG=info "$@" "$check" emulated >"$work/out" 2>"$work/err"; then
        echo "FAIL $name: native_check emulated failed"; sed 's/^/  /' "$work/out" | tail -5
        failed=$((failed + 1)); return
    fi
    judge "$name" "$want" "$pattern"
}

judge() {
    lines=$(grep -c 'lowered CPU products run' "$work/err")
    if [ "$lines" -ne "$2" ] || { [ "$2" -gt 0 ] && ! grep -q "$3" "$work/err"; }; then
        echo "FAIL $1: $lines kernel lines on stderr, expected $2 with '$3':"; sed 's/^/  /' "$work/err"
        failed=$((failed + 1))
    else
        echo "PASS $1"; passed=$((passed + 1))
    fi
}

run "oneDNN held to AVX2: emulated, one line" 1 "no native bf16 kernel" \
    AMPSHIM_CPU_KERNEL=native DNNL_MAX_CPU_ISA=AVX2
run "AMPSHIM_CPU_KERNEL=emulate: emulated, silent" 0 "" AMPSHIM_CPU_KERNEL=emulate
if grep -q ' avx512_fp16' /proc/cpuinfo; then
    echo "SKIP fp16 without native fp16 units: this CPU has avx512_fp16"; skipped=$((skipped + 1))
else
    run "fp16 without native fp16 units: emulated, one line" 1 "no native fp16 kernel" \
        AMPSHIM_CPU_KERNEL=native AMPSHIM_DTYPE=fp16
fi

# No libdnnl.so.2 to be found: the installed one hidden in a private mount
# namespace (needs root and unshare; skipped otherwise).
lib=$(ldconfig -p 2>/dev/null | awk '/libdnnl\.so\.2 .*x86-64/ {print $NF; exit}')
if [ -z "$lib" ]; then
    run "no libdnnl.so.2 installed: emulated, one line" 1 "was not found" AMPSHIM_CPU_KERNEL=native
elif [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null &&
    unshare -m sh -c "mount --bind /dev/null '$(readlink -f "$lib")'" 2>/dev/null; then
    if unshare -m sh -c "mount --bind /dev/null '$(readlink -f "$lib")' &&
        exec env LD_PRELOAD='$shim' AMPSHIM_LOG=info AMPSHIM_CPU_KERNEL=native '$check' emulated" \
        >"$work/out" 2>"$work/err"; then
        judge "libdnnl.so.2 not loadable: emulated, one line" 1 "libdnnl.so.2 (oneDNN 2) was not found"
    else
        echo "FAIL libdnnl.so.2 not loadable: native_check emulated failed"; tail -5 "$work/out"
        failed=$((failed + 1))
    fi
else
    echo "SKIP libdnnl.so.2 not loadable: hiding it needs root and unshare"; skipped=$((skipped + 1))
fi

# The default log level: the native path (or its fallback) prints nothing.
env LD_PRELOAD="$shim" AMPSHIM_CPU_KERNEL=native "$check" native >"$work/out" 2>"$work/err"
rc=$?
if { [ $rc -eq 0 ] || [ $rc -eq 77 ]; } && [ ! -s "$work/err" ]; then
    echo "PASS default log level: silent"; passed=$((passed + 1))
else
    echo "FAIL default log level: stderr not empty"; sed 's/^/  /' "$work/err"; failed=$((failed + 1))
fi
echo "native_fallbacks: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
