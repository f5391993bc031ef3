"""What finding a call's site costs (runtime/sites.c): a numpy loop of
128^3 products, lowered, timed per call under no shim (fp32), this shim
(each lowered call walks to its Python line) and, given, an older build
(sites by return address, no walk), side by side in one run, modes
alternating over rounds (least of each). Loops:

  numpy      a @ b at module level
  deep       a @ b at the bottom of 30 Python calls (a deeper frame chain)
  torch      torch.mm (its native frames through libtorch are walked too,
             looking for an fp32-list op around the product)

AMPSHIM_LOWER_MIN=0 lowers every product (natively where the CPU has bf16
units, else emulated: AMPSHIM_CPU_KERNEL=emulate), so each call takes the
slow path the walk is on.

usage: /usr/bin/python3 bench/site_walk.py NEW/libampshim.so [OLD/libampshim.so]"""
import ast
import subprocess
import sys

from bench_util import cpu_line, plain_env

CALLS, BLOCKS, ROUNDS = 400, 5, 3


def child(loop):
    import time

    import numpy as np
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128), dtype=np.float32)
    b = rng.standard_normal((128, 128), dtype=np.float32)
    if loop == "torch":
        import torch
        torch.set_num_threads(1)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        work = lambda: torch.mm(ta, tb)  # noqa: E731
    elif loop == "deep":
        def down(depth):
            return a @ b if depth == 0 else down(depth - 1)
        work = lambda: down(30)  # noqa: E731
    else:
        work = lambda: a @ b  # noqa: E731
    for _ in range(20):
        work()
    best = []
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            work()
        best.append((time.perf_counter() - t0) / CALLS * 1e6)
    print(repr(min(best)))


if len(sys.argv) == 3 and sys.argv[1] == "--child":
    child(sys.argv[2])
    sys.exit(0)

shims = {"this shim": sys.argv[1]}
if len(sys.argv) > 2:
    shims["older build"] = sys.argv[2]
with open("/proc/cpuinfo") as f:
    bf16 = " avx512_bf16" in f.read() or False
settings = {"AMPSHIM_LOWER_MIN": "0"}
if not bf16:
    settings["AMPSHIM_CPU_KERNEL"] = "emulate"
modes = {"fp32": None, **shims}
loops = ["numpy", "deep", "torch"]
times = {(loop, m): float("inf") for loop in loops for m in modes}
for _ in range(ROUNDS):
    for loop in loops:
        for m, lib in modes.items():
            env = plain_env()
            if lib:
                env.update(settings, LD_PRELOAD=lib)
            r = subprocess.run([sys.executable, __file__, "--child", loop], env=env,
                               capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip():
                t = ast.literal_eval(r.stdout.strip().splitlines()[-1])
                times[loop, m] = min(times[loop, m], t)
print(cpu_line())
print(f"128^3 products, us per call (least of {ROUNDS} rounds x {BLOCKS} blocks of {CALLS}), "
      f"lowered {'natively' if bf16 else 'emulated'}")
head = f"{'loop':8}" + "".join(f"{m:>14}" for m in modes)
if "older build" in modes:
    head += f"{'walk cost':>14}"
print(head)
for loop in loops:
    row = f"{loop:8}" + "".join(f"{times[loop, m]:14.2f}" for m in modes)
    if "older build" in modes:
        row += f"{times[loop, 'this shim'] - times[loop, 'older build']:+12.2f}us"
    print(row)
