"""Debian's scipy under ampshim: what the size rule and the numerical-library
list (policy/data/libraries.txt) keep right, each measured in a child
process per setting (issue 26's cases, defined in bench/lowering_changes.py):

- lobpcg on an all-float32 generalized problem (scipy's own
  test_diagonal_data_types, n = 20, 3 eigenpairs) gives [4, 5, 6] within
  1e-4 under the default settings: its products (20x20x3 and smaller, made
  by numpy for scipy's Python code) are below the size where lowering pays.
  With AMPSHIM_LOWER_MIN=0 (autocast's rule, every size) they are lowered
  and the answer moves: the default is what keeps it.
- PROPACK's complex64 svds: U orthogonal to 1e-5 (PROPACK's own sgemm_
  calls, from _cpropack, are internal) even at AMPSHIM_LOWER_MIN=0.
- SuperLU's float32 splu: its solution's residual within float32 error.
- The list is overridable: a call-site entry naming those objects lowers
  their calls, and then both results degrade.
- A product at a size that pays (256^3 via numpy) is still lowered."""
import ast
import os
import subprocess
import sys

from client_util import Checker, shim_loaded


def measure():
    os.environ["SCIPY_USE_PROPACK"] = "1"  # before scipy is imported
    import warnings

    import numpy as np
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "bench"))
    from lowering_changes import lobpcg_small, propack, superlu
    warnings.simplefilter("ignore")
    out = {"lobpcg": lobpcg_small(), "propack": propack(), "splu": superlu()}
    # A product that pays: lowered, so it differs from fp32's (fp32's error
    # here is about 1e-5, bf16's about 1e-1).
    g = np.random.default_rng(3).standard_normal((256, 256)).astype(np.float32)
    h = np.random.default_rng(4).standard_normal((256, 256)).astype(np.float32)
    out["big_mm_changed"] = bool(np.abs(g @ h - g.astype(np.float64) @ h).max() > 1e-3)
    print(repr(out))


if len(sys.argv) > 1 and sys.argv[1] == "--measure":
    measure()
    sys.exit(0)

ck = Checker("libraries_check")
ck.check("libampshim.so is loaded (the test runs under LD_PRELOAD)", shim_loaded())
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base["OPENBLAS_NUM_THREADS"] = "1"
import check  # noqa: E402  (tests/check.py, on the path through client_util)

native = check.cpu_has_bf16_units()


def run(**settings):
    env = dict(base, **settings)
    r = subprocess.run([sys.executable, __file__, "--measure"], env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        print(r.stderr)
        return {}
    return ast.literal_eval(r.stdout.strip().splitlines()[-1])


default = run()
print("default settings:", default)
ck.check("lobpcg gives [4, 5, 6] within 1e-4 under the default settings",
         default.get("lobpcg", 1) < 1e-4, f"off by {default.get('lobpcg')}")
ck.check("PROPACK's complex64 U is orthogonal to 1e-5", default.get("propack", 1) < 1e-5,
         f"{default.get('propack')}")
ck.check("splu's float32 solution is within float32 error", default.get("splu", 1) < 1e-5,
         f"{default.get('splu')}")
# auto lowers nothing on a CPU without native bf16 units: lowering never pays.
ck.check("a 256^3 product is lowered exactly where it pays",
         default.get("big_mm_changed") == native, f"(native bf16 units: {native})")

every = run(AMPSHIM_LOWER_MIN="0")
print("every size:", every)
# Its small products are lowered then, until one's output goes into the
# Cholesky lobpcg makes of it: a consumer (runtime/products.h), whose site
# then runs fp32, and the answer stays right (it was off by 2.7 before).
ck.check("AMPSHIM_LOWER_MIN=0: lobpcg's products lowered until one feeds its Cholesky, then "
         "fp32: [4, 5, 6] within 1e-4", every.get("lobpcg", 1) < 1e-4,
         f"off by {every.get('lobpcg')}")
ck.check("at every size PROPACK's and SuperLU's own products still run as made",
         every.get("propack", 1) < 1e-5 and every.get("splu", 1) < 1e-5,
         f"{every.get('propack')}, {every.get('splu')}")
ck.check("at every size the 256^3 product is lowered", every.get("big_mm_changed") is True)

overridden = run(AMPSHIM_LOWER_MIN="0", AMPSHIM_POLICY="*@_?propack*=lower,*@_superlu*=lower")
print("list overridden:", overridden)
ck.check("call-site entries naming _cpropack and _superlu lower their calls",
         overridden.get("propack", 0) > 1e-5 and overridden.get("splu", 0) > 1e-5,
         f"{overridden.get('propack')}, {overridden.get('splu')}")
ck.finish()
