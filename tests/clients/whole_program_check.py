"""A whole program checked (ampctl(1), CHECK; issue: answers that stay
right, round two): programs of each class no per-call check sees, written
for this test, each run plain fp32, under the defaults, under
AMPSHIM_AUDIT=auto and under `ampctl check`. Every outcome equals fp32's,
or `ampctl check` names the call site responsible and the policy it writes
gives fp32's outcome back:
- a residual-stopped iteration (Newton-Schulz inverse, stopped on I - AX);
- a recurrence on its own output (a Markov chain; its mass is conserved);
- a product feeding a solve (least squares by the normal equations);
- an iteration stopped on a decision (k-means until no label changes);
- softmax over large logits, its argmax saved as an int64 .npy;
- cancellation under the spread threshold: k nearest neighbours by the
  expanded distance, data at offset 3 (the neighbours saved);
- orthogonalisation: block Gram-Schmidt with reorthogonalisation (BCGS2),
  its loss of orthogonality.
A layer of centred data whose outputs (stdout, .npy, .npz, a text file and
a raw float32 file) stay within tolerance is passed with nothing written,
its printed time seen as noise, and --json says the same.
The check lowers by emulation (AMPSHIM_CPU_KERNEL=emulate,
AMPSHIM_LOWER_MIN=0), so it has sites to find on any CPU; the defaults and
auto run as shipped. argv: ampctl's path."""
import json
import os
import subprocess
import sys
import tempfile

import client_util

ck = client_util.check.Checker("whole-program")
ampctl = sys.argv[1]
preload = os.environ.get("LD_PRELOAD", "")
base = {k: v for k, v in os.environ.items()
        if k != "LD_PRELOAD" and k not in ("AMPSHIM_LOWER_MIN", "AMPSHIM_CPU_LOWER_MIN")}
base["OPENBLAS_NUM_THREADS"] = "1"
base["OMP_NUM_THREADS"] = "1"
print("bf16 units here:", client_util.check.cpu_has_bf16_units(),
      "ONEDNN_MAX_CPU_ISA:", os.environ.get("ONEDNN_MAX_CPU_ISA", "-"))
EMULATE = {"AMPSHIM_CPU_KERNEL": "emulate", "AMPSHIM_LOWER_MIN": "0"}

