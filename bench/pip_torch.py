"""pip's PyTorch (the wheel most people have) on the CPU three ways, side by
side in one run: plainly (fp32), under torch.autocast("cpu", bfloat16),
under ampshim with its defaults and with AMPSHIM_OUTPUT=round (a lowered
convolution's output stored in bf16 where torch left its layout open), and
autocast and ampshim with glibc's malloc keeping large buffers (KEEP). The wheel's matmuls reach the shim through
the sgemm_ of the MKL linked into libtorch_cpu.so (policy/data/
embedded_blas.txt); its convolutions through the oneDNN linked in, which
exports nothing and is reached by entry patches (shim/onednn/v3_inside.c).
Workloads, one thread: torch.mm at 1024^3; a two-layer MLP's forward pass
(Linear 1024 -> 4096 -> 1024, GELU, batch 256); a Conv2d (64 -> 64, 3x3,
batch 8 of 56x56); ResNet-50's forward pass at batch 1, 8 and 32 (the
torchvision architecture, defined here: the wheel has no torchvision); a
training step of a small CNN at batch 8 (forward, backward, SGD). Each mode
runs in its own process, the modes alternating in turned order each round;
each cell is the median process CPU time of the timed calls over the rounds.
Error: relative Frobenius against float64 (ResNet-50: on its first two
images). "lowered" counts the calls ampshim lowered (sgemm_ and oneDNN's
convolutions).
usage: PIP_TORCH_PYTHON pip_torch.py PATH/TO/libampshim.so [ROUNDS]"""
import copy
import os
import statistics
import subprocess
import sys
import time

from bench_util import cpu_line, plain_env, shim_counter

WORKLOADS = [("torch.mm 1024^3", "mm", 10), ("MLP 1024-4096-1024, batch 256", "mlp", 10),
             ("Conv2d 64->64 3x3, batch 8 of 56x56", "conv", 10),
             ("ResNet-50 forward, batch 1", "resnet50_b1", 5),
             ("ResNet-50 forward, batch 8", "resnet50_b8", 2),
             ("ResNet-50 forward, batch 32", "resnet50_b32", 1),
             ("CNN training step, batch 8 of 64x64", "train_b8", 5)]
# glibc's malloc kept from returning large buffers to the kernel (no mmap
# for them, no trimming): a torch tensor over 32 MiB is otherwise a fresh
# mapping each call, faulted in page by page. The program's memory stays at
# its peak. ampshim(7), WHERE LOWERING PAYS.
KEEP = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736"
CONV_ROWS = [f"dnnl_convolution_2d_{d}" for d in ("forward", "backward_data",
                                                    "backward_weights")]


def resnet50(nn):
    """torchvision's ResNet-50 (v1.5: stride on the 3x3), in eval mode."""
    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.body = nn.Sequential(
                nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
                nn.ReLU(), nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                       nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            return (self.body(x) + self.down(x)).relu()

    layers, cin = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                   nn.MaxPool2d(3, 2, 1)], 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers).eval()


def child(workload, autocast, reps):
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    nn = torch.nn
    train = workload.startswith("train")
    if workload == "mm":
        net, x = None, (torch.randn(1024, 1024), torch.randn(1024, 1024))
    elif workload == "mlp":
        net = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).eval()
        x = torch.randn(256, 1024)
    elif workload == "conv":
        net, x = nn.Conv2d(64, 64, 3, padding=1).eval(), torch.randn(8, 64, 56, 56)
    elif workload.startswith("resnet50"):
        net, x = resnet50(nn), torch.randn(int(workload.split("_b")[1]), 3, 224, 224)
    else:
        net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                            nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.ReLU(),
                            nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.ReLU(),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))
        x = torch.randn(8, 3, 64, 64)
        target = torch.randint(0, 10, (8,))
        opt = torch.optim.SGD(net.parameters(), lr=0.01)

    def run():
        if train:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = nn.functional.cross_entropy(net(x), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach().float()
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            return (x[0] @ x[1] if net is None else net(x)).float()

    if train:  # the error of the first step's gradients
        probe = copy.deepcopy(net).double()
        nn.functional.cross_entropy(probe(x.double()), target).backward()
        exact = next(probe.parameters()).grad
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = nn.functional.cross_entropy(net(x), target)
        loss.backward()
        out = next(net.parameters()).grad.clone()
        opt.zero_grad()
    else:
        out = run()
        with torch.no_grad():
            # ResNet-50 in eval mode treats each image alone: float64 on
            # the first two is the reference of theirs.
            if workload.startswith("resnet50"):
                out, x64 = out[:2], x[:2].double()
            else:
                x64 = x.double() if net is not None else None
            exact = (x[0].double() @ x[1].double() if net is None
                     else copy.deepcopy(net).double()(x64))
    err = float((out.double() - exact).norm() / exact.norm())
    run()
    times = []
    for _ in range(reps):
        t = time.process_time()
        run()
        times.append(time.process_time() - t)
    counts = [shim_counter(f"stats.{s}.lowered") for s in ["sgemm_"] + CONV_ROWS]
    lowered = "-" if counts[0] is None else str(sum(c or 0 for c in counts))
    print(" ".join(f"{t * 1e3:.3f}" for t in times), f"{err:.2e}", lowered)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3] == "autocast", int(sys.argv[4]))
        return
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    shim, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 2
    plain = plain_env()
    import torch
    print(cpu_line())
    print(f"torch {torch.__version__} from {os.path.dirname(torch.__file__)}; one thread; "
          f"median process CPU time, {rounds} rounds, modes alternating")
    modes = [("fp32 (no shim)", plain, "plain"), ("torch.autocast bf16", plain, "autocast"),
             ("ampshim (defaults)", dict(plain, LD_PRELOAD=shim), "plain"),
             ("ampshim, OUTPUT=round", dict(plain, LD_PRELOAD=shim, AMPSHIM_OUTPUT="round"),
              "plain"),
             ("autocast, buffers kept", dict(plain, GLIBC_TUNABLES=KEEP), "autocast"),
             ("ampshim, buffers kept", dict(plain, LD_PRELOAD=shim, GLIBC_TUNABLES=KEEP), "plain")]
    for title, workload, reps in WORKLOADS:
        print(f"\n{title}\n{'mode':24} {'ms':>9} {'vs fp32':>8} {'vs autocast':>12} "
              f"{'error':>9} {'lowered':>8}")
        times = {m[0]: [] for m in modes}
        last = {}
        for r in range(rounds):
            order = modes[r % len(modes):] + modes[:r % len(modes)]
            for label, env, kind in order:
                out = subprocess.run([sys.executable, __file__, "--child", workload, kind,
                                      str(reps)], env=env, capture_output=True, text=True,
                                     check=True).stdout.split()
                times[label] += [float(t) for t in out[:-2]]
                last[label] = out[-2:]
        med = {k: statistics.median(v) for k, v in times.items()}
        base, ac = med[modes[0][0]], med[modes[1][0]]
        for label, _, _ in modes:
            err, lowered = last[label]
            print(f"{label:24} {med[label]:9.2f} {base / med[label]:7.2f}x "
                  f"{ac / med[label]:11.2f}x {err:>9} {lowered:>8}")


if __name__ == "__main__":
    main()
