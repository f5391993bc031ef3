"""Debian's scipy under ampshim: compiled algorithms that call the BLAS
through scipy's Cython wrappers (policy/data/blas_wrappers.txt), which
tail-call it, so the hook sees the return address of the algorithm's own
module. Their products are the algorithm's work: counted internal and run as
made. Run under the default of a CPU with bf16 units, simulated on any CPU
(AMPSHIM_CPU_KERNEL=emulate with the native crossover, 96^3 multiply-adds,
as AMPSHIM_LOWER_MIN), each case in a child process:

- scipy.linalg.qr_update (float32 1500x600, a rank-200 update) and
  qr_insert (200 rows) are bit for bit as without the shim, their
  reconstruction error that of fp32; sgemm_ counted internal, never lowered
  (lowered before: 3.4e-3 instead of 1.5e-6);
- expm (float32, n = 256): the Pade products of its Cython part
  (_matfuncs_expm) are internal too; its squaring is numpy's matmul in
  scipy's Python code, made under scipy.linalg's expm, an op ampshim keeps
  fp32 (policy/data/op_frames.txt): counted fp32, none lowered, fp32's
  accuracy;
- a call-site entry naming the module (sgemm_@_decomp_update*=lower) still
  lowers qr_update's products, which then lose fp32's accuracy;
- what ampshim(7) says of a Gram matrix fed to a Cholesky solve (least
  squares by the normal equations, float32 20000x200): numpy's X.T @ X
  (cblas_ssyrk) is lowered as any product and the answer carries its
  rounding (error past 1e-4 against float64); LAPACK's lstsq is untouched;
  cblas_ssyrk@_multiarray_umath*=fp32 gives fp32's answer back, bit for
  bit."""
import os
import sys

from client_util import Checker, measure_child, shim_loaded, shim_stat as counter


def measure(case):
    import hashlib

    import numpy as np
    import scipy.linalg as sl
    rng = np.random.default_rng(0)
    out = {}
    if case == "qr":
        a = rng.standard_normal((1500, 600)).astype(np.float32)
        q, r = sl.qr(a)
        u = rng.standard_normal((1500, 200)).astype(np.float32)
        v = rng.standard_normal((600, 200)).astype(np.float32)
        q1, r1 = sl.qr_update(q, r, u, v)
        ref = a.astype(np.float64) + u.astype(np.float64) @ v.astype(np.float64).T
        out["qr_update_err"] = float(np.linalg.norm(q1.astype(np.float64) @ r1 - ref) /
                                     np.linalg.norm(ref))
        rows = rng.standard_normal((200, 600)).astype(np.float32)
        q2, r2 = sl.qr_insert(q, r, rows, 0, which="row")
        ref2 = np.vstack([rows, a]).astype(np.float64)
        out["qr_insert_err"] = float(np.linalg.norm(q2.astype(np.float64) @ r2 - ref2) /
                                     np.linalg.norm(ref2))
        out["bits"] = hashlib.sha256(q1.tobytes() + r1.tobytes() + q2.tobytes() +
                                     r2.tobytes()).hexdigest()
    elif case == "gram":
        x = rng.standard_normal((20000, 200)) @ np.diag(np.logspace(0, 2, 200)) / 10
        y = x @ rng.standard_normal(200) + 0.01 * rng.standard_normal(20000)
        x32, y32 = x.astype(np.float32), y.astype(np.float32)
        ref = np.linalg.lstsq(x, y, rcond=None)[0]
        c = sl.cho_solve(sl.cho_factor(x32.T @ x32), x32.T @ y32)
        lst = np.linalg.lstsq(x32, y32, rcond=None)[0]
        out["normal_err"] = float(np.linalg.norm(c - ref) / np.linalg.norm(ref))
        out["lstsq_err"] = float(np.linalg.norm(lst - ref) / np.linalg.norm(ref))
        out["bits"] = hashlib.sha256(c.tobytes() + lst.tobytes()).hexdigest()
        out["ssyrk lowered"] = counter("cblas_ssyrk", "lowered")
    else:
        m = rng.standard_normal((256, 256)) / 16
        e = sl.expm(m.astype(np.float32))
        er = sl.expm(m)
        out["expm_err"] = float(np.linalg.norm(e - er) / np.linalg.norm(er))
    for w in ("lowered", "internal", "fp32"):
        out[f"sgemm_ {w}"] = counter("sgemm_", w)
        out[f"cblas_sgemm {w}"] = counter("cblas_sgemm", w)
    print(repr(out))


