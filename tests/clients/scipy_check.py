"""Debian's scipy under ampshim (bf16, the CPU default): float32 and complex64
LAPACK drivers nobody listed (eigh(a, b): ssygvd; ordqz and qz: sgges and
stgsen; svd: gesdd; lstsq: gelsd; schur: sgees) compute bit for bit as
without the shim, because the BLAS calls LAPACK makes to itself are its own
business, while the program's own product A@B is still lowered exactly."""
import sys

import numpy as np

from client_util import Checker, emit_reference, reference, round_bf16, shim_loaded


def inputs():
    rng = np.random.default_rng(2024)
    n = 64
    a = rng.standard_normal((n, n))
    a = (a + a.T).astype(np.float32)
    b = rng.standard_normal((n, n))
    b = (b @ b.T + n * np.eye(n)).astype(np.float32)
    g = rng.standard_normal((n, n)).astype(np.float32)
    h = rng.standard_normal((n, n)).astype(np.float32)
    tall = rng.standard_normal((2 * n, n)).astype(np.float32)
    rhs = rng.standard_normal((2 * n, 3)).astype(np.float32)
    c = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
    ctall = (rng.standard_normal((2 * n, n)) + 1j * rng.standard_normal((2 * n, n))).astype(np.complex64)
    crhs = (rng.standard_normal((2 * n, 2)) + 1j * rng.standard_normal((2 * n, 2))).astype(np.complex64)
    return a, b, g, h, tall, rhs, c, ctall, crhs


def compute(a, b, g, h, tall, rhs, c, ctall, crhs):
    import scipy.linalg as sl
    out = {}
    out["eigh_ab_w"], out["eigh_ab_v"] = sl.eigh(a, b)
    aa, bb, alpha, beta, q, z = sl.ordqz(g, h, sort="lhp", output="real")
    out["ordqz_aa"], out["ordqz_q"] = aa, q
    out["qz_aa"], out["qz_bb"], out["qz_q"], out["qz_z"] = sl.qz(g, h, output="real")
    out["svd_u"], out["svd_s"], out["svd_vt"] = sl.svd(g, lapack_driver="gesdd")
    out["lstsq_x"] = sl.lstsq(tall, rhs, lapack_driver="gelsd")[0]
    out["schur_t"], out["schur_z"] = sl.schur(g)
    out["csvd_u"], out["csvd_s"], out["csvd_vt"] = sl.svd(c, lapack_driver="gesdd")
    out["clstsq_x"] = sl.lstsq(ctall, crhs, lapack_driver="gelsd")[0]
    out["mm"] = g @ h
    return out


if len(sys.argv) > 2 and sys.argv[1] == "--reference":
    args = inputs()
    g, h = args[2], args[3]
    emit_reference({"plain": compute(*args), "rounded_mm": round_bf16(g) @ round_bf16(h)})
    sys.exit(0)

ck = Checker("scipy_check")
ck.check("ampshim is loaded in this process", shim_loaded())
ref = reference(__file__, "bf16")
got = compute(*inputs())
for key in sorted(got):
    if key == "mm":
        continue
    want = ref["plain"][key]
    ok = got[key].dtype == want.dtype and got[key].tobytes() == want.tobytes()
    ck.check(f"{key} bit-identical to scipy without the shim", ok,
             "" if ok else f"max |diff| {np.max(np.abs(got[key] - want)):.3g}")
ck.same_bits("the program's own g@h lowered to bf16", got["mm"], ref["rounded_mm"])
ck.differs("g@h", got["mm"], ref["plain"]["mm"])
ck.finish()
