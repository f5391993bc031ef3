"""ampctl against hostile control blocks: garbage, truncated, another layout
version, another build's lists, a world-readable block, one naming another
process. A block is a memfd named ampshim-control among a process's
descriptors; this script makes such memfds in its own process and points
ampctl at itself. Each bad one is refused with one line and exit 1, never a
crash. gc has nothing to do.
usage: bad_blocks.py AMPCTL"""
import os
import struct
import subprocess
import sys

ampctl = sys.argv[1]
uid, pid = os.getuid(), os.getpid()
SIZE = 9261792  # sizeof(struct amp_ctl_block), pinned by runtime/control.h (version 13)
MAGIC = 0x314C544353504D41
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

checker = Checker("bad_blocks")
check = checker.check


def plant(data, mode=0o600):
    """A memfd holding data, as the shim's block would be held."""
    fd = os.memfd_create("ampshim-control", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.fchmod(fd, mode)
    return fd


def refused(what, message):
    for verb in (["status", str(pid)], ["stats", str(pid)], ["get", str(pid), "opt.dtype"],
                 ["set", str(pid), "opt.dtype=fp16"], ["disable", str(pid)]):
        r = subprocess.run([ampctl, *verb], capture_output=True, text=True)
        check(f"{what}: ampctl {verb[0]} exits 1", r.returncode == 1, f"({r.returncode})")
        check(f"{what}: ampctl {verb[0]} says '{message}'",
              message in r.stderr and r.stderr.count("\n") == 1, repr(r.stderr))


def header(version=13, size=SIZE, ops=None, hooks=None, owner=None):
    return struct.pack("<QIIqIIIIQ", MAGIC, version, size, owner or pid, uid, ops or 0,
                       hooks or 0, 192, 0)


cases = [
    ("garbage", os.urandom(SIZE), 0o600, "bad magic"),
    ("truncated", header()[:20], 0o600, "truncated"),
    ("another layout version", header(version=99) + bytes(SIZE - 48), 0o600,
     "has layout version 99; this ampctl reads version 13"),
    # An older release's block is smaller: its version, not "truncated".
    ("an older release's smaller block", header(version=12, size=8000216) + bytes(8000216 - 48),
     0o600, "has layout version 12; this ampctl reads version 13"),
    ("another build's lists", header(ops=1, hooks=1) + bytes(SIZE - 48), 0o600,
     "other op or hook lists"),
    ("world-readable", header() + bytes(SIZE - 48), 0o644, "mode 0600"),
]
for what, data, mode, message in cases:
    fd = plant(data, mode)
    try:
        refused(what, message)
    finally:
        os.close(fd)
r = subprocess.run([ampctl, "status", "1"], capture_output=True, text=True)
check("init's descriptors", r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr)
r = subprocess.run([ampctl, "status", str(pid)], capture_output=True, text=True)
check("a process with no block", r.returncode == 1 and "no ampshim control block" in r.stderr, r.stderr)
r = subprocess.run([ampctl, "status", "4194301"], capture_output=True, text=True)
check("no such process", r.returncode == 1 and "no such process" in r.stderr, r.stderr)
# Issue 21, defect 9: a number past pid_t (or one strtol clamps) is no
# process id: refused as usage (exit 2), never clamped and looked up.
for text in ("99999999999999999999", "2147483648", "-5", "+7", " 7", "0x10"):
    r = subprocess.run([ampctl, "status", text], capture_output=True, text=True)
    check(f"'{text}' refused as a process id", r.returncode == 2 and "process id" in r.stderr
          and "no such process" not in r.stderr, f"({r.returncode}) {r.stderr}")
r = subprocess.run([ampctl, "gc"], capture_output=True, text=True)
check("gc has nothing to do", r.returncode == 0 and "nothing to do" in r.stdout, r.stdout)
checker.finish()
