"""pip's numpy and scipy wheels under ampshim, as most people have them:
each wheel carries its own OpenBLAS under prefixed names, numpy's ILP64
(scipy_cblas_sgemm64_, scipy_cblas_ssyrk64_) and scipy's LP64
(scipy_sgemm_, scipy_cblas_sgemm), which the shim hooks
(policy/data/manglings.txt). Each mode runs the same float32 work in a
child (numpy products; scipy.linalg's BLAS sgemm and LAPACK drivers qr,
cholesky, solve, eigh, svd, lu, lstsq; scipy.sparse.linalg's cg, gmres,
eigsh, svds and splu) and hashes every result:

- AMPSHIM_ENABLE=0 and a policy of passthrough for every op the products
  are: bit for bit the run without the shim;
- the defaults (the size rule): the 384^3 products are lowered where this
  CPU has native bf16 units, through the wheels' own names (the counters
  say so), with a bf16 error against float64; without units they run as
  made, counted nounits, bit for bit fp32. The LAPACK drivers and the
  sparse solvers are bit for bit fp32 either way: the BLAS calls LAPACK,
  ARPACK and SuperLU make to themselves are theirs, and numpy's small
  products stay below the size rule.
usage: pip_wheels_check.py   (run by the venv's Python, the shim preloaded)"""
import hashlib
import os
import sys

from client_util import Checker, four_ways, shim_loaded

N = 384
PASSTHROUGH = ",".join(f"cpu:{op}=passthrough" for op in
                       ("mm", "matmul", "addmm", "bmm", "baddbmm", "addbmm", "linear", "mv",
                        "addmv", "dot", "ger", "addr", "outer"))


def work():
    """{name: array} of every result, and the BLAS counters of the products."""
    import numpy as np
    import scipy.linalg as sl
    import scipy.linalg.blas as fblas
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl
    rng = np.random.default_rng(7)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    out = {"np_mm": a @ b, "np_gram": a @ a.T, "scipy_sgemm": fblas.sgemm(1.0, a, b)}
    n = 200
    m64 = rng.standard_normal((n, n))
    m = m64.astype(np.float32)
    # made in float64: a float32 product here would be the program's own,
    # lowered as it should be
    spd = (m64 @ m64.T / n + np.eye(n)).astype(np.float32)
    rhs = rng.standard_normal((n, 3)).astype(np.float32)
    tall = rng.standard_normal((2 * n, n)).astype(np.float32)
    out["qr"] = sl.qr(m)[1]
    out["cholesky"] = sl.cholesky(spd)
    out["solve"] = sl.solve(m, rhs)
    out["eigh"] = sl.eigh(spd)[0]
    out["svd"] = sl.svd(m, compute_uv=False)
    out["lu"] = sl.lu(m)[2]
    out["lstsq"] = sl.lstsq(tall, rng.standard_normal((2 * n, 2)).astype(np.float32))[0]
    k = 2000
    lap = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k), dtype=np.float32).tocsc()
    v = np.ones(k, dtype=np.float32)
    out["cg"] = spl.cg(lap + 0.1 * sp.identity(k, dtype=np.float32, format="csc"), v,
                       maxiter=200)[0]
    out["gmres"] = spl.gmres(lap + sp.identity(k, dtype=np.float32, format="csc"), v,
                             restart=20, maxiter=5)[0]
    out["eigsh"] = spl.eigsh(lap, k=4, which="LM", v0=v)[0]
    out["svds"] = spl.svds(sp.random(600, 300, density=0.05, dtype=np.float32,
                                     random_state=np.random.default_rng(3)),
                           k=5, v0=np.ones(300, dtype=np.float32))[1]
    out["splu"] = spl.splu(lap).solve(v)
    return out


def measure():
    import numpy as np
    from client_util import shim_stat
    out = work()
    digest = hashlib.sha256()
    for name in sorted(out):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(out[name]).tobytes())
    rng = np.random.default_rng(7)  # work()'s operands again, in float64
    a = rng.standard_normal((N, N), dtype=np.float32).astype(np.float64)
    b = rng.standard_normal((N, N), dtype=np.float32).astype(np.float64)
    exact = a @ b
    err = float(np.linalg.norm(out["np_mm"] - exact) / np.linalg.norm(exact))
    err_scipy = float(np.linalg.norm(out["scipy_sgemm"] - exact) / np.linalg.norm(exact))
    fp32_only = hashlib.sha256()
    for name in sorted(out):
        if name not in ("np_mm", "np_gram", "scipy_sgemm"):
            fp32_only.update(name.encode())
            fp32_only.update(np.ascontiguousarray(out[name]).tobytes())
    stats = {f"{s}.{w}": shim_stat(s, w)
             for s in ("scipy_cblas_sgemm64_", "scipy_cblas_ssyrk64_", "scipy_sgemm_")
             for w in ("lowered", "nounits", "passthrough")}
    print(repr({"all": digest.hexdigest(), "fp32_work": fp32_only.hexdigest(), "err": err,
                "err_scipy": err_scipy, "stats": stats}))


if len(sys.argv) > 1 and sys.argv[1] == "--measure":
    measure()
    sys.exit(0)

ck = Checker("pip_wheels_check")
ck.check("libampshim.so is loaded (the test runs under LD_PRELOAD)", shim_loaded())
import numpy  # noqa: E402
import scipy  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check  # noqa: E402  (tests/check.py)
print(f"numpy {numpy.__version__}, scipy {scipy.__version__} from {os.path.dirname(numpy.__file__)}")
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base["OPENBLAS_NUM_THREADS"] = "1"
ran = four_ways(ck, __file__, base, PASSTHROUGH)
if ran:
    plain, default, report = ran
    ck.check("the defaults: scipy.linalg's LAPACK drivers and scipy.sparse.linalg's solvers bit "
             "for bit fp32", default["fp32_work"] == plain["fp32_work"])
    s = default["stats"]
    print(f"defaults: error of numpy's {N}^3 product {default['err']:.2e} (fp32 "
          f"{plain['err']:.2e}), scipy's sgemm {default['err_scipy']:.2e}; counters {s}")
    if check.cpu_has_bf16_units():
        ck.check("numpy's ILP64 names reached and lowered: scipy_cblas_sgemm64_, "
                 "scipy_cblas_ssyrk64_",
                 s["scipy_cblas_sgemm64_.lowered"] > 0 and s["scipy_cblas_ssyrk64_.lowered"] > 0,
                 str(s))
        ck.check("scipy's LP64 name reached and lowered: scipy_sgemm_",
                 s["scipy_sgemm_.lowered"] > 0, str(s))
        ck.check("the lowered products carry bf16's error (1e-4 to 1e-2; fp32's is ~1e-7)",
                 1e-4 < default["err"] < 1e-2 and 1e-4 < default["err_scipy"] < 1e-2)
    else:
        ck.check("no bf16 units: the products run as made, counted nounits, bit for bit fp32",
                 s["scipy_cblas_sgemm64_.nounits"] > 0 and s["scipy_sgemm_.nounits"] > 0 and
                 default["all"] == plain["all"], str(s))
ck.finish()
