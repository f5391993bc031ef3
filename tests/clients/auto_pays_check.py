"""Auto that pays (ampshim(7) AUTO, PAY CHECKS), with Debian's numpy,
scikit-learn and torch, under the defaults as shipped (the test setup's
AMPSHIM_LOWER_MIN=0 removed):
- a narrow product (rows x 128 times 128 x 10) is not lowered where no
  native kernel takes it: counted nonative on a CPU with bf16 units, nounits
  without; scikit-learn's LogisticRegression on float32 data ends as plain
  fp32 does (its iterations and coefficients, bit for bit);
- the default report of a lowered program says per call site and size
  class whether lowering paid, with measured figures, and the run's total;
  ampctl-readable JSON (the report's cpu_time) carries the same;
- AMPSHIM_AUDIT=auto: a site sent to fp32 by an audit over tolerance and
  clean later comes back lowered with the reason that holds now (clean
  audits), and its pay checks weigh it again; a torch convolution site
  decided lowered runs a shape first met after the decision as the defaults
  run it (in its descriptor, no conversion pass; on a twin where the
  defaults use one: the same conversions, no audit); a CPU without units
  runs nothing twice;
- auto's decisions on one program are the same while a busy process takes
  the other core (the pay checks time the process's CPU, and a verdict
  needs three agreeing checks);
- a product smooth along the rows auto's check samples stays lowered (the
  sampled rows are spread over the output).
Parts that need native bf16 units say so and are skipped without them."""
import json
import os
import re
import subprocess
import sys
import tempfile

import client_util

ck = client_util.check.Checker("auto-pays")
preload = os.environ.get("LD_PRELOAD", "")
base = {k: v for k, v in os.environ.items()
        if k != "LD_PRELOAD" and k not in ("AMPSHIM_LOWER_MIN", "AMPSHIM_CPU_LOWER_MIN")}
base["OPENBLAS_NUM_THREADS"] = "1"
base["OMP_NUM_THREADS"] = "1"
tmp = tempfile.mkdtemp(prefix="ampshim-auto-pays-")
native = client_util.check.cpu_has_bf16_units()
print("bf16 units here:", native)


def run(code, shim=True, **settings):
    return client_util.run_program(code, tmp, preload, base, shim, **settings)


def counter(report, symbol, column):
    """A counter of a symbol's row in the report, or None."""
    header = None
    for line in report.splitlines():
        p = line.split()
        if p[:1] == ["symbol"] and "lowered" in p:
            header = p
        elif header and p[:1] == [symbol] and len(p) == len(header):
            return int(p[header.index(column)])
    return None


# ---- a narrow product, and a program made of them ----
NARROW = """import numpy as np
rng = np.random.default_rng(0)
x = rng.standard_normal((20000, 128), dtype=np.float32)
w = rng.standard_normal((128, 10), dtype=np.float32)
for _ in range(5):
    y = x @ w
print(float(np.abs(y).sum()))
"""
out0, _ = run(NARROW, shim=False)
out, err = run(NARROW, AMPSHIM_REPORT="1")
want = "nonative" if native else "nounits"
ck.check(f"a narrow product (20000x128 @ 128x10): not lowered, counted {want}",
         counter(err, "cblas_sgemm", "lowered") == 0 and counter(err, "cblas_sgemm", want) == 5,
         err[-1500:])
ck.check("... its result that of plain fp32", out == out0 and out0, f"{out!r} {out0!r}")

LOGREG = """import numpy as np, warnings
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
X, y = make_classification(n_samples=6000, n_features=128, n_informative=40, n_classes=10,
                           random_state=0)
X = X.astype(np.float32)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = LogisticRegression(max_iter=200).fit(X, y)
print(repr((int(m.n_iter_[0]), m.coef_.tobytes().hex()[:64], float(m.coef_.sum()),
            int((m.predict(X) == y).sum()))))
"""
out0, _ = run(LOGREG, shim=False)
out, err = run(LOGREG, AMPSHIM_REPORT="1")
ck.check("LogisticRegression (lbfgs, float32, 10 classes) ends as plain fp32 does",
         out0 and out == out0, f"{out.strip()} against {out0.strip()}")

