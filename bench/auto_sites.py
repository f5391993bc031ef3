"""Which call sites lowering pays for, decided four ways, side by side in one
run: one program whose call sites make products of several sizes, each
size from its own object (a call site of its own) but numpy's two:

  tiny       numpy's matmul, 32 x 32 x 32 (cblas_sgemm from _multiarray_umath)
  numpy      numpy's matmul, 384 x 384 x 384, every 20th call of the tiny
             loop: the same call site, another size class (auto weighs each
             class of a site by itself)
  crossover  scipy.linalg.blas.sgemm, 96 x 96 x 96 (sgemm_ from scipy's _fblas)
  large      torch.mm, 512 x 512 x 512 (sgemm_ from libtorch_cpu)
  model      a small torch CNN's forward pass (three 3x3 convolutions, 3 to
             128 channels over a batch of 8 64x64 images, then a linear
             layer): its convolutions are oneDNN primitives, one call site
             (dnnl_convolution_2d_forward from libtorch_cpu)

run under: no shim (fp32); the shim with its size rule (the default);
AMPSHIM_AUDIT=auto (each site decides by measured error and time); and, for
the torch site, torch.autocast("cpu", bfloat16) without the shim. Per site:
the decision (the report's counters; auto's state and why), the product's
error against float64, and the time per call (the program's own clock,
median of the timed loop). Each column is its own process; the CPU flags
are printed. Under auto the first calls are the probation's (audited, kept
fp32) and are timed with the rest.

usage: /usr/bin/python3 bench/auto_sites.py PATH/TO/libampshim.so"""
import ast
import re
import subprocess
import sys

from bench_util import cpu_line, plain_env

SITES = [("tiny", 32, 4000), ("numpy", 384, 200), ("crossover", 96, 600), ("large", 512, 30),
         ("model", 0, 40)]
MIXED = 20  # the tiny loop makes one 384^3 product every MIXED calls


