"""Unmodified fp32 Python programs three ways, side by side in one run, on
Debian's torch and numpy: plainly (fp32), under torch.autocast('cpu',
dtype=torch.bfloat16) where torch offers it, and under ampshim with its
defaults (bf16, AMPSHIM_CPU_KERNEL=auto: the native oneDNN executor where the
CPU has bf16 units). Workloads: torch.mm 1024; a 4-layer nn.Linear MLP
forward (batch 256, width 2048, ReLU); numpy float32 A@B at 2048. Each mode
runs in its own process; modes alternate for ROUNDS rounds and each cell is
the median over rounds of per-process medians, so a noisy moment on a shared
machine cannot skew one row. Relative error is the Frobenius norm against
float64. The ampshim rows also print how many of its lowered calls ran
native (the shim's counters), so a silent fallback shows.
usage: cpu_three_ways.py PATH/TO/libampshim.so"""
import os
import statistics
import subprocess
import sys
import time

from bench_util import cpu_line, shim_counter

ROUNDS, REPS = 5, 7


def shim_counts():
    if shim_counter("stats.sgemm_.native") is None:
        return "-"
    total = {w: sum(shim_counter(f"stats.{sym}.{w}") for sym in ("cblas_sgemm", "sgemm_"))
             for w in ("native", "emulated")}
    return f"{total['native']}/{total['native'] + total['emulated']}"


def child(workload, mode):
    import numpy as np
    if workload == "numpy":
        rng = np.random.default_rng(7)
        a = rng.standard_normal((2048, 2048), dtype=np.float32)
        b = rng.standard_normal((2048, 2048), dtype=np.float32)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        run = lambda: a @ b  # noqa: E731
        ref = lambda out: (np.linalg.norm(out - exact) / np.linalg.norm(exact), out.dtype)  # noqa: E731
    else:
        import torch
        g = torch.Generator().manual_seed(7)
        if workload == "mm":
            a = torch.randn(1024, 1024, generator=g)
            b = torch.randn(1024, 1024, generator=g)
            exact = a.double() @ b.double()
            f = lambda: torch.mm(a, b)  # noqa: E731
        else:
            layers = []
            for _ in range(4):
                lin = torch.nn.Linear(2048, 2048)
                layers += [lin, torch.nn.ReLU()]
            net = torch.nn.Sequential(*layers[:-1]).eval()
            x = torch.randn(256, 2048, generator=g)
            exact = net.double()(x.double())
            net = net.float()
            f = lambda: net(x)  # noqa: E731

        def run():
            with torch.no_grad():
                if mode == "autocast":
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        return f()
                return f()
        ref = lambda out: (((out.double() - exact).norm() / exact.norm()).item(),  # noqa: E731
                           str(out.dtype).replace("torch.", ""))
    out = run()
    err, dtype = ref(out)
    times = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    print(f"{statistics.median(times) * 1e3:.4f} {err:.4e} {dtype} {shim_counts()}")


if len(sys.argv) > 3 and sys.argv[1] == "--child":
    child(sys.argv[2], sys.argv[3])
    sys.exit(0)

shim = sys.argv[1]
plain_env = {k: v for k, v in os.environ.items()
             if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
shim_env = dict(plain_env, LD_PRELOAD=shim)
workloads = [
    ("torch.mm 1024", "mm", True),
    ("torch MLP 4 x Linear(2048), batch 256", "mlp", True),
    ("numpy A@B 2048", "numpy", False),
]
print(cpu_line(("avx512_bf16", "amx_bf16", "avx512_fp16")))
probe = subprocess.run([sys.executable, "-c", "import torch, numpy; print(torch.__version__, "
                        "torch.get_num_threads(), numpy.__version__)"], env=plain_env,
                       capture_output=True, text=True, check=True).stdout.split()
print(f"torch {probe[0]} ({probe[1]} threads), numpy {probe[2]}; median of {ROUNDS} alternating "
      f"rounds x {REPS} calls, each mode in its own process")
for title, workload, has_autocast in workloads:
    modes = [("fp32 (no shim)", "plain", plain_env)]
    if has_autocast:
        modes.append(("torch.autocast cpu bf16", "autocast", plain_env))
    modes.append(("ampshim bf16 (defaults)", "plain", shim_env))
    results = {label: [] for label, _, _ in modes}
    for _ in range(ROUNDS):
        for label, mode, env in modes:
            line = subprocess.run([sys.executable, __file__, "--child", workload, mode], env=env,
                                  check=True, capture_output=True, text=True).stdout.split()
            results[label].append(line)
    print(f"\n{title}")
    print(f"{'mode':28} {'ms':>10} {'vs fp32':>8} {'speed-up':>9} {'rel. error':>11} "
          f"{'out dtype':>10} {'native/lowered':>15}")
    base = statistics.median(float(r[0]) for r in results[modes[0][0]])
    for label, _, _ in modes:
        ms = statistics.median(float(r[0]) for r in results[label])
        err, dtype, counts = results[label][0][1:4]
        print(f"{label:28} {ms:10.3f} {ms / base:7.2f}x {base / ms:8.2f}x {float(err):11.3e} "
              f"{dtype:>10} {counts:>15}")
