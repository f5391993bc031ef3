"""The classes of answers lowering can change (issue "answers that stay
right, round two"; ampshim(7), WHAT LOWERING CAN CHANGE), side by side in
one run: each program in its own process as made (AMPSHIM_ENABLE=0), under
the defaults and under AMPSHIM_AUDIT=auto, on this CPU as it is (native
units where it has them: nothing is simulated), one thread. Each prints its
outcome (a decision, or an error against float64); the table shows them
and whether each equals the fp32 one. With --check, `ampctl check` runs on
every program whose defaults changed its outcome and says which sites it
keeps fp32, and the outcome with its policy.

usage: /usr/bin/python3 bench/answers_classes.py SHIM [AMPCTL [--check]]"""
import os
import subprocess
import sys
import tempfile

from bench_util import cpu_line, plain_env

PROGRAMS = [
    ("a residual-stopped iteration: Newton-Schulz inverse, stop on I - AX", """
import numpy as np
rng = np.random.default_rng(5)
n = 256
q, _ = np.linalg.qr(rng.standard_normal((n, n)))
a = ((q * np.linspace(1, 20, n)) @ q.T).astype(np.float32)
x = (a.T / (np.abs(a).sum(0).max() * np.abs(a).sum(1).max())).astype(np.float32)
eye = np.eye(n, dtype=np.float32)
for it in range(1, 200):
    r = eye - a @ x
    if float(np.abs(r).max()) < 1e-4:
        break
    x = x + x @ r
print("iterations", it)
"""),
    ("a recurrence: Markov chain pi <- pi P, its mass", """
import numpy as np
rng = np.random.default_rng(7)
p = rng.random((512, 512)).astype(np.float32) ** 4
p /= p.sum(1, keepdims=True)
pi = np.full((256, 512), 1.0 / 512, dtype=np.float32)
for _ in range(200):
    pi = pi @ p
print("mass error %.1e" % float(np.abs(pi.astype(np.float64).sum(1) - 1).max()))
"""),
    ("a recurrence: matrix power M <- M A, 60 steps", """
import numpy as np
rng = np.random.default_rng(9)
a = (np.eye(384) + rng.standard_normal((384, 384)) / 400).astype(np.float32)
m = np.eye(384, dtype=np.float32)
for _ in range(60):
    m = m @ a
exact = np.linalg.matrix_power(a.astype(np.float64), 60)
print("error %.1e" % float(np.abs(m - exact).max() / np.abs(exact).max()))
"""),
    ("a product feeding a solve: normal equations", """
import numpy as np
rng = np.random.default_rng(3)
x = rng.standard_normal((20000, 200)).astype(np.float32)
x[:, 1:] += 0.99 * x[:, :1]
beta = rng.standard_normal(200)
y = (x @ beta.astype(np.float32)).astype(np.float32)
err = []
for _ in range(3):
    coef = np.linalg.solve(x.T @ x, x.T @ y)
    err.append(float(np.abs(coef - beta).max()))
print("coefficient error %.1e (first solve %.1e)" % (err[-1], err[0]))
"""),
    ("cancellation: k-means, data at offset 100", """
import numpy as np
rng = np.random.default_rng(1)
centres = rng.standard_normal((32, 64))
x = (100 + centres[rng.integers(0, 32, 20000)] + rng.normal(0, 0.5, (20000, 64))).astype(np.float32)
c = x[rng.choice(20000, 32, replace=False)].copy()
for _ in range(8):
    labels = ((x * x).sum(1)[:, None] - 2 * (x @ c.T) + (c * c).sum(1)[None, :]).argmin(1)
    for j in range(32):
        if (labels == j).any():
            c[j] = x[labels == j].mean(0)
print("labels", hex(hash(labels.tobytes()) & 0xffffffff))
"""),
    ("one far feature (a year) among 256 centred ones, k-means", """
import numpy as np
rng = np.random.default_rng(2)
x = rng.standard_normal((20000, 256)).astype(np.float32)
x[:, 137] = 2024 + rng.integers(-3, 4, 20000)
c = x[rng.choice(20000, 16, replace=False)].copy()
for _ in range(5):
    labels = ((x * x).sum(1)[:, None] - 2 * (x @ c.T) + (c * c).sum(1)[None, :]).argmin(1)
    for j in range(16):
        if (labels == j).any():
            c[j] = x[labels == j].mean(0)
print("labels", hex(hash(labels.tobytes()) & 0xffffffff))
"""),
    ("an iteration stopped on a decision: k-means until no label changes", """
import numpy as np
rng = np.random.default_rng(2)
centres = rng.standard_normal((16, 128)).astype(np.float32) * 3
x = (centres[rng.integers(0, 16, 30000)] + rng.standard_normal((30000, 128))).astype(np.float32)
xc = x - x.mean(0)
w, v = np.linalg.eigh(xc.T @ xc / len(xc))
z = xc @ v[:, -32:]
c = z[rng.choice(len(z), 16, replace=False)].copy()
labels = None
for it in range(1, 101):
    new = ((z * z).sum(1)[:, None] - 2 * (z @ c.T) + (c * c).sum(1)[None, :]).argmin(1)
    if labels is not None and (new == labels).all():
        break
    labels = new
    for j in range(16):
        if (labels == j).any():
            c[j] = z[labels == j].mean(0)
print("iterations", it)
"""),
    ("softmax over large logits: next-token argmax", """
import numpy as np
rng = np.random.default_rng(41)
h = rng.standard_normal((2048, 512)).astype(np.float32) * 4
w = rng.standard_normal((512, 4096)).astype(np.float32)
logits = h @ w
print("tokens", hex(hash(logits.argmax(1).tobytes()) & 0xffffffff))
"""),
]