def child(autocast):
    import time

    import numpy as np
    import scipy.linalg.blas as fblas
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    out = {}
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.ReLU(),
                          nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)).eval()
    images = torch.randn(8, 3, 64, 64)
    big = [rng.standard_normal((384, 384), dtype=np.float32) for _ in range(2)]
    big_exact = big[0].astype(np.float64) @ big[1].astype(np.float64)
    big_times = []
    for name, n, calls in SITES:
        if name == "numpy":  # made in the tiny loop
            big_times.sort()
            err = float(np.linalg.norm(big_c.astype(np.float64) - big_exact) /
                        np.linalg.norm(big_exact))
            out[name] = (err, big_times[len(big_times) // 2] * 1e6)
            continue
        if name == "model":
            with torch.no_grad():
                exact = model.double()(images.double()).numpy()
                model.float()
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        if n:
            exact = a.astype(np.float64) @ b.astype(np.float64)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)

        def product():
            if name == "model":
                with torch.no_grad():
                    if autocast:
                        with torch.autocast("cpu", dtype=torch.bfloat16):
                            return model(images).float().numpy()
                    return model(images).numpy()
            if name == "tiny":
                return a @ b
            if name == "crossover":
                return fblas.sgemm(1.0, a, b)
            if autocast:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return torch.mm(ta, tb).float().numpy()
            return torch.mm(ta, tb).numpy()

        times = []
        for i in range(calls):
            t = time.perf_counter()
            c = product()
            times.append(time.perf_counter() - t)
            if name == "tiny" and i % MIXED == MIXED - 1:
                t = time.perf_counter()
                big_c = big[0] @ big[1]
                big_times.append(time.perf_counter() - t)
        times.sort()
        err = float(np.linalg.norm(np.asarray(c, dtype=np.float64) - exact) / np.linalg.norm(exact))
        out[name] = (err, times[len(times) // 2] * 1e6)
    print(repr(out))


def decisions(report):
    """Per site, what the report says: the counters of its symbol's row and,
    under auto, the site's state line."""
    rows = {}
    lines = report.splitlines()
    header = next((l.split() for l in lines if l.startswith("symbol ") and "lowered" in l), None)
    for l in lines:
        p = l.split()
        if header and p and p[0] in ("cblas_sgemm", "sgemm_", "dnnl_convolution_2d_forward") and \
                len(p) == len(header):
            rows[p[0]] = dict(zip(header[3:], p[3:]))
    auto = {}  # (symbol, object) -> (speed, state line)
    for i, l in enumerate(lines):
        if l[:1].isdigit() and i + 1 < len(lines) and lines[i + 1].startswith("     |"):
            p = l.split()
            who = p[13] if len(p) > 13 else "?"
            auto[(p[12], who.split(":")[0].split("+")[0].split(".")[0])] = (
                p[8], lines[i + 1][7:])
    return rows, auto


def class_fp32(state, flops):
    """Whether auto's line for a lowered site names the size class of a call
    of `flops` as one it runs fp32 ("... fp32: 3.4e+07-1.3e+08 flops (0.5x)")."""
    if "fp32: " not in state:
        return False
    for lo, hi in re.findall(r"([0-9.e+]+)-([0-9.e+]+) flops", state.split("fp32: ", 1)[1]):
        if float(lo) <= flops < float(hi):
            return True
    return any(float(lo) <= flops for lo in re.findall(r"from ([0-9.e+]+) flops", state))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2] == "autocast")
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    shim = sys.argv[1]
    plain = plain_env()
    modes = [("fp32 (no shim)", {}, "plain"),
             ("size rule (default)", {"LD_PRELOAD": shim, "AMPSHIM_REPORT": "1"}, "plain"),
             ("AMPSHIM_AUDIT=auto", {"LD_PRELOAD": shim, "AMPSHIM_REPORT": "1",
                                     "AMPSHIM_AUDIT": "auto"}, "plain"),
             ("torch.autocast", {}, "autocast")]
    print(cpu_line())
    print("per site: error against float64, us per call (median); decision from the report")
    results = []
    for label, extra, kind in modes:
        r = subprocess.run([sys.executable, __file__, "--child", kind], env=dict(plain, **extra),
                           capture_output=True, text=True)
        last = r.stdout.strip().splitlines()[-1:] if r.returncode == 0 else []
        results.append((label, ast.literal_eval(last[0]) if last else {}, decisions(r.stderr)))
    symbols = {"tiny": ("cblas_sgemm", "_multiarray_umath"),
               "numpy": ("cblas_sgemm", "_multiarray_umath"), "crossover": ("sgemm_", "_fblas"),
               "large": ("sgemm_", "libtorch_cpu"),
               "model": ("dnnl_convolution_2d_forward", "libtorch_cpu")}
    print(f"{'site':24s}" + "".join(f"{label:>39s}" for label, _, _ in results))
    for name, n, _ in SITES:
        row = f"{name + (' ' + str(n) + '^3' if n else ' (CNN)'):24s}"
        for label, res, (rows, auto) in results:
            err, us = res.get(name, (float("nan"), float("nan")))
            sym, obj = symbols[name]
            if label.startswith("AMPSHIM_AUDIT") and (sym, obj) in auto:
                speed, state = auto[(sym, obj)]
                head = state.split(",")[0].split(" but for")[0]
                if head == "lowered" and n and class_fp32(state, 2 * n ** 3):
                    head = "fp32 at this size"
                what = f"{head} {speed}"
            elif label.startswith("AMPSHIM_AUDIT"):
                what = "small"  # below the size rule: never lowered, so never audited
            elif label.startswith("size rule"):
                c = rows.get(sym, {})
                # numpy's two sizes share a row: the size rule's small is its tiny one
                small = c.get("small", "0") != "0" and (not n or n ** 3 < 96 ** 3)
                what = "small" if small else "lowered" if c.get("lowered", "0") != "0" \
                    else "as made"
            else:
                what = "bf16" if label.startswith("torch") and name in ("large", "model") \
                    else "fp32"
            row += f"  {err:8.1e} {us:9.1f}us {what[:17]:>17s}"
        print(row)
    print("(the size rule's and auto's decisions are per symbol and per site: sgemm_ is two sites,"
          " numpy's two sizes one site, weighed per size class under auto, whose speed column is"
          " the site's; a decision is the site's at exit; the model's time is per forward pass,"
          " its error the logits')")
    for label, _, (_, auto) in results:
        for (sym, obj), (speed, state) in auto.items():
            print(f"{label}: {sym} from {obj}: {state}")


if __name__ == "__main__":
    main()
