"""Programs whose answers amplify what lowering does to a product, side by
side in one run (ampshim(7), WHAT LOWERING CAN CHANGE): each case in its own
process without the shim, under the default of a CPU with bf16 units
(simulated on any CPU: AMPSHIM_CPU_KERNEL=emulate with the native crossover,
96^3 multiply-adds, as AMPSHIM_LOWER_MIN), the same with the spread check
off (AMPSHIM_SPREAD_LOSS=off: every product past the size rule lowered), and
under AMPSHIM_AUDIT=auto. Errors against the same program in float64.

- k-means (Lloyd, distances by |x|^2 - 2 x.c + |c|^2) on 20000 x 64
  points around 32 centres at offset 100 (noise 0.5), and the same data
  centred: the share of labels that differ from float64's and the inertia
  against float64's; the spread check's case;
- a Kalman filter, 128 states, 64 measurements, the standard covariance
  update P = (I - KH)P and the Joseph form: P's relative error after 60
  steps (nan: it broke down);
- block conjugate gradients, n = 2000, condition 1e3, 8 right-hand sides,
  stopped when the recurrence's residual is below 1e-5: the true residual;
- least squares by the normal equations (X.T @ X, then a Cholesky solve)
  on 20000 x 200 data with column scales from 0.1 to 10, and lstsq.

usage: /usr/bin/python3 bench/amplified_products.py PATH/TO/libampshim.so"""
import ast
import subprocess
import sys
import time

from bench_util import cpu_line, plain_env


def kmeans_case(offset):
    import numpy as np

    def lloyd(x, c, dtype):
        x, c = x.astype(dtype), c.astype(dtype)
        xx = (x * x).sum(1)[:, None]
        for _ in range(10):
            labels = (xx - 2 * (x @ c.T) + (c * c).sum(1)[None, :]).argmin(1)
            for j in range(len(c)):
                if (labels == j).any():
                    c[j] = x[labels == j].mean(0)
        d = x.astype(np.float64)[:, None, :] - c.astype(np.float64)[None]
        return labels, float((d * d).sum(2)[np.arange(len(x)), labels].sum())

    rng = np.random.default_rng(1)
    centres = rng.standard_normal((32, 64))
    x = offset + centres[rng.integers(0, 32, 20000)] + rng.normal(0, 0.5, (20000, 64))
    start = x[rng.choice(20000, 32, replace=False)]
    l32, i32 = lloyd(x, start, np.float32)
    l64, i64 = lloyd(x, start, np.float64)
    return f"{100 * float(np.mean(l32 != l64)):.1f}% ({i32 / i64:.2f})"


def kalman_case(joseph):
    import numpy as np
    rng = np.random.default_rng(2)
    n, m = 128, 64
    f = np.eye(n) + 0.01 * rng.standard_normal((n, n))
    h = rng.standard_normal((m, n)) / np.sqrt(n)
    q, r = 1e-3 * np.eye(n), 0.1 * np.eye(m)

    def run(dtype):
        ff, hh, qq, rr = (a.astype(dtype) for a in (f, h, q, r))
        p, eye = np.eye(n, dtype=dtype), np.eye(n, dtype=dtype)
        for _ in range(60):
            p = ff @ p @ ff.T + qq
            s = hh @ p @ hh.T + rr
            k = np.linalg.solve(s, hh @ p).T
            a = eye - k @ hh
            p = a @ p @ a.T + k @ rr @ k.T if joseph else a @ p
        return p

    p32, p64 = run(np.float32), run(np.float64)
    err = float(np.linalg.norm(p32 - p64) / np.linalg.norm(p64))
    return f"{err:.2g}" if np.isfinite(err) else "nan"


def block_cg_case():
    import numpy as np
    rng = np.random.default_rng(3)
    n, s = 2000, 8
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a64 = (q * np.logspace(0, 3, n)) @ q.T
    b64 = rng.standard_normal((n, s))
    a, b = a64.astype(np.float32), b64.astype(np.float32)
    x = np.zeros_like(b)
    r = b - a @ x
    p = r.copy()
    for it in range(2000):
        ap = a @ p
        alpha = np.linalg.solve(p.T @ ap, r.T @ r)
        x = x + p @ alpha
        r_new = r - ap @ alpha
        if np.linalg.norm(r_new) / np.linalg.norm(b) < 1e-5:
            break
        beta = np.linalg.solve(r.T @ r, r_new.T @ r_new)
        p = r_new + p @ beta
        r = r_new
    true = np.linalg.norm(b64 - a64 @ x.astype(np.float64)) / np.linalg.norm(b64)
    return f"{true:.2g} ({it + 1} it.)"


def normal_equations_case(lstsq):
    import numpy as np
    import scipy.linalg as sl
    rng = np.random.default_rng(4)
    x64 = rng.standard_normal((20000, 200)) * np.logspace(-1, 1, 200)
    y64 = x64 @ rng.standard_normal(200) + 0.01 * rng.standard_normal(20000)
    x, y = x64.astype(np.float32), y64.astype(np.float32)
    ref = np.linalg.lstsq(x.astype(np.float64), y.astype(np.float64), rcond=None)[0]
    if lstsq:
        w = sl.lstsq(x, y)[0]
    else:
        w = sl.cho_solve(sl.cho_factor(x.T @ x), x.T @ y)
    return f"{float(np.linalg.norm(w - ref) / np.linalg.norm(ref)):.2g}"


CASES = [("k-means at offset 100: labels wrong (inertia)", lambda: kmeans_case(100.0)),
         ("k-means centred: labels wrong (inertia)", lambda: kmeans_case(0.0)),
         ("Kalman, P = (I - KH)P: P's error", lambda: kalman_case(False)),
         ("Kalman, Joseph form: P's error", lambda: kalman_case(True)),
         ("block CG n=2000 cond 1e3: true residual", block_cg_case),
         ("normal equations 20000x200: error", lambda: normal_equations_case(False)),
         ("lstsq (LAPACK) 20000x200: error", lambda: normal_equations_case(True))]


def one_case(index):
    name, fn = CASES[index]
    t = time.perf_counter()
    value = fn()
    print(repr((value, time.perf_counter() - t)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        one_case(int(sys.argv[2]))
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    shim = sys.argv[1]
    plain = plain_env()
    default = {"LD_PRELOAD": shim, "AMPSHIM_CPU_KERNEL": "emulate", "AMPSHIM_LOWER_MIN": "884736"}
    modes = [("no shim", {}),
             ("default", default),
             ("SPREAD_LOSS=off", dict(default, AMPSHIM_SPREAD_LOSS="off")),
             ("AUDIT=auto", dict(default, AMPSHIM_AUDIT="auto"))]
    print(cpu_line())
    print("against float64, each case and column its own process (seconds),")
    print("OPENBLAS_NUM_THREADS=1; default: AMPSHIM_CPU_KERNEL=emulate AMPSHIM_LOWER_MIN=884736")
    print(f"{'case':48s}" + "".join(f"{label:>26s}" for label, _ in modes))
    for index, (case, _) in enumerate(CASES):
        row = f"{case:48s}"
        for _, extra in modes:
            r = subprocess.run([sys.executable, __file__, "--case", str(index)],
                               env=dict(plain, **extra), capture_output=True, text=True)
            last = r.stdout.strip().splitlines()[-1:] if r.returncode == 0 else []
            value, seconds = ast.literal_eval(last[0]) if last else ("failed", float("nan"))
            row += f"{value:>18s} ({seconds:4.1f}s)"
        print(row, flush=True)


if __name__ == "__main__":
    main()