def run(code, env, cwd):
    path = os.path.join(cwd, "program.py")
    with open(path, "w") as f:
        f.write(code)
    r = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, cwd=cwd)
    return r.stdout.strip() or ("failed: " + r.stderr.strip().splitlines()[-1][:60]
                                if r.stderr.strip() else "failed")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    shim = os.path.abspath(sys.argv[1])
    ampctl = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    check = "--check" in sys.argv
    base = plain_env()
    base["OPENBLAS_NUM_THREADS"] = "1"
    base["OMP_NUM_THREADS"] = "1"
    print(cpu_line())
    print("shim:", shim)
    tmp = tempfile.mkdtemp(prefix="ampshim-classes-")
    print(f"{'class':<70} {'fp32':<28} {'defaults':<28} {'auto':<28}")
    for name, code in PROGRAMS:
        out = {}
        for mode, extra in (("fp32", {"AMPSHIM_ENABLE": "0"}), ("defaults", {}),
                            ("auto", {"AMPSHIM_AUDIT": "auto"})):
            out[mode] = run(code, dict(base, LD_PRELOAD=shim, **extra), tmp)
        mark = {m: ("" if out[m] == out["fp32"] else " *") for m in out}
        print(f"{name:<70} {out['fp32']:<28} {out['defaults'] + mark['defaults']:<28} "
              f"{out['auto'] + mark['auto']:<28}")
        if check and ampctl and out["defaults"] != out["fp32"]:
            path = os.path.join(tmp, "program.py")
            r = subprocess.run([ampctl, "check", "--", sys.executable, path],
                               env=dict(base, LD_PRELOAD=""), capture_output=True, text=True,
                               cwd=tmp)
            sites = [l.strip() for l in r.stdout.splitlines() if l.startswith("  cpu:")]
            policy = os.path.join(tmp, "ampshim-check.policy")
            fixed = run(code, dict(base, LD_PRELOAD=shim, AMPSHIM_POLICY_FILE=policy), tmp) \
                if os.path.exists(policy) else "-"
            print(f"{'':<4}ampctl check: {r.stdout.count(chr(10))} lines, exit {r.returncode}; "
                  f"responsible {sites}; with its policy: {fixed}"
                  f"{'' if fixed == out['fp32'] else ' *'}")
            if os.path.exists(policy):
                os.unlink(policy)
    print("* differs from fp32's outcome")


main()