# ---- did lowering pay? (needs the native executor) ----
PAID = """import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((256, 256), dtype=np.float32)
for _ in range(140):
    c = a @ a
"""
if native:
    _, err = run(PAID, AMPSHIM_REPORT="1")
    rows = [l for l in err.splitlines() if l.startswith("cblas_sgemm ") and "program.py:5" in l
            and re.search(r" [0-9.]+x ", l)]
    ck.check("the default report: the site's pay row (3 checks, measured speed, a verdict)",
             len(rows) == 1 and re.search(r" 140 +3 +[0-9.]+x (pays|costs|mixed) ", rows[0]),
             err[-2500:])
    ck.check("... and the run's total, saved or lost",
             re.search(r"^lowering (paid|cost): about [0-9.e+]+ ms of CPU time (saved|lost) on the "
                       r"140 lowered calls", err, re.M), err[-1500:])
    JSON = PAID + """
import os, subprocess, sys
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
r = subprocess.run([sys.argv[1], "stats", str(os.getpid()), "--json"], env=env,
                   capture_output=True, text=True)
print(r.stdout.strip().replace("\\n", " "))
"""
    path = os.path.join(tmp, "stats.py")
    with open(path, "w") as f:
        f.write(JSON)
    r = subprocess.run([sys.executable, path, sys.argv[1]], env=dict(base, LD_PRELOAD=preload),
                       capture_output=True, text=True)
    out, err = r.stdout, r.stderr
    try:
        pay = json.loads(out)["cpu_time"]["pay"]
    except Exception:
        pay = {}
    site = [s for s in pay.get("sites", []) if s.get("function", "").startswith("5 ")]
    ck.check("ampctl stats --json: the same pay row and the total",
             len(site) == 1 and site[0]["checks"] == 3 and site[0]["lowered_calls"] == 140 and
             site[0]["ns_made"] > 0 and "saved_ns" in pay, out[-1500:] + err[-800:])
else:
    print("skipped: the pay checks (no native bf16 units here)")

# ---- auto: a reason that holds now ----
# One line: cancelling products first (rows at a common offset far above
# their spread, times columns that sum to zero: an audit over tolerance;
# the spread check, off here, would keep them as made), then clean ones:
# the site goes fp32, then back.
BACK = """import numpy as np
rng = np.random.default_rng(0)
clean = rng.standard_normal((256, 256), dtype=np.float32)
far = clean + np.float32(300)
w = rng.standard_normal((256, 256), dtype=np.float32)
w -= w.mean(axis=0)
for i in range(260):
    a = far if i < 4 else clean
    c = a @ w
"""
if native:
    _, err = run(BACK, AMPSHIM_AUDIT="auto", AMPSHIM_REPORT="1", AMPSHIM_SPREAD_LOSS="off",
                 AMPSHIM_AUDIT_PROBATION="2", AMPSHIM_AUDIT_RECHECK="4", AMPSHIM_LOG="info")
    state = [l for l in err.splitlines() if l.lstrip().startswith("| ")]
    ck.check("auto: a site sent to fp32 by an audit and clean later is lowered, for that reason",
             any(re.search(r"\| lowered, .*fp32@\d+ lowered@\d+", l) for l in state) and
             "(an audit over tolerance)" in err and
             re.search(r"cblas_sgemm from program\.py.*: lowered after \d+ calls \(clean audits",
                       err), err[-2500:])
    ck.check("... and its pay checks weigh it again",
             re.search(r"^cblas_sgemm +program\.py:9 .* \d+ +\d+ +[0-9.]+x (pays|mixed|unsettled) ", err,
                       re.M), err[-2500:])

