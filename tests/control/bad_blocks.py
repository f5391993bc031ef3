"""ampctl against hostile control blocks: garbage, truncated, another layout
version, another build's lists, a world-readable block, another user's
block. Each is refused with one line and exit 1, never a crash. gc removes
the blocks of dead processes.
usage: bad_blocks.py AMPCTL"""
import os
import struct
import subprocess
import sys

ampctl = sys.argv[1]
uid, pid = os.getuid(), os.getpid()
path = f"/dev/shm/ampshim.{uid}.{pid}"
SIZE = 2989760  # sizeof(struct amp_ctl_block), pinned by runtime/control.h (version 2)
MAGIC = 0x314C544353504D41
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    passed += ok
    failed += not ok
    if not ok:
        print(f"FAIL {what} {detail}")


def write(data, mode=0o600):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def refused(what, message):
    for verb in (["status", str(pid)], ["stats", str(pid)], ["get", str(pid), "opt.dtype"],
                 ["set", str(pid), "opt.dtype=fp16"], ["disable", str(pid)]):
        r = subprocess.run([ampctl, *verb], capture_output=True, text=True)
        check(f"{what}: ampctl {verb[0]} exits 1", r.returncode == 1, f"({r.returncode})")
        check(f"{what}: ampctl {verb[0]} says '{message}'",
              message in r.stderr and r.stderr.count("\n") == 1, repr(r.stderr))


def header(version=2, size=SIZE, ops=None, hooks=None):
    return struct.pack("<QIIqIIIIQ", MAGIC, version, size, pid, uid, ops or 0, hooks or 0, 256, 0)


try:
    write(os.urandom(SIZE))
    refused("garbage", "bad magic")
    write(header()[:20])
    refused("truncated", "truncated")
    write(header(version=99) + bytes(SIZE - 48))
    refused("another layout version", "another layout version")
    write(header(ops=1, hooks=1) + bytes(SIZE - 48))
    refused("another build's lists", "other op or hook lists")
    write(header() + bytes(SIZE - 48), mode=0o644)
    refused("world-readable", "mode 0600")
    if os.geteuid() == 0:
        write(header() + bytes(SIZE - 48))
        os.chown(path, 4242, 4242)
        refused("another user's", "not owned by you")
    os.unlink(path)
    r = subprocess.run([ampctl, "status", "1"], capture_output=True, text=True)
    check("a process with no block", r.returncode == 1 and "no ampshim control block" in r.stderr, r.stderr)
    r = subprocess.run([ampctl, "status", "4194301"], capture_output=True, text=True)
    check("no such process", r.returncode == 1 and "no such process" in r.stderr, r.stderr)
    dead = f"/dev/shm/ampshim.{uid}.4194301"
    with open(dead, "wb") as f:
        f.write(b"left behind by a killed process")
    r = subprocess.run([ampctl, "gc"], capture_output=True, text=True)
    check("gc removes a dead process's block", r.returncode == 0 and not os.path.exists(dead), r.stdout)
finally:
    for p in (path, f"/dev/shm/ampshim.{uid}.4194301"):
        if os.path.exists(p):
            os.unlink(p)
print(f"bad_blocks: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
