"""Debian's numpy under ampshim (bf16, the CPU default): A@B (cblas_sgemm) and
A@A.T (cblas_ssyrk) are lowered and equal numpy without the shim on
bf16-rounded operands, bit for bit; A@x (sgemv), np.dot (sdot) and float64
products are unchanged."""
import sys

import numpy as np

from client_util import Checker, emit_reference, reference, round_bf16, shim_loaded


def inputs():
    rng = np.random.default_rng(1234)
    A = rng.standard_normal((96, 80), dtype=np.float32)
    B = rng.standard_normal((80, 72), dtype=np.float32)
    x = rng.standard_normal(80, dtype=np.float32)
    y = rng.standard_normal(80, dtype=np.float32)
    return A, B, x, y


def compute(A, B, x, y):
    return {
        "mm": A @ B,
        "aat": A @ A.T,
        "mv": A @ x,
        "dot": np.float32(np.dot(x, y)),
        "f64": A.astype(np.float64) @ B.astype(np.float64),
    }


if len(sys.argv) > 2 and sys.argv[1] == "--reference":
    A, B, x, y = inputs()
    emit_reference({"rounded": compute(round_bf16(A), round_bf16(B), x, y),
                    "plain": compute(A, B, x, y)})
    sys.exit(0)

c = Checker("numpy_check")
c.check("ampshim is loaded in this process", shim_loaded())
ref = reference(__file__, "bf16")
A, B, x, y = inputs()
got = compute(A, B, x, y)
c.same_bits("A@B lowered to bf16", got["mm"], ref["rounded"]["mm"])
c.differs("A@B", got["mm"], ref["plain"]["mm"])
c.same_bits("A@A.T (ssyrk) lowered to bf16", got["aat"], ref["rounded"]["aat"])
c.differs("A@A.T", got["aat"], ref["plain"]["aat"])
c.same_bits("A@x (sgemv) unchanged", got["mv"], ref["plain"]["mv"])
c.same_bits("np.dot(x, y) (sdot) unchanged", got["dot"], ref["plain"]["dot"])
c.check("float64 product unchanged", np.array_equal(got["f64"], ref["plain"]["f64"]))
c.finish()
