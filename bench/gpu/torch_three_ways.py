"""The same fp32 PyTorch code on a GPU three ways, side by side in one run:
plain fp32, under torch.autocast('cuda'), and under ampshim (LD_PRELOAD, the
code unchanged). mm, Linear, Conv2d, softmax and a small CNN forward; time
and relative error against float64. Each mode runs in its own process.
Exits 77 where torch has no CUDA device.
usage: torch_three_ways.py PATH/TO/libampshim.so"""
import json
import os
import subprocess
import sys
import time


def child(mode):
    import torch
    torch.manual_seed(0)
    dev = "cuda"
    x = torch.randn(2048, 2048, device=dev)
    lin = torch.nn.Linear(2048, 2048).to(dev)
    conv = torch.nn.Conv2d(64, 128, 3, padding=1).to(dev)
    img = torch.randn(32, 64, 56, 56, device=dev)
    cnn = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                              torch.nn.Linear(64, 10)).to(dev)
    small = torch.randn(64, 3, 64, 64, device=dev)
    cases = {
        "mm": (lambda: x @ x, lambda: x.double() @ x.double()),
        "linear": (lambda: lin(x), lambda: torch.nn.functional.linear(x.double(), lin.weight.double(), lin.bias.double())),
        "conv2d": (lambda: conv(img), lambda: torch.nn.functional.conv2d(img.double(), conv.weight.double(), conv.bias.double(), padding=1)),
        "softmax": (lambda: torch.softmax(x, -1), lambda: torch.softmax(x.double(), -1)),
        "cnn": (lambda: cnn(small), lambda: cnn.double()(small.double())),
    }
    out = {}
    with torch.no_grad():
        for name, (run, exact) in cases.items():
            ref = exact()
            if name == "cnn":
                cnn.float()
            def go():
                if mode == "autocast":
                    with torch.autocast("cuda"):
                        return run()
                return run()
            y = go()
            torch.cuda.synchronize()
            t = []
            for _ in range(20):
                t0 = time.perf_counter()
                go()
                torch.cuda.synchronize()
                t.append(time.perf_counter() - t0)
            t.sort()
            err = ((y.double() - ref).norm() / ref.norm()).item()
            out[name] = (t[10] * 1e3, err)
    print(json.dumps(out))


if len(sys.argv) > 2 and sys.argv[1] == "--child":
    child(sys.argv[2])
    sys.exit(0)
try:
    import torch
    if not torch.cuda.is_available():
        raise ImportError
except ImportError:
    print("torch_three_ways: no CUDA device for torch; skipped")
    sys.exit(77)
shim = sys.argv[1]
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
report = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"torch_three_ways.{os.getpid()}.report")
runs = {}
for label, mode, e in (("fp32", "plain", env), ("torch.autocast", "autocast", env),
                       ("ampshim", "plain", dict(env, LD_PRELOAD=shim, AMPSHIM_REPORT=report))):
    runs[label] = json.loads(subprocess.run([sys.executable, __file__, "--child", mode], env=e,
                                            check=True, capture_output=True, text=True).stdout)
print(f"{'op':10} " + " ".join(f"{l + ' ms':>16} {l + ' err':>16}" for l in runs))
for op in runs["fp32"]:
    print(f"{op:10} " + " ".join(f"{runs[l][op][0]:16.3f} {runs[l][op][1]:16.3e}" for l in runs))
# Which library calls ampshim saw in its run (its exit report): what it
# lowered, and what torch did through paths it cannot see (cuDNN's graph
# API for convolutions, torch's own softmax kernels).
try:
    with open(report) as f:
        print("\nampshim's report for its run:")
        print(f.read().rstrip())
    os.unlink(report)
except OSError:
    print("\nampshim wrote no report (no hooked call was seen)")
