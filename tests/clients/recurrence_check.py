"""Recurrences (shim/blas/blas_recurrence.h; ampshim(7), WHAT LOWERING CAN
CHANGE): a product whose operand is its own call site's earlier output
runs fp32 from its second step on under the defaults and auto, counted
fp32 and named in the report; a layer's site on fresh inputs, or a chain
of layers through one function, stays lowered. Lowered by
emulation with the native crossover (the default of a CPU with bf16 units,
simulated, as spread_check.py does), so it runs on any CPU:
- a Markov chain pi <- pi P (its mass is conserved) and a matrix power
  M <- M A: one call lowered (the first step, before the second shows the
  recurrence), the rest fp32, the site named on the report's recurrences
  line, and the answer closer to the no-shim one than with every step
  lowered (AMPSHIM_AUDIT=follow, which leaves each call to the audit): the
  power at least 4 times (60 steps: 27 times, one run), the chain's mass
  less (it keeps the first step's error: 1.9e-3 against 2.9e-3);
- the same under AMPSHIM_AUDIT=auto;
- a layer's site, 12 calls on fresh inputs: all lowered, no recurrence;
  a chain of 6 layers through one function (each output the next input,
  each its own weight): all lowered.
Run with LD_PRELOAD=libampshim.so; it starts its own children."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

PROGRAMS = {
    "markov": """import numpy as np
rng = np.random.default_rng(8)
p = rng.random((192, 192)).astype(np.float32) ** 3
p /= p.sum(1, keepdims=True)
pi = np.full((32, 192), 1.0 / 192, dtype=np.float32)
for _ in range(120):
    pi = pi @ p
print(float(abs(pi.astype(np.float64).sum(1) - 1).max()))
""",
    "power": """import numpy as np
rng = np.random.default_rng(9)
a = (np.eye(160) + rng.standard_normal((160, 160)) / 200).astype(np.float32)
m = np.eye(160, dtype=np.float32)
for _ in range(60):
    m = m @ a
exact = np.linalg.matrix_power(a.astype(np.float64), 60)
print(float(np.abs(m - exact).max() / np.abs(exact).max()))
""",
    "layer": """import numpy as np
rng = np.random.default_rng(10)
w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
out = []
for _ in range(12):
    x = rng.standard_normal((1024, 256)).astype(np.float32)
    out.append(np.maximum(x @ w, 0).sum())
print(len(out))
""",
    "chain": """import numpy as np
rng = np.random.default_rng(11)
ws = [(rng.standard_normal((256, 256)) / 16).astype(np.float32) for _ in range(6)]


def layer(x, w):
    return x @ w


h = rng.standard_normal((1024, 256)).astype(np.float32)
for w in ws:
    h = layer(h, w)
print(float(h.sum()))
""",
}

ck = Checker("recurrence")
preload = os.environ.get("LD_PRELOAD", "")
base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
base.update(OPENBLAS_NUM_THREADS="1", AMPSHIM_CPU_KERNEL="emulate",
            AMPSHIM_LOWER_MIN=str(96 ** 3), AMPSHIM_REPORT="1")
tmp = tempfile.mkdtemp(prefix="ampshim-recurrence-")


def run(name, shim=True, **settings):
    path = os.path.join(tmp, name + ".py")
    with open(path, "w") as f:
        f.write(PROGRAMS[name])
    env = dict(base, **settings)
    if shim:
        env["LD_PRELOAD"] = preload
    r = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True)
    ck.check(f"{name} runs", r.returncode == 0, r.stderr[-1500:])
    return r.stdout.strip(), r.stderr


def counts(report):
    """The report's counters of the sgemm this numpy calls (Debian's
    cblas_sgemm, the wheels' scipy_cblas_sgemm64_)."""
    header = None
    for line in report.splitlines():
        p = line.split()
        if p[:1] == ["symbol"] and "lowered" in p:
            header = p
        elif header and p and "cblas_sgemm" in p[0] and len(p) == len(header):
            return {k: p[header.index(k)] for k in ("calls", "lowered", "fp32")}
    return {}


for name in ("markov", "power"):
    plain, _ = run(name, shim=False)
    every, _ = run(name, AMPSHIM_AUDIT="follow")
    for mode, settings in (("defaults", {}), ("auto", {"AMPSHIM_AUDIT": "auto"})):
        got, report = run(name, **settings)
        line = next((l for l in report.splitlines() if l.startswith("recurrences:")), "")
        ck.check(f"{name}, {mode}: the report's recurrences line names its site",
                 f"{name}.py:" in line, report[-2500:])
        c = counts(report)
        ck.check(f"{name}, {mode}: the first step lowered, the others fp32 ({c})",
                 c.get("lowered") == "1" and int(c.get("fp32", 0)) == int(c.get("calls", 0)) - 1)
        try:
            err, err_every, err_plain = float(got), float(every), float(plain)
        except ValueError:
            err, err_every, err_plain = 1.0, 0.0, 0.0
        print(f"{name} {mode}: error {err:.3e}; every step lowered {err_every:.3e}; "
              f"no shim {err_plain:.3e}")
        # A conserved quantity keeps the first step's error (the Markov
        # chain's mass); a product of steps loses the others' (the power).
        factor = 4 if name == "power" else 1
        ck.check(f"{name}, {mode}: {factor}x closer or more than with every step lowered",
                 abs(err - err_plain) * factor < abs(err_every - err_plain))

for name in ("layer", "chain"):
    got, report = run(name)
    c = counts(report)
    ck.check(f"{name}: every call lowered ({c})",
             c.get("lowered") == c.get("calls") and c.get("fp32") == "0")
    ck.check(f"{name}: no recurrence", "recurrences:" not in report, report[-1500:])
ck.finish()
