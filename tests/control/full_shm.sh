#!/bin/sh
# With /dev/shm too small for a control block (as in a container whose data
# loaders filled it), a program under the shim must run normally: no crash,
# results still lowered, a private block instead of a shared one. Uses a
# private mount namespace with a 1 MiB tmpfs; skips (77) where that is not
# allowed.
# usage: full_shm.sh PRELOAD BLAS_CHECK
preload=$1 check=$2
command -v unshare >/dev/null 2>&1 || { echo "no unshare; skipped"; exit 77; }
unshare -m sh -c 'mount -t tmpfs -o size=1M tmpfs /dev/shm' 2>/dev/null ||
    { echo "cannot make a mount namespace here; skipped"; exit 77; }
exec unshare -m sh -c '
    mount -t tmpfs -o size=1M tmpfs /dev/shm || exit 77
    LD_PRELOAD="$1" AMPSHIM_LOG=info "$2" lower bf16 > /tmp/full_shm.$$ 2>&1
    rc=$?
    cat /tmp/full_shm.$$
    passed=0 failed=0
    if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: exit $rc"; fi
    if grep -q "no control block" /tmp/full_shm.$$; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: no word of the missing block"; fi
    if [ -z "$(ls /dev/shm)" ]; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: something left in /dev/shm"; fi
    rm -f /tmp/full_shm.$$
    echo "full_shm: $passed passed, $failed failed"
    [ $failed -eq 0 ]' sh "$preload" "$check"
