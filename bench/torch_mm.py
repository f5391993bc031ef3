"""torch.mm at n = 1024 in Debian's torch, side by side in one run: plain
fp32, torch.autocast('cpu', dtype=torch.bfloat16), and ampshim (bf16,
AMPSHIM_OUTPUT=round, i.e. torch's storage semantics) on the same fp32
program. Each mode runs in its own process; the three alternate for ROUNDS
rounds and each row is the median over rounds of per-process medians, so a
noisy moment on a shared machine cannot skew one row. Relative error is
against float64.
usage: torch_mm.py PATH/TO/libampshim.so"""
import os
import statistics
import subprocess
import sys
import time

N, ROUNDS, REPS = 1024, 5, 9


def child(mode):
    import torch
    g = torch.Generator().manual_seed(7)
    a = torch.randn(N, N, generator=g)
    b = torch.randn(N, N, generator=g)
    exact = a.double() @ b.double()

    def run():
        if mode == "autocast":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return torch.mm(a, b)
        return torch.mm(a, b)

    out = run()
    err = ((out.double() - exact).norm() / exact.norm()).item()
    times = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    print(f"{statistics.median(times) * 1e3:.4f} {err:.4e} {str(out.dtype).replace('torch.', '')} "
          f"{torch.__version__} {torch.get_num_threads()}")


if len(sys.argv) > 2 and sys.argv[1] == "--child":
    child(sys.argv[2])
    sys.exit(0)

shim = sys.argv[1]
plain_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
modes = [
    ("fp32 (no shim)", "plain", plain_env),
    ("torch.autocast cpu bf16", "autocast", plain_env),
    ("ampshim bf16, output round", "plain", dict(plain_env, LD_PRELOAD=shim, AMPSHIM_OUTPUT="round")),
]
results = {label: [] for label, _, _ in modes}
for _ in range(ROUNDS):
    for label, mode, env in modes:
        line = subprocess.run([sys.executable, __file__, "--child", mode], env=env, check=True,
                              capture_output=True, text=True).stdout.split()
        results[label].append(line)
version, threads = results[modes[0][0]][0][3], results[modes[0][0]][0][4]
print(f"torch.mm {N}x{N}x{N}, torch {version}, {threads} threads; "
      f"median of {ROUNDS} alternating rounds x {REPS} calls")
print(f"{'mode':30} {'ms':>10} {'vs fp32':>9} {'rel. error':>11} {'out dtype':>10}")
base = statistics.median(float(r[0]) for r in results[modes[0][0]])
for label, _, _ in modes:
    ms = statistics.median(float(r[0]) for r in results[label])
    err, dtype = results[label][0][1], results[label][0][2]
    print(f"{label:30} {ms:10.3f} {ms / base:8.2f}x {float(err):11.3e} {dtype:>10}")