PROGRAMS = {
    "newton_schulz": """import numpy as np
rng = np.random.default_rng(21)
n = 80
q, _ = np.linalg.qr(rng.standard_normal((n, n)))
a = ((q * np.linspace(1, 30, n)) @ q.T).astype(np.float32)
x = (a.T / (np.abs(a).sum(0).max() * np.abs(a).sum(1).max())).astype(np.float32)
eye = np.eye(n, dtype=np.float32)
for it in range(1, 150):
    r = eye - a @ x
    res = float(np.abs(r).max())
    if res < 1e-4:
        break
    x = x + x @ r
print("iterations", it, "converged" if res < 1e-4 else "stalled")
""",
    "markov": """import numpy as np
rng = np.random.default_rng(17)
n = 144
p = rng.random((n, n)).astype(np.float32) ** 3
p /= p.sum(1, keepdims=True)
pi = np.full((48, n), 1.0 / n, dtype=np.float32)
for _ in range(250):
    pi = pi @ p
err = float(np.abs(pi.astype(np.float64).sum(1) - 1).max())
print("mass", "kept" if err < 1e-5 else "drifted")
np.save("stationary.npy", pi[0])
""",
    "normal_equations": """import numpy as np
rng = np.random.default_rng(13)
x = rng.standard_normal((3000, 40)).astype(np.float32)
x[:, 1:] += 0.998 * x[:, :1]
beta = rng.standard_normal(40).astype(np.float32)
y = x @ beta + 0.01 * rng.standard_normal(3000).astype(np.float32)
coef = np.linalg.solve(x.T @ x, x.T @ y)
np.save("coef.npy", coef)
print("coefficient error %.2e" % float(np.abs(coef - beta).max()))
""",
    "kmeans": """import numpy as np
rng = np.random.default_rng(31)
centres = rng.standard_normal((12, 24)).astype(np.float32) * 2
z = (centres[rng.integers(0, 12, 6000)] + rng.standard_normal((6000, 24))).astype(np.float32)
c = z[rng.choice(len(z), 12, replace=False)].copy()
labels = None
for it in range(1, 80):
    d = (z * z).sum(1)[:, None] - 2 * (z @ c.T) + (c * c).sum(1)[None, :]
    new = d.argmin(1)
    if labels is not None and (new == labels).all():
        break
    labels = new
    for j in range(12):
        if (labels == j).any():
            c[j] = z[labels == j].mean(0)
print("iterations", it)
np.save("labels.npy", labels)
""",
    "knn_offset": """import numpy as np
rng = np.random.default_rng(23)
x = (rng.standard_normal((3000, 48)) + 3.0).astype(np.float32)
q = x[:200] + 0.05 * rng.standard_normal((200, 48)).astype(np.float32)
d = (q * q).sum(1)[:, None] - 2 * (q @ x.T) + (x * x).sum(1)[None, :]
np.save("neighbours.npy", np.argsort(d, 1)[:, :5])
print("done")
""",
    "block_gram_schmidt": """import numpy as np
rng = np.random.default_rng(29)
n, b = 4000, 32
a = rng.standard_normal((n, 8 * b)).astype(np.float32)
a[:, b:] += 0.9 * a[:, :1]
q = np.zeros_like(a)
for k in range(0, a.shape[1], b):
    v = a[:, k:k + b].copy()
    for _ in range(2):
        if k:
            v -= q[:, :k] @ (q[:, :k].T @ v)
        v, _ = np.linalg.qr(v)
    q[:, k:k + b] = v
loss = float(np.abs(q.T @ q - np.eye(q.shape[1], dtype=np.float32)).max())
print("orthogonal" if loss < 1e-4 else "lost orthogonality")
""",
    "softmax_argmax": """import numpy as np
rng = np.random.default_rng(41)
h = rng.standard_normal((512, 192)).astype(np.float32) * 4
w = rng.standard_normal((192, 2000)).astype(np.float32)
logits = h @ w
p = np.exp(logits - logits.max(1, keepdims=True))
p /= p.sum(1, keepdims=True)
np.save("tokens.npy", p.argmax(1))
print("done")
""",
}

LAYER = """import time
import numpy as np
t0 = time.perf_counter()
rng = np.random.default_rng(11)
x = rng.standard_normal((1024, 256)).astype(np.float32)
w = rng.standard_normal((256, 128)).astype(np.float32) / 16
h = np.maximum(x @ w, 0)
print("mean activation %.3f" % float(h.mean()))
np.save("hidden.npy", h)
np.savez("layer.npz", hidden=h, steps=np.arange(10))
np.savetxt("first_rows.txt", h[:3])
h[:8].tofile("rows.bin")
print("took %.6f s" % (time.perf_counter() - t0))
"""


def folder(name, code):
    d = tempfile.mkdtemp(prefix="ampshim-whole-%s-" % name)
    with open(os.path.join(d, "program.py"), "w") as f:
        f.write(code)
    return d


