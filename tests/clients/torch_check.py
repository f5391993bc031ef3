"""Debian's torch under ampshim (bf16, the CPU default): mm, Linear with bias
(addmm: sgemm_ with beta = 1) and bmm are lowered and equal torch without the
shim on bf16-rounded operands, bit for bit (the bias, an accumulator, is not
rounded); mv is unchanged; linalg.qr runs in an fp32 region (its internal
sgemm_/strmm_ calls are not lowered) and is bit-identical."""
import sys

import numpy as np
import torch

from client_util import Checker, emit_reference, reference, round_bf16, shim_loaded

torch.set_num_threads(1)


def inputs():
    g = torch.Generator().manual_seed(99)
    return {
        "A": torch.randn(64, 48, generator=g),
        "B": torch.randn(48, 40, generator=g),
        "W": torch.randn(40, 48, generator=g),
        "bias": torch.randn(40, generator=g),
        "X": torch.randn(6, 24, 16, generator=g),
        "Y": torch.randn(6, 16, 20, generator=g),
        "v": torch.randn(48, generator=g),
        "Q": torch.randn(160, 160, generator=g),
    }


def rounded(t):
    return torch.from_numpy(round_bf16(t.numpy()))


def compute(t, r):
    """r rounds the multiplicands (identity for the plain run)."""
    with torch.no_grad():
        q, rr = torch.linalg.qr(t["Q"])
        return {
            "mm": torch.mm(r(t["A"]), r(t["B"])).numpy(),
            "linear": torch.nn.functional.linear(r(t["A"]), r(t["W"]), t["bias"]).numpy(),
            "bmm": torch.bmm(r(t["X"]), r(t["Y"])).numpy(),
            "mv": torch.mv(t["A"], t["v"]).numpy(),
            "qr_q": q.numpy(),
            "qr_r": rr.numpy(),
        }


if len(sys.argv) > 2 and sys.argv[1] == "--reference":
    t = inputs()
    emit_reference({"rounded": compute(t, rounded), "plain": compute(t, lambda v: v)})
    sys.exit(0)

c = Checker("torch_check")
c.check("ampshim is loaded in this process", shim_loaded())
ref = reference(__file__, "bf16")
got = compute(inputs(), lambda v: v)
for op in ("mm", "linear", "bmm"):
    c.same_bits(f"torch {op} lowered to bf16", got[op], ref["rounded"][op])
    c.differs(f"torch {op}", got[op], ref["plain"][op])
c.same_bits("torch.mv unchanged", got["mv"], ref["plain"]["mv"])
c.same_bits("torch.linalg.qr Q bit-identical", got["qr_q"], ref["plain"]["qr_q"])
c.same_bits("torch.linalg.qr R bit-identical", got["qr_r"], ref["plain"]["qr_r"])
c.finish()
