"""Consumers (runtime/products.h; ampshim(7), WHAT LOWERING CAN
CHANGE): numpy's linalg, which computes float32 input in float64, shows in
the report (Debian's dgesv_, the wheels' scipy_dgesv_64_), and a lowered
product whose output went into a solve or factorisation is named on the
report's consumers line and runs fp32 from then on, under the defaults
and AMPSHIM_AUDIT=auto. Lowered by emulation with the native crossover (the
default of a CPU with bf16 units, simulated), so it runs on any CPU:
- least squares by the normal equations, solved 4 times with fresh
  right-hand sides: X^T X's site named (into the solve), its first call
  lowered, the other 3 fp32;
- ridge: X^T X + lambda I into a Cholesky (np.linalg.cholesky: dpotrf):
  found through the shifted diagonal;
- a layer's product whose output goes nowhere near LAPACK: lowered, not
  named.
Run with LD_PRELOAD=libampshim.so; it starts its own children."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

PROGRAM = """import numpy as np
rng = np.random.default_rng(4)
x = rng.standard_normal((4000, 96)).astype(np.float32)
for _ in range(4):
    y = rng.standard_normal(4000).astype(np.float32)
    g = x.T @ x
    coef = np.linalg.solve(g, x.T @ y)
w = rng.standard_normal((96, 96)).astype(np.float32)
for _ in range(3):
    h = x @ w
a = x.T @ (x * 2)
a[np.diag_indices(96)] += 10.0
l = np.linalg.cholesky(a)
print(float(coef.sum()), float(h.sum()), float(l.sum()))
"""

ck = Checker("consumers")
preload = os.environ.get("LD_PRELOAD", "")
base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
base.update(OPENBLAS_NUM_THREADS="1", LD_PRELOAD=preload, AMPSHIM_CPU_KERNEL="emulate",
            AMPSHIM_LOWER_MIN=str(96 ** 3), AMPSHIM_REPORT="1")
tmp = tempfile.mkdtemp(prefix="ampshim-consumers-")
path = os.path.join(tmp, "program.py")
with open(path, "w") as f:
    f.write(PROGRAM)
lines = PROGRAM.splitlines()
gram = 1 + next(i for i, t in enumerate(lines) if "g = x.T @ x" in t)
layer = 1 + next(i for i, t in enumerate(lines) if "h = x @ w" in t)
ridge = 1 + next(i for i, t in enumerate(lines) if "a = x.T @" in t)


def row(report, test):
    """The report's counters of the first symbol test accepts."""
    header = None
    for line in report.splitlines():
        p = line.split()
        if p[:1] == ["symbol"] and "lowered" in p:
            header = p
        elif header and p and test(p[0]) and len(p) == len(header):
            return {k: p[header.index(k)] for k in ("calls", "lowered", "fp32")}
    return {}


for mode, settings in (("defaults", {}), ("auto", {"AMPSHIM_AUDIT": "auto"})):
    r = subprocess.run([sys.executable, path], env=dict(base, **settings), capture_output=True,
                       text=True)
    report = r.stderr
    ck.check(f"{mode}: the program runs", r.returncode == 0, report[-1500:])
    solve = row(report, lambda s: s.endswith("dgesv_") or s.endswith("dgesv_64_"))
    ck.check(f"{mode}: numpy's linalg.solve shows in the report ({solve})",
             solve.get("calls") == "4", report[-2500:])
    chol = row(report, lambda s: "dpotrf" in s)
    ck.check(f"{mode}: numpy's linalg.cholesky too ({chol})", chol.get("calls") == "1")
    line = next((l for l in report.splitlines() if l.startswith("consumers:")), "")
    print(mode, line)
    ck.check(f"{mode}: the consumers line names X^T X's site, into the solve",
             f"program.py:{gram} " in line and "gesv" in line, report[-2500:])
    ck.check(f"{mode}: ... and the ridge's through its shifted diagonal, into the Cholesky",
             f"program.py:{ridge} " in line and "potrf" in line)
    ck.check(f"{mode}: ... and not the layer's", f"program.py:{layer} " not in line)
    syrk = row(report, lambda s: "ssyrk" in s)
    ck.check(f"{mode}: X^T X: the first call lowered, the other 3 fp32 ({syrk})",
             syrk.get("lowered") == "1" and syrk.get("fp32") == "3")
ck.finish()
