#!/bin/sh
# With /dev/shm too small for anything (as in a container whose data loaders
# filled it), a program under the shim runs normally with a shared control
# block (a memfd, which needs no /dev/shm), and nothing of ampshim's is put
# in /dev/shm. Uses a private mount namespace with a 1 MiB tmpfs; skips (77)
# where that is not allowed.
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
    if grep -q "no control block" /tmp/full_shm.$$; then
        failed=$((failed + 1)); echo "FAIL: the block was not made"; else passed=$((passed + 1)); fi
    if [ -z "$(ls /dev/shm)" ]; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: something left in /dev/shm"; fi
    rm -f /tmp/full_shm.$$
    echo "full_shm: $passed passed, $failed failed"
    [ $failed -eq 0 ]' sh "$preload" "$check"
