"""The spread check (ampshim(7), WHAT LOWERING CAN CHANGE) on a program of
our own: a k-means (Lloyd's, distances by the expanded form
|x|^2 - 2 x.c + |c|^2, as most hand-written code does) on 20000 x 64
float32 points around 32 centres, under the default of a CPU with bf16
units, simulated on any CPU (AMPSHIM_CPU_KERNEL=emulate with the native
crossover, 96^3 multiply-adds, as AMPSHIM_LOWER_MIN), each run a child
process:

- data at offset 100 (bf16's spacing there, 0.5, is the noise's size):
  numpy's X @ C.T is kept as made, counted spread, and the labels and
  inertia are bit for bit those of a run without the shim; with
  AMPSHIM_SPREAD_LOSS=off it is lowered and most labels change;
- the same data centred: lowered as before, no call counted spread;
- AMPSHIM_AUDIT=1: the audit's table has the site, its spread column and
  fp32? yes, and the policy it writes keeps the site fp32;
- AMPSHIM_AUDIT=auto: the site goes to fp32 on the evidence, the answer is
  the no-shim one;
- one feature far from the origin (a year, 2024 +- 3) among 256 centred
  ones, at its first, a middle and its last place: the product is kept as
  made and the labels are the no-shim ones (the check reads every summed
  index, not a sample of them)."""
import hashlib
import os
import sys
import tempfile

from client_util import Checker, measure_child, shim_loaded, shim_stat as counter


def measure(offset):
    import numpy as np
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((32, 64))
    x = (offset + centres[rng.integers(0, 32, 20000)]
         + rng.normal(0, 0.5, (20000, 64))).astype(np.float32)
    c = x[rng.choice(20000, 32, replace=False)].copy()
    xx = (x * x).sum(1)[:, None]
    first = hashlib.sha256((x @ c.T).tobytes()).hexdigest()
    for _ in range(6):
        labels = (xx - 2 * (x @ c.T) + (c * c).sum(1)[None, :]).argmin(1)
        for j in range(32):
            if (labels == j).any():
                c[j] = x[labels == j].mean(0)
    d = x.astype(np.float64) - c.astype(np.float64)[labels]
    out = {"labels": labels.tolist(), "inertia": float((d * d).sum()), "product": first,
           "bits": hashlib.sha256(labels.tobytes() + c.tobytes()).hexdigest()}
    for w in ("lowered", "spread"):
        out[w] = counter("cblas_sgemm", w)
    print(repr(out))


def measure_feature(place):
    import numpy as np
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8192, 256)).astype(np.float32)
    x[:, place] = 2024 + rng.integers(-3, 4, 8192)
    c = x[rng.choice(8192, 16, replace=False)].copy()
    for _ in range(3):
        labels = ((x * x).sum(1)[:, None] - 2 * np.matmul(x, c.T) + (c * c).sum(1)[None, :]).argmin(1)
        for j in range(16):
            if (labels == j).any():
                c[j] = x[labels == j].mean(0)
    out = {"labels": labels.tolist(),
           "bits": hashlib.sha256(labels.tobytes() + c.tobytes()).hexdigest()}
    for w in ("lowered", "spread"):
        out[w] = counter("cblas_sgemm", w)
    print(repr(out))


if len(sys.argv) == 3 and sys.argv[1] == "--measure":
    if sys.argv[2].startswith("feature:"):
        measure_feature(int(sys.argv[2][8:]))
    else:
        measure(float(sys.argv[2]))
    sys.exit(0)

ck = Checker("spread_check")
ck.check("libampshim.so is loaded (the test runs under LD_PRELOAD)", shim_loaded())
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base["OPENBLAS_NUM_THREADS"] = "1"
simulated = {"AMPSHIM_CPU_KERNEL": "emulate", "AMPSHIM_LOWER_MIN": str(96 ** 3)}


def run(offset, shim=True, **settings):
    return measure_child(__file__, offset, base, shim, **settings)


def wrong(got, want):
    a, b = got.get("labels", []), want.get("labels", [])
    return sum(x != y for x, y in zip(a, b)) / max(len(b), 1) if len(a) == len(b) else 1.0


def brief(r):
    return {k: v for k, v in r.items() if k not in ("labels", "product", "bits")}


