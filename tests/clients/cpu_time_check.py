"""CPU time per symbol (AMPSHIM_CPU_TIMING_SAMPLE) with Debian's numpy, under
the default of a CPU with bf16 units, simulated on any CPU
(AMPSHIM_CPU_KERNEL=emulate, the native crossover as AMPSHIM_LOWER_MIN), every
call timed (AMPSHIM_CPU_TIMING_SAMPLE=1): products of 256^3 (lowered) and
32^3 (below the size rule: run as made, counted small), and 256^3 in an
fp32 region (ampshim_fp32_push: run as made, counted fp32).

- the exit report's CPU time table has cblas_sgemm with as many timed
  lowered calls as the counters' lowered and as many timed as made as their
  small and fp32, a time and a rate for each; its "lowering bought" line
  gives the lowered calls' time against the as-made rate of calls of their
  size (the fp32 region's);
- the same timed calls by call site: the program's three product lines
  (runtime/sites.h), the 5 lowered on the first loop's line;
- `ampctl stats PID --json` of the running process carries the same in
  cpu_time (its values consistent with the call counts), by symbol and by
  call site;
- AMPSHIM_AUDIT=1: the audit table has each site's speed (fp32's time over
  lowered's on the same audited calls) and the line on the audited calls;
- on a CPU without bf16 units (ONEDNN_MAX_CPU_ISA=AVX2), AMPSHIM_AUDIT=auto
  runs nothing twice: every call is counted nounits and no site is audited.
  Otherwise only presence and consistency are checked.
usage: cpu_time_check.py AMPCTL"""
import json
import os
import re
import subprocess
import sys

from client_util import Checker, shim_loaded

PROGRAM = r"""
import ctypes
import sys
import numpy as np
rng = np.random.default_rng(0)
big = [rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2)]
small = [rng.standard_normal((32, 32), dtype=np.float32) for _ in range(2)]
for _ in range(5):
    big[0] @ big[1]
for _ in range(7):
    small[0] @ small[1]
shim = ctypes.CDLL(None)
shim.ampshim_fp32_push()
for _ in range(3):
    big[0] @ big[1]
shim.ampshim_fp32_pop()
print("ready", flush=True)
if len(sys.argv) > 1:
    sys.stdin.read()
"""

ck = Checker("cpu_time_check")
ck.check("libampshim.so is loaded (the test runs under LD_PRELOAD)", shim_loaded())
ampctl = sys.argv[1]
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base.update(OPENBLAS_NUM_THREADS="1", AMPSHIM_CPU_KERNEL="emulate", AMPSHIM_LOWER_MIN=str(96 ** 3),
            AMPSHIM_CPU_TIMING_SAMPLE="1", AMPSHIM_REPORT="1")

r = subprocess.run([sys.executable, "-c", PROGRAM], env=base, capture_output=True, text=True)
report = r.stderr
print(report)
rows = {line.split()[0]: line.split() for line in report.splitlines()
        if line.startswith("cblas_sgemm ")}
counts = {}
header = next((line.split() for line in report.splitlines() if line.startswith("symbol ")), [])
if "cblas_sgemm" in rows and header:
    # the counters' table: symbol op policy calls lowered ...
    first = next(line.split() for line in report.splitlines() if line.startswith("cblas_sgemm "))
    counts = dict(zip(header[3:], (int(x) for x in first[3:])))
timed = [line.split() for line in report.splitlines()
         if line.startswith("cblas_sgemm ") and len(line.split()) == 7]
ck.check("the report's CPU time table", "CPU time of the timed calls" in report and len(timed) == 1,
         report[-1500:])
if timed and counts:
    t = timed[0]
    ck.check("every lowered call timed (sample 1): timed lowered = lowered",
             int(t[1]) == counts.get("lowered") == 5, f"{t} {counts}")
    ck.check("every small and fp32 call timed, as made: timed made = small + fp32",
             int(t[4]) == counts.get("small") + counts.get("fp32") == 10, f"{t} {counts}")
    ck.check("a time and a rate for each", all(float(x) > 0 for x in (t[2], t[3], t[5], t[6])),
             f"{t}")
# The same timed calls by call site: each product line of the program is
# a site (runtime/sites.h), and together they have them all.
lines = PROGRAM.split("\n")
product_lines = [i + 1 for i, text in enumerate(lines) if "] @ " in text]
after = report.split("by call site:", 1)[1].splitlines() if "by call site:" in report else []
site = {int(m.group(1)): [int(m.group(2)), float(m.group(3)), float(m.group(4)), int(m.group(5))]
        for m in (re.match(r"cblas_sgemm\s+<string>:(\d+) <module>\s+(\d+)\s+(\S+)\s+(\S+)\s+(\d+)",
                           line) for line in after) if m}