# ---- auto and torch's convolutions: no twins after the decision ----
CONV = """import torch, ctypes
torch.set_num_threads(1)
ctl = ctypes.CDLL(None).ampshim_ctl
ctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                ctypes.c_void_p, ctypes.c_size_t]
def stat(which):
    v, n = ctypes.c_uint64(0), ctypes.c_size_t(8)
    ctl(f"stats.dnnl_convolution_2d_forward.{which}".encode(), ctypes.byref(v), ctypes.byref(n),
        None, 0)
    return v.value
torch.manual_seed(0)
conv = torch.nn.Conv2d(64, 64, 3, padding=1).eval()
def forward(x):
    with torch.no_grad():
        return conv(x)
for _ in range(12):
    forward(torch.randn(4, 64, 32, 32))
before = (stat("lowered"), stat("converted"))
for _ in range(6):
    forward(torch.randn(4, 64, 24, 24))
print(repr((before, (stat("lowered"), stat("converted")))))
"""
if native:
    def conv_counts(**settings):
        out, err = run(CONV, AMPSHIM_REPORT="1", **settings)
        try:
            return eval(out.strip().splitlines()[-1]), err
        except Exception:
            return ((-1, -1), (-1, -1)), err
    ((low0, conv0), (low1, conv1)), err = conv_counts(AMPSHIM_AUDIT="auto")
    ((dlow0, dconv0), (dlow1, dconv1)), derr = conv_counts()
    # The defaults lower the new shape in its descriptor (no conversion
    # pass), or, where the lowered kernel writes another layout than fp32's
    # (AMX), on a twin (docs/families/onednn.md): auto must do the same.
    ck.check("auto: a convolution site decided lowered runs a new shape as the defaults do "
             "(6 more lowered, converting what the defaults convert: %d; no audit's twin)"
             % (dconv1 - dconv0),
             low1 - low0 == 6 and dlow1 - dlow0 == 6 and conv1 - conv0 == dconv1 - dconv0 and
             conv0 > 0,
             f"auto: lowered {low0}->{low1}, converted {conv0}->{conv1}; defaults: lowered "
             f"{dlow0}->{dlow1}, converted {dconv0}->{dconv1} {err[-1500:]}")
    audited = [int(f[7]) for f in (l.split() for l in err.splitlines())
               if len(f) > 14 and f[0].isdigit() and f[13] == "dnnl_convolution_2d_forward"]
    ck.check("... its one audit the first call's (probation), none after the decision",
             audited == [1], f"audited {audited} {err[-1500:]}")

# ---- auto without units: nothing twice ----
_, err = run(PAID.replace("140", "40"), AMPSHIM_AUDIT="auto", AMPSHIM_REPORT="1",
             ONEDNN_MAX_CPU_ISA="AVX2")
ck.check("auto on a CPU without bf16 units: no call audited, all counted nounits",
         counter(err, "cblas_sgemm", "nounits") == 40 and
         not re.search(r"^\d+ .*cblas_sgemm", err, re.M), err[-1500:])

# ---- auto's decisions under load ----
MIXED = """import numpy as np
rng = np.random.default_rng(0)
big = rng.standard_normal((384, 384), dtype=np.float32)
tall = rng.standard_normal((2048, 64), dtype=np.float32)
small = rng.standard_normal((64, 64), dtype=np.float32)
for i in range(300):
    big @ big
    tall @ small
"""


def decisions(err):
    """Each audit site's state line, without counts and speeds."""
    return sorted(re.sub(r"[0-9.]+x|\d+%|@\d+", "", l.strip())
                  for l in err.splitlines() if l.lstrip().startswith("| "))


if native:
    _, quiet = run(MIXED, AMPSHIM_AUDIT="auto", AMPSHIM_REPORT="1")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        _, loaded = run(MIXED, AMPSHIM_AUDIT="auto", AMPSHIM_REPORT="1")
    finally:
        busy.kill()
        busy.wait()
    ck.check("auto's decisions the same with a busy process on the other core",
             decisions(quiet) and decisions(quiet) == decisions(loaded),
             f"{decisions(quiet)} against {decisions(loaded)}")

# ---- the check's rows: spread over the output, not one block of neighbours ----
# Outputs that vary smoothly along the checked rows (a product's features
# on a slow wave; a convolution's neighbouring pixels): within any 1/8 of
# them the spread is several times smaller than over all. A check that
# took one block of neighbouring rows measured its error against that
# small spread and sent the site to fp32 (err/spr 0.015); spread over the
# rows it measures about the output's own (0.003).
SMOOTH = """import numpy as np
rng = np.random.default_rng(5)
x = rng.standard_normal((512, 256), dtype=np.float32)
t = 2 * np.pi * np.arange(1024) / 1024
u, v = rng.standard_normal((2, 256, 1)).astype(np.float32)
w = (u * np.cos(t) + v * np.sin(t)).astype(np.float32)
for _ in range(12):
    y = x @ w
"""
if native:
    _, err = run(SMOOTH, AMPSHIM_AUDIT="auto", AMPSHIM_REPORT="1")
    ck.check("a product smooth along its rows stays lowered under auto's checks",
             any("lowered," in l for l in err.splitlines() if l.lstrip().startswith("| ")) and
             "over tolerance" not in err, err[-2500:])
ck.finish()
