"""torch.mm at n = 1024 in Debian's torch, side by side in one run: plain
fp32, torch.autocast('cpu', dtype=torch.bfloat16), and ampshim (bf16,
AMPSHIM_OUTPUT=round, i.e. torch's storage semantics) on the same fp32
program. Relative error is against float64.
usage: torch_mm.py PATH/TO/libampshim.so"""
import os
import statistics
import subprocess
import sys
import time

import torch

N = 1024


def timed(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def measure(label, autocast):
    g = torch.Generator().manual_seed(7)
    a = torch.randn(N, N, generator=g)
    b = torch.randn(N, N, generator=g)
    exact = a.double() @ b.double()

    def run():
        if autocast:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return torch.mm(a, b)
        return torch.mm(a, b)

    out = run()
    err = ((out.double() - exact).norm() / exact.norm()).item()
    ms = timed(run, 5 if autocast else 15)
    return f"{label}|{ms:.3f}|{err:.3e}|{str(out.dtype).replace('torch.', '')}"


if len(sys.argv) > 1 and sys.argv[1] == "--child":
    print(measure(sys.argv[2], False))
    sys.exit(0)

shim = sys.argv[1]
rows = [measure("fp32 (no shim)", False), measure("torch.autocast cpu bf16", True)]
env = dict(os.environ, LD_PRELOAD=shim, AMPSHIM_OUTPUT="round")
rows.append(subprocess.run([sys.executable, __file__, "--child", "ampshim bf16, output round"],
                           env=env, check=True, capture_output=True, text=True).stdout.strip())
print(f"torch.mm {N}x{N}x{N}, torch {torch.__version__}, {torch.get_num_threads()} threads")
print(f"{'mode':30} {'ms':>10} {'vs fp32':>9} {'rel. error':>11} {'out dtype':>10}")
base = float(rows[0].split("|")[1])
for r in rows:
    label, ms, err, dtype = r.split("|")
    print(f"{label:30} {float(ms):10.3f} {float(ms) / base:8.2f}x {float(err):11.3e} {dtype:>10}")
