#!/bin/sh
# Disabled means silent: with AMPSHIM_ENABLE=0, bad variables print nothing
# and a relative AMPSHIM_LOG_FILE creates no file, in the process or its
# children; an explicit AMPSHIM_LOG or AMPSHIM_STRICT=1 still speaks.
# usage: disabled_silent.sh LIBAMPSHIM PROGRAM
shim=$1 program=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
check() { if eval "$2"; then passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi; }

LD_PRELOAD=$shim AMPSHIM_ENABLE=0 AMPSHIM_DTYPE=fp17 AMPSHIM_POLICY='zz*=lower' \
    AMPSHIM_LOG_FILE=relative.log AMPSHIM_REPORT=1 "$program" identical >out 2>err
check "disabled run succeeds" '[ $? -eq 0 ]'
check "disabled prints nothing on stderr ($(cat err))" '[ ! -s err ]'
check "disabled creates no log file" '[ ! -e relative.log ]'
LD_PRELOAD=$shim AMPSHIM_ENABLE=0 AMPSHIM_DTYPE=fp17 sh -c "$program identical >/dev/null; $program identical >/dev/null" 2>err
check "children of a disabled run print nothing ($(cat err))" '[ ! -s err ]'
LD_PRELOAD=$shim AMPSHIM_ENABLE=0 AMPSHIM_DTYPE=fp17 AMPSHIM_LOG=warn "$program" identical >/dev/null 2>err
check "an explicit AMPSHIM_LOG speaks: one line" '[ "$(wc -l <err)" -eq 1 ] && grep -q "^ampshim: AMPSHIM_DTYPE" err'
LD_PRELOAD=$shim AMPSHIM_ENABLE=0 AMPSHIM_DTYPE=fp17 AMPSHIM_STRICT=1 "$program" identical >/dev/null 2>err
status=$?
check "AMPSHIM_STRICT=1 still stops a bad run (status $status)" '[ $status -eq 2 ] && grep -q "AMPSHIM_DTYPE" err'
echo "disabled_silent: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
