"""Debian's numpy and torch under the accuracy audit (AMPSHIM_AUDIT=1): the
exit report names their call sites (the program's Python line that made
each product, and the symbol: runtime/sites.h), the
products are audited, and the results the program keeps are bit for bit
those of a run without the shim.

Run with LD_PRELOAD=libampshim.so; it starts its own children."""
import os
import pickle
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)


def products():
    """numpy A@B (cblas_sgemm), A@A.T (cblas_ssyrk); torch mm (sgemm_)."""
    import numpy as np
    rng = np.random.default_rng(7)
    a = rng.standard_normal((200, 300)).astype(np.float32)
    b = rng.standard_normal((300, 150)).astype(np.float32)
    out = {"np_mm": (a @ b).tobytes(), "np_gram": (a @ a.T).tobytes()}
    try:
        import torch
        torch.set_num_threads(1)
        out["torch_mm"] = torch.mm(torch.from_numpy(a), torch.from_numpy(b)).numpy().tobytes()
    except ImportError:
        pass
    return out


if len(sys.argv) > 1 and sys.argv[1] == "--child":
    sys.stdout.buffer.write(pickle.dumps(products()))
    sys.stdout.flush()
    sys.exit(0)

checker = Checker("audit_check (clients)")
check = checker.check
preload = os.environ.get("LD_PRELOAD", "")
base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
base["OPENBLAS_NUM_THREADS"] = "1"
base["AMPSHIM_LOWER_MIN"] = "0"  # the audit of small products: the size rule off


def child(env):
    r = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True)
    check("child exits 0", r.returncode == 0, r.stderr.decode(errors="replace")[-2000:])
    return pickle.loads(r.stdout) if r.returncode == 0 else {}, r.stderr.decode(errors="replace")


plain, _ = child(base)
audited, report = child(dict(base, LD_PRELOAD=preload, AMPSHIM_AUDIT="1", AMPSHIM_CPU_KERNEL="emulate"))
check("products ran", set(plain) >= {"np_mm", "np_gram"} and set(audited) == set(plain), str(set(audited)))
for name in plain:
    check(f"{name}: the audit leaves the result bit-identical to a run without the shim",
          audited.get(name) == plain[name])
rows = [line.split() for line in report.splitlines() if line[:1].isdigit()]
callers = {(r[13], r[14]) for r in rows if len(r) > 14}
# A product's site is the line of products() that made it, not numpy's or
# torch's library.
source = open(__file__).read().splitlines()
np_line, torch_line = (1 + next(i for i, text in enumerate(source) if f'out["{k}"]' in text
                                 or f'{{"{k}"' in text) for k in ("np_mm", "torch_mm"))
check("the report has a header", "ampshim audit, pid" in report, report[-3000:])
check("numpy's A@B: cblas_sgemm from its line of products()",
      ("cblas_sgemm", f"audit_check.py:{np_line}") in callers, str(callers))
check("numpy's A@A.T: cblas_ssyrk from the same line",
      ("cblas_ssyrk", f"audit_check.py:{np_line}") in callers, str(callers))
if "torch_mm" in plain:
    check("torch.mm: sgemm_ from its line of products()",
          ("sgemm_", f"audit_check.py:{torch_line}") in callers, str(callers))
check("every site audited, errors finite and small (bf16 on random data)",
      rows and all(r[7] != "0" and r[1] != "inf" and float(r[1]) < 0.02 for r in rows), report[-3000:])
checker.finish()
