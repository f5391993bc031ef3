"""The audit of oneDNN primitives with Debian's torch (its convolutions run
through dnnl_primitive_execute): each audited call runs the bf16 twin and
then torch's own primitive, on torch's arguments, and the program keeps the
fp32 result.

- AMPSHIM_AUDIT=1, every call audited: torch's outputs are bit for bit those
  without the shim; the twin ran on every call (the native counter); the
  audit table has the convolution's site with every call audited, a bf16
  error (between 1e-4 and 1e-2) and a speed;
- AMPSHIM_AUDIT=auto with the first lowered runs made 20 ms slower (a
  test-only delay, AMPSHIM_TEST_SLOW_LOWERED): the site, lowered after one
  clean audit (a oneDNN site's probation: ampshim(7) AUTO), goes fp32 "not
  faster" when its rechecks are weighed, and comes back lowered when the
  delay has gone (the margin, 0.1,
  lies far from both the delayed ratio, about 0.01 for this small
  convolution, and any real one here, 0.4 to 3: no timing threshold);
- on a CPU without bf16 units (ONEDNN_MAX_CPU_ISA=AVX2), auto keeps every
  call as made, counted nounits, with no audit of it: oneDNN has no kernel
  to measure, and the report says so.
Skipped (77) where oneDNN makes no native bf16 convolution here."""
import hashlib
import os
import re
import subprocess
import sys

from client_util import Checker, shim_loaded

PROGRAM = r"""
import ctypes, hashlib, sys, torch
torch.manual_seed(0)
torch.set_num_threads(1)
conv = torch.nn.Conv2d(32, 32, 3, padding=1)
x = torch.randn(2, 32, 14, 14)
h = hashlib.sha256()
with torch.no_grad():
    for i in range(int(sys.argv[1])):
        h.update(conv(x).numpy().tobytes())
print(h.hexdigest())
try:
    ctl = ctypes.CDLL(None).ampshim_ctl
    ctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                    ctypes.c_void_p, ctypes.c_size_t]
    for which in ("native", "nounits", "lowered"):
        v, n = ctypes.c_uint64(0), ctypes.c_size_t(8)
        ctl(f"stats.dnnl_convolution_2d_forward.{which}".encode(), ctypes.byref(v),
            ctypes.byref(n), None, 0)
        print(which, v.value)
except AttributeError:
    pass
"""
SYMBOL = "dnnl_convolution_2d_forward"

ck = Checker("onednn_audit_check")
ck.check("libampshim.so is loaded (the test runs under LD_PRELOAD)", shim_loaded())
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base.update(OMP_NUM_THREADS="1", AMPSHIM_REPORT="1")


def run(calls, **env):
    r = subprocess.run([sys.executable, "-c", PROGRAM, str(calls)], env={**base, **env},
                       capture_output=True, text=True)
    lines = r.stdout.split()
    counts = dict(zip(lines[1::2], map(int, lines[2::2])))
    return r.returncode, lines[0] if lines else "", counts, r.stderr


def site_row(report):
    """The audit table's row of the convolution's site, and the auto line
    under it."""
    lines = report.splitlines()
    for i, line in enumerate(lines):
        f = line.split()
        if len(f) > 13 and f[0].isdigit() and f[13] == SYMBOL:
            nxt = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].lstrip().startswith("|") \
                else ""
            return f, nxt
    return None, ""


rc, plain, _, _ = run(12, AMPSHIM_ENABLE="0")
ck.check("torch runs with the shim disabled", rc == 0 and len(plain) == 64)

# Where oneDNN makes no native bf16 convolution, nothing can be audited.
rc, _, counts, report = run(2, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_SAMPLE="1")
if "native units (oneDNN" not in report or counts.get("native", 0) == 0:
    print(report)
    print("SKIP: oneDNN runs no native bf16 convolution here")
    sys.exit(77)

rc, got, counts, report = run(12, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_SAMPLE="1")
print(report)
ck.check("AMPSHIM_AUDIT=1: torch's outputs bit for bit those without the shim", got == plain)
ck.check("... while the twin ran on every call (native 12)", counts.get("native") == 12)
row, _ = site_row(report)
ck.check("the audit table has the convolution's site", row is not None)
if row:
    calls, audited, speed = int(row[6]), int(row[7]), row[9]
    ck.check("... every call audited (12 of 12)", calls == 12 and audited == 12)
    ck.check(f"... a bf16 error (err max {row[1]} within 1e-4..1e-2)",
             1e-4 < float(row[1]) < 1e-2)
    ck.check(f"... and a speed ({speed})", re.fullmatch(r"[0-9.]+x", speed) is not None)
    ck.check("... the shape as a product (392x32x288: 2*14*14 pixels, 32 channels, 3*3*32)",
             "392x32x288" in row)

rc, _, counts, report = run(60, AMPSHIM_AUDIT="auto", AMPSHIM_AUDIT_PROBATION="4",
                            AMPSHIM_AUDIT_RECHECK="2", AMPSHIM_TEST_SLOW_LOWERED="4",
                            AMPSHIM_AUDIT_MIN_SPEEDUP="0.1", AMPSHIM_LOG="info")
print(report)
row, auto = site_row(report)
ck.check("auto, the probation's lowered runs slowed: the site is in the table", row is not None)
moves = [m[0] for m in re.findall(r"(fp32|lowered)@(\d+)", auto)]
ck.check(f"... lowered after one audit, fp32 when weighed, then lowered again ({auto.strip()})",
         moves[:1] == ["lowered"] and "fp32" in moves and
         "lowered" in moves[moves.index("fp32"):] and "lowered@1 " in auto + " ")
ck.check("... and says why it moved: not faster, then clean audits (AMPSHIM_LOG=info)",
         re.search(SYMBOL + r".*: fp32 after \d+ calls \(not faster", report) is not None and
         re.search(SYMBOL + r".*: lowered after \d+ calls \(clean audits: fp32 took", report)
         is not None)
ck.check("... the calls it kept lowered ran the twin for the program",
         counts.get("native", 0) > 0)

rc, got, counts, report = run(12, AMPSHIM_AUDIT="auto", ONEDNN_MAX_CPU_ISA="AVX2")
print(report)
ck.check("no bf16 units (AVX2), auto: every call as made, counted nounits",
         counts.get("nounits") == 12 and counts.get("native") == 0)
ck.check("... the report says there are no native units", "no native units here" in report)
ck.check("... and nothing was audited (no site of it)", site_row(report)[0] is None)
sys.exit(ck.finish())