far_plain, _ = run(100, shim=False)
far, _ = run(100, **simulated)
far_off, _ = run(100, AMPSHIM_SPREAD_LOSS="off", **simulated)
print("offset 100 without the shim:", brief(far_plain))
print("under the shim:             ", brief(far))
print("AMPSHIM_SPREAD_LOSS=off:    ", brief(far_off), f"labels wrong {wrong(far_off, far_plain):.1%}")
ck.check("offset 100: X @ C.T kept as made, counted spread, none lowered",
         far.get("spread", 0) > 0 and far.get("lowered", 1) == 0, f"{brief(far)}")
ck.check("offset 100: labels and centres bit for bit as without the shim",
         far.get("bits") is not None and far.get("bits") == far_plain.get("bits"))
ck.check("offset 100, AMPSHIM_SPREAD_LOSS=off: lowered, and most labels change",
         far_off.get("lowered", 0) > 0 and far_off.get("spread", 1) == 0 and
         wrong(far_off, far_plain) > 0.5, f"{brief(far_off)}")

near_plain, _ = run(0, shim=False)
near, _ = run(0, **simulated)
print("centred without the shim:", brief(near_plain))
print("centred under the shim:  ", brief(near), f"labels wrong {wrong(near, near_plain):.1%}")
ck.check("centred: lowered as before, nothing counted spread",
         near.get("lowered", 0) > 0 and near.get("spread", 1) == 0, f"{brief(near)}")
ck.check("centred: lowering changed the product",
         near.get("product") is not None and near.get("product") != near_plain.get("product"))
ck.check("centred: the clustering as good as fp32's (inertia within 1%)",
         abs(near.get("inertia", 0) / near_plain.get("inertia", 1) - 1) < 0.01,
         f"{near.get('inertia')} {near_plain.get('inertia')}")

work = tempfile.mkdtemp(prefix="spread_check_")
policy = os.path.join(work, "audit.policy")
audited, report = run(100, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_POLICY=policy, **simulated)
rows = [line.split() for line in report.splitlines() if line[:1].isdigit()]
site = [r for r in rows if len(r) > 14 and r[13] == "cblas_sgemm"]
print("\n".join(line for line in report.splitlines() if "audit" in line or line[:1].isdigit()))
ck.check("AMPSHIM_AUDIT=1: the answer is the no-shim one",
         audited.get("bits") is not None and audited.get("bits") == far_plain.get("bits"))
# The sites are measure()'s two product lines (runtime/sites.h): the first
# product, and the loop's.
source = open(__file__).read().splitlines()
end = next(i for i, text in enumerate(source) if text.startswith("if len(sys.argv)"))
lines = {f"spread_check.py:{i + 1}" for i, text in enumerate(source[:end]) if "(x @ c.T)" in text}
ck.check("the audit's table: cblas_sgemm from measure()'s product lines, their spread, fp32? yes",
         len(site) == 2 and {r[14] for r in site} == lines and
         all(float(r[8]) > 0.05 and r[12] == "yes" for r in site), f"{site} {lines}")
with open(policy) as f:
    text = f.read()
ck.check("the audit's policy keeps the site fp32, saying why",
         all(any(line.startswith(f"cpu:cblas_sgemm@{where}=fp32") and "spread" in line
                 for line in text.splitlines()) for where in lines), text)

for place in (0, 137, 255):
    plain, _ = run(f"feature:{place}", shim=False)
    got, _ = run(f"feature:{place}", **simulated)
    ck.check(f"one far feature at place {place} of 256: kept as made, counted spread",
             got.get("spread", 0) > 0 and got.get("lowered", 1) == 0, f"{brief(got)}")
    ck.check(f"one far feature at place {place} of 256: labels bit for bit the no-shim ones",
             got.get("bits") is not None and got.get("bits") == plain.get("bits"))

auto, report = run(100, AMPSHIM_AUDIT="auto", **simulated)
ck.check("AMPSHIM_AUDIT=auto: the answer is the no-shim one",
         auto.get("bits") is not None and auto.get("bits") == far_plain.get("bits"))
ck.check("AMPSHIM_AUDIT=auto: the site is fp32 on the evidence, and says so",
         "| fp32 (operands too far from the origin for their spread), 0% of its flops lowered"
         in report, report[-2000:])
ck.finish()
