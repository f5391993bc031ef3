"""torch on a GPU, the quick check's part (scripts/gpu-check.sh --quick):
nn.Linear(4096, 4096) on 8192 rows and nn.Conv2d(128, 128, 3) on
32x128x56x56, each forward and forward+backward, five ways side by side,
each in its own process: fp32 (TF32 off for matmuls and cuDNN), torch's
defaults (as torch sets them: TF32 off for matmuls, on for cuDNN), torch's
TF32 (on for both), torch.autocast('cuda', float16), and ampshim
(LD_PRELOAD, fp32 code unchanged, torch's defaults, the shim's defaults).
Inputs and weights are made on the CPU from one seed, so every way sees
the same numbers; the error is against a float64 reference computed on
the CPU (the first 256 rows of the Linear, the first 2 images of the
Conv2d). The ways alternate over ROUNDS rounds (their order turning each
round) and each run's figures are printed as soon as it ends, so a run cut
short keeps what it measured; then one table (each time the least of the
rounds), ratios against fp32 and against torch's defaults, and the shim's
exit report. Exits 77 where torch has no CUDA device.
usage: torch_quick.py PATH/TO/libampshim.so [ROUNDS, default 2]"""
import json
import os
import subprocess
import sys
import tempfile
import time

MODES = ("fp32", "torch-default", "torch-tf32", "autocast", "ampshim")
KEYS = ["linear fwd ms", "linear fwd+bwd ms", "conv fwd ms", "conv fwd+bwd ms", "linear err",
        "conv err"]


def child(mode):
    import torch
    if mode in ("fp32", "torch-tf32"):  # the others keep torch's own defaults
        torch.backends.cuda.matmul.allow_tf32 = mode == "torch-tf32"
        torch.backends.cudnn.allow_tf32 = mode == "torch-tf32"
    torch.manual_seed(0)
    lin = torch.nn.Linear(4096, 4096)
    conv = torch.nn.Conv2d(128, 128, 3, padding=1, bias=False)
    x = torch.randn(8192, 4096)
    img = torch.randn(32, 128, 56, 56)
    with torch.no_grad():
        ref_lin = torch.nn.functional.linear(x[:256].double(), lin.weight.double(),
                                             lin.bias.double())
        ref_conv = torch.nn.functional.conv2d(img[:2].double(), conv.weight.double(), padding=1)
    lin, conv, x, img = lin.cuda(), conv.cuda(), x.cuda(), img.cuda()
    xg, imgg = x.clone().requires_grad_(), img.clone().requires_grad_()

    def run(f):
        if mode == "autocast":
            with torch.autocast("cuda", dtype=torch.float16):
                return f()
        return f()

    def ms(f, n=10):
        run(f)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            run(f)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) * 1000 / n

    def err(y, ref):
        return ((y.detach().cpu().double() - ref).norm() / ref.norm()).item()

    def step(m, i):
        m.zero_grad(set_to_none=True)
        m(i).float().square().mean().backward()

    r = {}
    with torch.no_grad():
        r["linear fwd ms"] = ms(lambda: lin(x))
        r["linear err"] = err(run(lambda: lin(x[:256])), ref_lin)
        r["conv fwd ms"] = ms(lambda: conv(img))
        r["conv err"] = err(run(lambda: conv(img[:2])), ref_conv)
    r["linear fwd+bwd ms"] = ms(lambda: step(lin, xg))
    r["conv fwd+bwd ms"] = ms(lambda: step(conv, imgg))
    return r


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
        return 0
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        print(__doc__)
        return 2
    rounds = int(sys.argv[2]) if len(sys.argv) == 3 else 2
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        print("torch_quick: no CUDA device for torch; skipped")
        return 77
    shim = sys.argv[1]
    report = os.path.join(tempfile.mkdtemp(), "report.txt")
    base = {k: v for k, v in os.environ.items()
            if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN "
          f"{torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}; torch's defaults: "
          f"matmul allow_tf32 {torch.backends.cuda.matmul.allow_tf32}, cudnn allow_tf32 "
          f"{torch.backends.cudnn.allow_tf32}", flush=True)
    results, status = {}, 0
    for r in range(rounds):
        k = r % len(MODES)
        for mode in MODES[k:] + MODES[:k]:
            env = dict(base, LD_PRELOAD=shim, AMPSHIM_REPORT=report) if mode == "ampshim" else base
            p = subprocess.run([sys.executable, __file__, "--child", mode], env=env,
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"round {r + 1} {mode}: exit {p.returncode}\n{p.stderr[-3000:]}", flush=True)
                status = 1
                continue
            got = json.loads(p.stdout.strip().splitlines()[-1])
            print(f"round {r + 1} {mode}: " + ", ".join(
                f"{key} {got[key]:.3f}" if key.endswith("ms") else f"{key} {got[key]:.2e}"
                for key in KEYS), flush=True)
            best = results.setdefault(mode, dict(got))
            for key in KEYS:  # times: the least of the rounds; errors do not vary
                best[key] = min(best[key], got[key])
    keys = KEYS
    print(f"{'':32}" + "".join(f"{m:>14}" for m in MODES))
    for k in keys:
        row = f"{k:32}"
        for m in MODES:
            v = results.get(m, {}).get(k)
            row += f"{'-':>14}" if v is None else (f"{v:14.3f}" if k.endswith("ms") else
                                                   f"{v:14.2e}")
        print(row)
    for against in ("fp32", "torch-default"):
        ref = results.get(against, {})
        for k in keys[:4]:
            row = f"{against + ' / ' + k[:-3]:32}"
            for m in MODES:
                v = results.get(m, {}).get(k)
                row += f"{'-':>14}" if not v or k not in ref else f"{ref[k] / v:13.2f}x"
            print(row)
    try:
        with open(report) as f:
            print("ampshim's exit report:\n" + f.read())
    except OSError:
        print("ampshim's exit report: none written")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
