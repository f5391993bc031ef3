"""What lowering changes in programs built on numpy, scipy and scikit-learn,
side by side in one run: each case in its own process without the shim, under
the shim as shipped (the size rule and the numerical-library list), under
AMPSHIM_LOWER_MIN=0 (autocast's rule: every size), and with the library
list overridden too (every size, the list's objects lowered). The figures of
ampshim(7)'s WHAT LOWERING CAN CHANGE and README come from here.

usage: /usr/bin/python3 bench/lowering_changes.py PATH/TO/libampshim.so"""
import ast
import os
import platform
import subprocess
import sys
import time

from bench_util import plain_env


# Each case is a function returning its error; scipy is imported inside
# them, after SCIPY_USE_PROPACK is set. tests/clients/libraries_check.py
# imports the first three.


def lobpcg_small():
    """scipy's test_diagonal_data_types, every input float32: the error of
    the eigenvalues [4, 5, 6]."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.linalg import lobpcg
    n, m = 20, 3
    vals = np.arange(1, n + 1)
    a = sp.diags([vals * vals], [0], (n, n), format="coo").astype(np.float32)
    b = sp.diags([vals], [0], (n, n), format="coo").astype(np.float32)
    prec = sp.diags([1. / vals], [0], (n, n), format="coo").astype(np.float32)
    x = np.random.RandomState(0).random((n, m)).astype(np.float32)
    ev, _ = lobpcg(a, x, B=b, M=prec, Y=np.eye(n, 3, dtype=np.float32), tol=1e-4, maxiter=100,
                   largest=False)
    return float(np.abs(np.asarray(ev) - np.arange(4, 7)).max())


def propack():
    """PROPACK's complex64 svds: U's loss of orthogonality."""
    import numpy as np
    from scipy.sparse.linalg import svds
    rng = np.random.default_rng(1)
    c = (rng.standard_normal((200, 100)) + 1j * rng.standard_normal((200, 100))).astype(
        np.complex64)
    u, _, _ = svds(c, k=10, solver="propack", random_state=0)
    return float(np.abs(u.conj().T @ u - np.eye(10)).max())


def superlu():
    """SuperLU's float32 splu: the solution's relative residual."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.linalg import splu
    s = (sp.random(300, 300, density=0.05, random_state=3, dtype=np.float32)
         + 4 * sp.eye(300, dtype=np.float32)).tocsc()
    rhs = np.random.default_rng(2).standard_normal(300).astype(np.float32)
    return float(np.abs(s @ splu(s).solve(rhs) - rhs).max() / np.abs(rhs).max())


def lobpcg_big():
    """lobpcg whose products (16 x 16 x 20000) are past the crossover."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.linalg import lobpcg
    n, m = 20000, 16
    vals = np.arange(1, n + 1, dtype=np.float64)
    a = sp.diags([vals], [0], (n, n), format="csr").astype(np.float32)
    prec = sp.diags([1. / vals], [0], (n, n), format="csr").astype(np.float32)
    x = np.random.RandomState(0).random((n, m)).astype(np.float32)
    ev, _ = lobpcg(a, x, M=prec, tol=1e-4, maxiter=100, largest=False)
    return float(np.abs(np.sort(ev) - np.arange(1, m + 1)).max())


def ridge():
    """scikit-learn's cholesky ridge (X.T @ X through numpy, then a solve):
    the coefficients' error against float64."""
    import numpy as np
    try:
        from sklearn.linear_model import Ridge
    except ImportError:
        return float("nan")
    rng = np.random.RandomState(0)
    x = rng.standard_normal((20000, 200)).astype(np.float32)
    y = (x.astype(np.float64) @ rng.standard_normal(200)
         + 0.01 * rng.standard_normal(20000)).astype(np.float32)
    fit = Ridge(alpha=1e-3, solver="cholesky", fit_intercept=False)
    coef = fit.fit(x, y).coef_
    ref = fit.fit(x.astype(np.float64), y.astype(np.float64)).coef_
    return float(np.abs(coef - ref).max() / np.abs(ref).max())


CASES = [("lobpcg n=20 (eigenvalue error)", lobpcg_small),
         ("lobpcg n=20000 m=16 (eigenvalue error)", lobpcg_big),
         ("PROPACK complex64 svds (|U^H U - I|)", propack),
         ("SuperLU float32 splu (residual)", superlu),
         ("Ridge cholesky 20000x200 (coef error)", ridge)]


def cases():
    import warnings
    warnings.simplefilter("ignore")
    out = {}
    for name, fn in CASES:
        t = time.perf_counter()
        value = fn()
        out[name] = (value, time.perf_counter() - t)
    print(repr(out))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--cases":
        os.environ["SCIPY_USE_PROPACK"] = "1"
        cases()
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    shim = sys.argv[1]
    plain = plain_env()
    modes = [("no shim", {}),
             ("shipped", {"LD_PRELOAD": shim}),
             ("LOWER_MIN=0", {"LD_PRELOAD": shim, "AMPSHIM_LOWER_MIN": "0"}),
             ("+ list off", {"LD_PRELOAD": shim, "AMPSHIM_LOWER_MIN": "0",
                             "AMPSHIM_POLICY": "*@_?propack*=lower,*@_superlu*=lower"})]
    results = []
    for _, extra in modes:
        r = subprocess.run([sys.executable, __file__, "--cases"], env=dict(plain, **extra),
                           capture_output=True, text=True)
        results.append(ast.literal_eval(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {})
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    print(f"CPU: {platform.processor() or platform.machine()}; flags: "
          + " ".join(fl for fl in flags if fl.startswith(("avx512", "amx", "avx2", "f16c"))))
    print("error (seconds), one process per column, OPENBLAS_NUM_THREADS=1")
    print(f"{'case':42s}" + "".join(f"{label:>22s}" for label, _ in modes))
    for case in results[0]:
        row = f"{case:42s}"
        for r in results:
            value, seconds = r.get(case, (float("nan"), float("nan")))
            row += f"{value:>12.3g} ({seconds:5.2f}s)"
        print(row)


if __name__ == "__main__":
    main()