if len(sys.argv) == 3 and sys.argv[1] == "--measure":
    measure(sys.argv[2])
    sys.exit(0)

ck = Checker("blas_wrappers_check")
ck.check("libampshim.so is loaded (the test runs under LD_PRELOAD)", shim_loaded())
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base["OPENBLAS_NUM_THREADS"] = "1"
simulated = {"AMPSHIM_CPU_KERNEL": "emulate", "AMPSHIM_LOWER_MIN": str(96 ** 3)}


def run(case, shim=True, **settings):
    return measure_child(__file__, case, base, shim, **settings)[0]


plain = run("qr", shim=False)
shimmed = run("qr", **simulated)
print("without the shim:", plain)
print("under the shim:  ", shimmed)
ck.check("qr_update and qr_insert: bit for bit as without the shim",
         shimmed.get("bits") is not None and shimmed.get("bits") == plain.get("bits"))
ck.check("qr_update keeps fp32's accuracy (< 1e-5)", shimmed.get("qr_update_err", 1) < 1e-5,
         f"{shimmed.get('qr_update_err')}")
ck.check("qr_insert keeps fp32's accuracy (< 1e-5)", shimmed.get("qr_insert_err", 1) < 1e-5,
         f"{shimmed.get('qr_insert_err')}")
ck.check("their sgemm_ calls counted internal, none lowered",
         shimmed.get("sgemm_ internal", 0) > 0 and shimmed.get("sgemm_ lowered", 1) == 0,
         f"{shimmed}")

expm = run("expm", **simulated)
print("expm under the shim:", expm)
ck.check("expm's Pade products (its Cython part) counted internal, none lowered",
         expm.get("sgemm_ internal", 0) > 0 and expm.get("sgemm_ lowered", 1) == 0, f"{expm}")
expm_plain = run("expm", shim=False)
ck.check("expm's squaring, numpy's matmul under scipy.linalg.expm, is kept fp32",
         expm.get("cblas_sgemm lowered", 1) == 0 and expm.get("cblas_sgemm fp32", 0) > 0 and
         expm.get("expm_err", 1) <= 2 * expm_plain.get("expm_err", 0), f"{expm} {expm_plain}")

named = run("qr", AMPSHIM_POLICY="sgemm_@_decomp_update*=lower", **simulated)
print("a call-site entry naming _decomp_update:", named)
ck.check("a call-site entry naming the module lowers qr_update's products",
         named.get("sgemm_ lowered", 0) > 0 and named.get("qr_update_err", 0) > 1e-4,
         f"{named}")
gram_plain = run("gram", shim=False)
gram = run("gram", **simulated)
gram_kept = run("gram", AMPSHIM_POLICY="cblas_ssyrk@_multiarray_umath*=fp32", **simulated)
print("normal equations without the shim:", gram_plain)
print("under the shim:                   ", gram)
print("with cblas_ssyrk@_multiarray_umath*=fp32:", gram_kept)
ck.check("the Gram product is lowered and the normal equations carry its rounding (> 1e-4)",
         gram.get("ssyrk lowered", 0) > 0 and gram.get("normal_err", 0) > 1e-4, f"{gram}")
ck.check("LAPACK's lstsq is untouched", gram.get("lstsq_err") is not None and
         gram.get("lstsq_err") == gram_plain.get("lstsq_err"), f"{gram}")
ck.check("the call-site entry gives fp32's answer back, bit for bit",
         gram_kept.get("bits") is not None and gram_kept.get("bits") == gram_plain.get("bits"),
         f"{gram_kept}")
ck.finish()
