"""Call sites in the program's own code (runtime/sites.c), with whichever
Python runs this (Debian's, or pip's venv as pip-sites): a numpy script's
three product lines are three audit sites naming its file and lines, from
the main thread and from a thread pool alike; products inside fp32-list ops
(torch.cdist, torch.pinverse, numpy.linalg.pinv, scipy.linalg.expm) keep
fp32 accuracy while torch.mm and a @ b at the same sizes are lowered; a
library whose function name is 200 characters long: the policy the audit
writes from one run keeps its site fp32 in the next. Lowering is forced
with AMPSHIM_CPU_KERNEL=emulate where the CPU has no bf16 units."""
import os
import re
import subprocess
import sys
import tempfile

import client_util

ck = client_util.check.Checker("sites")


def check(ok, what):
    ck.check(what, ok)

preload = os.environ.get("LD_PRELOAD", "")
base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
tmp = tempfile.mkdtemp(prefix="ampshim-sites-")


def run(code, shim=True, **settings):
    return client_util.run_program(code, tmp, preload, base, shim, **settings)


# Where the CPU has no bf16 units the project's way to lower is emulation.
native = client_util.check.cpu_has_bf16_units()
force = {} if native else {"AMPSHIM_CPU_KERNEL": "emulate", "AMPSHIM_LOWER_MIN": "0"}
print("bf16 units here:", native)

# ---- three lines, three sites ----
THREE = """import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((192, 192), dtype=np.float32)
b = rng.standard_normal((192, 192), dtype=np.float32)
def layer(x):
    return x @ b
def work():
    for i in range(3):
        c = a @ b
        d = np.dot(a, b.T)
        e = layer(a)
%s
"""
sites_re = re.compile(r"program\.py:(\d+) (\S+)")
for how, tail in [("main thread", "work()"),
                  ("thread pool", "import concurrent.futures as cf\n"
                                  "with cf.ThreadPoolExecutor(3) as p:\n"
                                  "    list(p.map(lambda _: work(), range(3)))")]:
    _, err = run(THREE % tail, AMPSHIM_AUDIT="1", AMPSHIM_REPORT="1", **force)
    found = sorted(set(sites_re.findall(err)))
    check(found == [("10", "work"), ("6", "layer"), ("9", "work")],
             f"{how}: three product lines are three sites: {found}")

# ---- the op around a product ----
ACCURACY = """import numpy as np, scipy.linalg
rng = np.random.default_rng(3)
def rel(x, ref):
    return float(np.linalg.norm(np.asarray(x, np.float64) - ref) / np.linalg.norm(ref))
n = 192
A = rng.standard_normal((n, n)).astype(np.float32)
B = rng.standard_normal((n, n)).astype(np.float32)
A64, B64 = A.astype(np.float64), B.astype(np.float64)
out = {"pinv": rel(np.linalg.pinv(A), np.linalg.pinv(A64)),
       "expm": rel(scipy.linalg.expm(A / 30), scipy.linalg.expm(A64 / 30)),
       "matmul": rel(A @ B, A64 @ B64)}
try:
    import torch
    x = torch.from_numpy(rng.standard_normal((384, 48)).astype(np.float32) + 8)
    y = torch.from_numpy(rng.standard_normal((384, 48)).astype(np.float32) + 8)
    out["cdist"] = rel(torch.cdist(x, y).numpy(), torch.cdist(x.double(), y.double()).numpy())
    out["pinverse"] = rel(torch.pinverse(torch.from_numpy(A)).numpy(), np.linalg.pinv(A64))
    out["mm"] = rel(torch.mm(torch.from_numpy(A), torch.from_numpy(B)).numpy(), A64 @ B64)
except ImportError:
    pass
print(out)
"""
plain_out, _ = run(ACCURACY, shim=False)
low_out, low_report = run(ACCURACY, AMPSHIM_REPORT="1", **force)
plain, low = eval(plain_out.strip().splitlines()[-1]), eval(low_out.strip().splitlines()[-1])
for op in ["pinv", "expm", "cdist", "pinverse"]:
    if op in plain:
        check(low[op] <= 2 * plain[op] + 1e-7,
                 f"{op} inside an fp32-list op keeps fp32 accuracy: {low[op]:.3g} "
                 f"(plain {plain[op]:.3g})")
kept = re.search(r"kept fp32 by the op around them: (\d+) calls \(([^)]*)\)", low_report)
check(kept is not None and "pinverse" in kept.group(2),
      f"the report counts the calls kept fp32 by their op: {kept and kept.group(0)}")
for op in ["matmul", "mm"]:
    if op in plain:
        check(low[op] > 1e-4 and plain[op] < 1e-5,
                 f"{op} at the same size is still lowered: {low[op]:.3g} (plain {plain[op]:.3g})")

# ---- a 200-character function name: the audit's policy keeps it fp32 ----
blas = None
for name in ["libopenblas.so.0", "libblas.so.3"]:
    for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"]:
        if os.path.exists(os.path.join(d, name)) and blas is None:
            blas = os.path.join(d, name)
long_name = "solver_" + "x" * 185 + "_factor"
src = os.path.join(tmp, "longname.c")
lib = os.path.join(tmp, "liblongname_" + "y" * 70 + ".so")
with open(src, "w") as f:
    f.write("""
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
void %s(int n, const float *a, const float *b, float *c, float *d)
{
    cblas_sgemm(102, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    cblas_sgemm(102, 112, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, d, n);
}
""" % long_name)
built = blas and subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, src, blas]).returncode == 0
check(bool(built), "a library with a 200-character function name builds")
if built:
    LONG = """import ctypes, hashlib, numpy as np
lib = ctypes.CDLL(%r)
n = 128
rng = np.random.default_rng(5)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
c = np.zeros((n, n), np.float32); d = np.zeros((n, n), np.float32)
p = lambda x: x.ctypes.data_as(ctypes.c_void_p)
getattr(lib, %r)(n, p(a), p(b), p(c), p(d))
print(hashlib.sha256(c.tobytes() + d.tobytes()).hexdigest())
""" % (lib, long_name)
    policy = os.path.join(tmp, "policy.txt")
    want, _ = run(LONG, shim=False)
    _, err = run(LONG, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_TOLERANCE="1e-9",
                 AMPSHIM_AUDIT_POLICY=policy, AMPSHIM_REPORT="1", **force)
    rows = [l for l in err.splitlines() if "liblongname" in l]
    check(len(rows) == 1, f"one function is one site, however long its name: {len(rows)}")
    text = open(policy).read() if os.path.exists(policy) else ""
    entries = [l for l in text.splitlines() if "liblongname" in l and "=fp32" in l]
    check(len(entries) == 1, f"the audit's policy keeps it fp32: {entries}")
    got, err = run(LONG, AMPSHIM_POLICY_FILE=policy, AMPSHIM_REPORT="1", **force)
    check(got == want and want, "the next run, with that policy, is fp32's bit for bit")
    check(re.search(r"\bcblas_sgemm\s+mm\s+lower\s+2\s+0\s+2\b", err) is not None,
             "its two calls counted fp32")

ck.finish()