first = product_lines[0]
ck.check("the report's table by call site: the program's three product lines, 5 timed lowered "
         "(the first loop's, with a time and a rate) and 10 timed as made",
         sorted(site) == product_lines and site[first][0] == 5 and
         site[first][1] > 0 and site[first][2] > 0 and
         sum(v[3] for v in site.values()) == 10, f"{site} {product_lines} {report[-1500:]}")
ck.check("the line on what lowering bought, against the fp32 region's calls of the same size",
         "lowering bought: about 5 of 5 lowered calls" in report,
         report[-600:])

# The running process, seen by ampctl stats --json.
p = subprocess.Popen([sys.executable, "-c", PROGRAM, "wait"], env=base, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
p.stdout.readline()
s = subprocess.run([ampctl, "stats", str(p.pid), "--json"], env={"PATH": os.environ["PATH"]},
                   capture_output=True, text=True)
p.stdin.close()
p.wait()
try:
    stats = json.loads(s.stdout)
except ValueError:
    stats = {}
rows = [x for x in stats.get("cpu_time", {}).get("symbols", []) if x.get("symbol") == "cblas_sgemm"]
sym = [x for x in stats.get("symbols", []) if x.get("symbol") == "cblas_sgemm"]
ck.check("ampctl stats --json: cpu_time for cblas_sgemm", len(rows) == 1 and len(sym) == 1,
         s.stdout[:2000] + s.stderr)
if rows and sym:
    x, c = rows[0], sym[0]
    ck.check("... consistent with the counters",
             x["timed_lowered"] == c["lowered"] and x["timed_made"] == c["small"] + c["fp32"] and
             x["ns_lowered"] > 0 and x["flops_lowered"] == 5 * 2 * 256 ** 3 and
             x["flops_made"] == 7 * 2 * 32 ** 3 + 3 * 2 * 256 ** 3 and
             stats["cpu_time"]["lowered_calls_weighed"] == 5, f"{x} {c}")
    sites = [y for y in stats["cpu_time"].get("sites", []) if y.get("symbol") == "cblas_sgemm"]
    ck.check("... and by call site: the product lines' sites, the same timed calls and flops "
             "in all",
             len(sites) == 3 and all(y["object"] == "<string>" for y in sites) and
             all(sum(y[k] for y in sites) == x[k] for k in ("timed_lowered", "timed_made",
                                                         "flops_lowered", "flops_made",
                                                         "ns_lowered", "ns_made")),
             f"{sites} {x}")

a = subprocess.run([sys.executable, "-c", PROGRAM], env=dict(base, AMPSHIM_AUDIT="1"),
                   capture_output=True, text=True).stderr
site = [line.split() for line in a.splitlines() if line[:1].isdigit() and "cblas_sgemm" in line]
ck.check("the audit's table: the site's speed", len(site) == 1 and site[0][9].endswith("x") and
         float(site[0][9][:-1]) > 0, a[-1500:])
ck.check("the audit's line on its audited calls", "audited calls: lowered runs" in a, a[-600:])

# A CPU without bf16 units (simulated): a lowered run would be the emulated
# one, the fp32 routine plus the rounding, which cannot pay; auto knows that
# without measuring it, and runs nothing twice.
NO_UNITS = r"""
import numpy as np
a = np.random.default_rng(0).standard_normal((256, 256), dtype=np.float32)
for _ in range(24):
    a @ a
"""
env = {k: v for k, v in base.items() if k not in ("AMPSHIM_CPU_KERNEL", "AMPSHIM_LOWER_MIN")}
env.update(ONEDNN_MAX_CPU_ISA="AVX2", AMPSHIM_AUDIT="auto", AMPSHIM_LOWER_MIN="")
n = subprocess.run([sys.executable, "-c", NO_UNITS], env=env, capture_output=True, text=True).stderr
rows = [line.split() for line in n.splitlines() if line.startswith("cblas_sgemm ")]
ck.check("no bf16 units, auto: every call counted nounits, none audited",
         rows and rows[0][3] == "24" and rows[0][8] == "24" and "no native units here" in n and
         not any(line[:1].isdigit() and "cblas_sgemm" in line for line in n.splitlines()),
         n[-1500:])
ck.finish()