def run(d, shim=True, **settings):
    env = dict(base, **settings)
    if shim:
        env["LD_PRELOAD"] = preload
    r = subprocess.run([sys.executable, "program.py"], cwd=d, env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        print(r.stderr[-2000:])
    return r.stdout


def outcome(d, **settings):
    """What the program decides: its standard output and its integer
    outputs (fp32's own figures printed by it)."""
    import numpy as np
    out = run(d, **settings)
    for name in ("labels.npy", "tokens.npy", "neighbours.npy"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            out += "%s %s\n" % (name, np.load(p).tobytes().hex()[:64] +
                               "%d" % int(np.load(p).sum()))
            os.unlink(p)
    return out


def check(d, *extra, **settings):
    env = dict(base, **settings)
    r = subprocess.run([ampctl, *extra, "check", "--", sys.executable, "program.py"], cwd=d,
                       env=env, capture_output=True, text=True)
    print(r.stdout, r.stderr[-1500:])
    return r


for name, code in PROGRAMS.items():
    print("==", name)
    d = folder(name, code)
    fp32 = outcome(d, AMPSHIM_ENABLE="0")
    ck.check("%s: runs as made" % name, fp32 != "")
    for mode, settings in (("emulated", EMULATE), ("defaults", {}),
                           ("auto", {"AMPSHIM_AUDIT": "auto"})):
        got = outcome(d, **settings)
        print("  %s: %s" % (mode, got.strip().replace("\n", " | ")[:120]))
        if got == fp32:
            ck.check("%s %s: its outcome is fp32's" % (name, mode), True)
            continue
        # The outcome changed: the check must name a site, and its policy
        # must give fp32's outcome back.
        policy = os.path.join(d, "ampshim-check.policy")
        if os.path.exists(policy):
            os.unlink(policy)
        r = check(d, **settings)
        sites = [l.strip() for l in r.stdout.splitlines() if l.startswith("  cpu:")]
        ck.check("%s %s: the outcome changed and ampctl check names %s" % (name, mode, sites), r.returncode == 1 and sites and os.path.exists(policy))
        if os.path.exists(policy):
            again = outcome(d, AMPSHIM_POLICY_FILE=policy, **settings)
            ck.check("%s %s: with the check's policy the outcome is fp32's"
                     % (name, mode), again == fp32)
    if name in ("newton_schulz", "markov"):
        # Emulated bf16 changes these on any CPU: the check must find it.
        r = check(d, **EMULATE)
        ck.check("%s: ampctl check finds the emulated lowering's site" % name, r.returncode == 1 and "responsible call sites" in r.stdout)

print("== layer")
d = folder("layer", LAYER)
r = check(d, **EMULATE)
ck.check("a layer of centred data: every output within tolerance", r.returncode == 0 and "verdict: lowering keeps every output within tolerance" in r.stdout)
for out in ("hidden.npy", "layer.npz", "first_rows.txt", "rows.bin"):
    ck.check("%s compared as values, within tolerance" % out, any(l.startswith(out) and "within tolerance" in l for l in r.stdout.splitlines()))
ck.check("no policy written", not os.path.exists(os.path.join(d, "ampshim-check.policy")))
r = check(d, "--json", **EMULATE)
try:
    j = json.loads(r.stdout)
except ValueError:
    j = {}
ck.check("--json: matches, with its sites", j.get("matches") is True and j.get("lowered_sites"))
so = [o for o in j.get("outputs", []) if o["name"] == "standard output"]
ck.check("--json: the printed time is noise (two runs as made differ)", so and so[0]["noisy"] >= 1)
npz = [o for o in j.get("outputs", []) if o["name"] == "layer.npz"]
ck.check("--json: the .npz's two arrays read as values", npz and npz[0]["values"] == 1024 * 128 + 10 and npz[0]["readable"])

# A program that lowers nothing: the check says nothing was tested.
r = subprocess.run([ampctl, "check", "--", sys.executable, "-c", "print(1)"], capture_output=True,
                   text=True, cwd=d)
ck.check("a program that lowers nothing: exit 0, and it says nothing was tested",
         r.returncode == 0 and "no call site was lowered: nothing was tested" in r.stdout, r.stdout)

# Bad input: one line, exit 2, nothing run.
r = subprocess.run([ampctl, "check", "--tolerance", "x", "--", "true"], capture_output=True,
                   text=True)
ck.check("a bad --tolerance: one line, exit 2", r.returncode == 2 and r.stderr.count("\n") == 1)
r = subprocess.run([ampctl, "check"], capture_output=True, text=True)
ck.check("check without a command: exit 2", r.returncode == 2)
ck.finish()
