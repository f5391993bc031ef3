"""The same fp32 PyTorch code on a GPU three ways, side by side in one run:
plain fp32, under torch.autocast('cuda'), and under ampshim (LD_PRELOAD, the
code unchanged); ampshim also with torch.backends.cudnn.benchmark on, and
with TORCH_CUDNN_V8_API_DISABLED=1 (convolutions through cuDNN's legacy API
instead of its graph API). mm, Linear, Conv2d, softmax, a small CNN, a
ResNet-50 bottleneck block (N 32, 256 -> 64 -> 64 -> 256 channels, 56x56,
forward and backward) and a Conv2d replayed from a torch.cuda.graph
capture; time and relative error against float64. Each mode runs in its own
process. Exits 77 where torch has no CUDA device.
usage: torch_three_ways.py PATH/TO/libampshim.so"""
import json
import os
import subprocess
import sys
import time


def child(mode):
    import torch
    torch.manual_seed(0)
    if mode == "benchmark":
        torch.backends.cudnn.benchmark = True
        mode = "plain"
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
    block = torch.nn.Sequential(
        torch.nn.Conv2d(256, 64, 1, bias=False), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.Conv2d(64, 64, 3, padding=1, bias=False), torch.nn.BatchNorm2d(64),
        torch.nn.ReLU(), torch.nn.Conv2d(64, 256, 1, bias=False),
        torch.nn.BatchNorm2d(256)).to(dev).eval()
    feat = torch.randn(32, 256, 56, 56, device=dev, requires_grad=True)

    def block_fwd_bwd():
        with torch.enable_grad():
            y = block(feat)
            y.sum().backward()
        return y.detach()

    # a Conv2d captured into a CUDA graph after warm-up on a side stream
    static_in = img.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            conv(static_in)
    torch.cuda.current_stream().wait_stream(side)
    captured = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(captured):
        static_out = conv(static_in)

    def replay():
        captured.replay()
        return static_out
    cases = {
        "mm": (lambda: x @ x, lambda: x.double() @ x.double()),
        "linear": (lambda: lin(x), lambda: torch.nn.functional.linear(x.double(), lin.weight.double(), lin.bias.double())),
        "conv2d": (lambda: conv(img), lambda: torch.nn.functional.conv2d(img.double(), conv.weight.double(), conv.bias.double(), padding=1)),
        "softmax": (lambda: torch.softmax(x, -1), lambda: torch.softmax(x.double(), -1)),
        "cnn": (lambda: cnn(small), lambda: cnn.double()(small.double())),
        "bottleneck": (block_fwd_bwd, lambda: block.double()(feat.double()).detach()),
        "conv_graph": (replay, lambda: torch.nn.functional.conv2d(img.double(), conv.weight.double(), conv.bias.double(), padding=1)),
    }
    out = {}
    with torch.no_grad():
        for name, (run, exact) in cases.items():
            ref = exact()
            if name == "cnn":
                cnn.float()
            if name == "bottleneck":
                block.float()
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
                       ("ampshim", "plain", dict(env, LD_PRELOAD=shim, AMPSHIM_REPORT=report)),
                       ("ampshim+bench", "benchmark", dict(env, LD_PRELOAD=shim)),
                       ("ampshim legacy", "plain",
                        dict(env, LD_PRELOAD=shim, TORCH_CUDNN_V8_API_DISABLED="1"))):
    runs[label] = json.loads(subprocess.run([sys.executable, __file__, "--child", mode], env=e,
                                            check=True, capture_output=True, text=True).stdout)
print(f"{'op':10} " + " ".join(f"{l + ' ms':>16} {l + ' err':>16}" for l in runs))
for op in runs["fp32"]:
    print(f"{op:10} " + " ".join(f"{runs[l][op][0]:16.3f} {runs[l][op][1]:16.3e}" for l in runs))
# Which library calls ampshim saw in its run (its exit report): what it
# lowered (convolutions under the cudnn_graph rows), and what torch did
# through paths it cannot see (torch's own softmax and norm kernels).
try:
    with open(report) as f:
        print("\nampshim's report for its run:")
        print(f.read().rstrip())
    os.unlink(report)
except OSError:
    print("\nampshim wrote no report (no hooked call was seen)")
