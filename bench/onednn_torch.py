"""Debian's torch convolutions (oneDNN primitives through ideep) four ways,
side by side in one run: plainly (fp32), under torch.autocast('cpu',
dtype=torch.bfloat16), under ampshim with its defaults (bf16 inputs, fp32
outputs) and under ampshim with AMPSHIM_OUTPUT=round (outputs stored in bf16
as autocast stores them). Workloads: the torch CPU autocast document's
example, Conv2d(64, 128, 3, stride 2, padding 1) on 224x224 images (batch 8,
and batch 64 in one round); torchvision ResNet-50 inference at batch 1, 8 and
32; one ResNet-50 training step (SGD) at batch 8. Each mode runs in its own
process; modes alternate for ROUNDS rounds and each cell is the median over
rounds of per-process medians. Error: the largest |difference| over the
largest |value| against float64 on the first image (not for training). "lowered" counts the convolutions ampshim ran in bf16 per
call (forward and backward rows). Then one profile per mode of the ResNet-50
batch 8 forward: oneDNN's own times per primitive kind and implementation
(ONEDNN_VERBOSE), which says where the time goes.
usage: onednn_torch.py PATH/TO/libampshim.so [--quick]"""
import os
import statistics
import subprocess
import sys
import time

from bench_util import cpu_line, shim_counter

ROUNDS, REPS = 3, 3


def shim_lowered():
    if shim_counter("stats.dnnl_primitive_execute.passthrough") is None:
        return "-"
    return str(sum(shim_counter(f"stats.dnnl_convolution_2d_{d}.lowered")
                   for d in ("forward", "backward_data", "backward_weights")))


def child(workload, mode, reps):
    import torch
    import torchvision
    torch.manual_seed(0)
    kind, batch = workload.split(":")
    batch = int(batch)
    if kind == "example":
        net = torch.nn.Conv2d(64, 128, 3, stride=2, padding=1)
        x = torch.randn(batch, 64, 224, 224)
    else:
        net = torchvision.models.resnet50()
        x = torch.randn(batch, 3, 224, 224)
    train = kind == "train"
    autocast = mode == "autocast"
    if train:
        net.train()
        opt = torch.optim.SGD(net.parameters(), lr=1e-3)

        def run():
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = net(x).float().square().mean()
            loss.backward()
            opt.step()
            return loss.detach()
    else:
        net.eval()

        def run():
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                return net(x)
    out = run()
    err = float("nan")  # training: the step's loss is not compared
    if not train:
        net.double()
        with torch.no_grad():
            exact = net(x[:1].double())
        net.float()
        err = ((out[:1].float().double() - exact).abs().max() / exact.abs().max()).item()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    print(f"{statistics.median(times) * 1e3:.1f} {err:.3e} {shim_lowered()}")


def profile(env):
    """oneDNN's own times of one ResNet-50 batch 8 forward, by kind and implementation."""
    out = subprocess.run([sys.executable, __file__, "--child", "resnet:8", env[1], "1"],
                         env=dict(env[2], ONEDNN_VERBOSE="1"), capture_output=True, text=True,
                         check=True).stdout
    total, count = {}, {}
    lines = [ln for ln in out.splitlines() if ln.startswith("onednn_verbose,exec,")]
    # The last forward only: the child ran 1 + 1 of them.
    lines = lines[len(lines) // 2:]
    for ln in lines:
        f = ln.split(",")
        dts = " ".join(sorted({m.split(":")[0].split("_")[1] for m in f[6].split() if "_" in m}))
        key = f"{f[3]} {f[4]} ({dts})"
        total[key] = total.get(key, 0.0) + float(f[-1])
        count[key] = count.get(key, 0) + 1
    return total, count


if len(sys.argv) > 4 and sys.argv[1] == "--child":
    child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    sys.exit(0)

shim = sys.argv[1]
quick = "--quick" in sys.argv
plain_env = {k: v for k, v in os.environ.items()
             if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
modes = [
    ("fp32 (no shim)", "plain", plain_env),
    ("torch.autocast cpu bf16", "autocast", plain_env),
    ("ampshim (defaults)", "plain", dict(plain_env, LD_PRELOAD=shim)),
    ("ampshim AMPSHIM_OUTPUT=round", "plain",
     dict(plain_env, LD_PRELOAD=shim, AMPSHIM_OUTPUT="round")),
]
workloads = [
    ("Conv2d(64,128,3,s2,p1) on 8x64x224x224 (the autocast example)", "example:8", ROUNDS),
    ("ResNet-50 inference, batch 1", "resnet:1", ROUNDS),
    ("ResNet-50 inference, batch 8", "resnet:8", ROUNDS),
    ("ResNet-50 inference, batch 32", "resnet:32", ROUNDS),
    ("ResNet-50 training step, batch 8", "train:8", ROUNDS),
    ("Conv2d example at batch 64 (one round)", "example:64", 1),
]
if quick:
    workloads = workloads[:1]
print(cpu_line())
probe = subprocess.run([sys.executable, "-c", "import torch, torchvision; print(torch.__version__,"
                        " torchvision.__version__, torch.get_num_threads())"], env=plain_env,
                       capture_output=True, text=True, check=True).stdout.split()
print(f"torch {probe[0]}, torchvision {probe[1]} ({probe[2]} threads); median of alternating "
      f"rounds x {REPS} calls, each mode in its own process")
for title, workload, rounds in workloads:
    results = {label: [] for label, _, _ in modes}
    for _ in range(rounds):
        for label, mode, env in modes:
            line = subprocess.run([sys.executable, __file__, "--child", workload, mode, str(REPS)],
                                  env=env, check=True, capture_output=True,
                                  text=True).stdout.split()
            results[label].append(line)
    print(f"\n{title}")
    print(f"{'mode':30} {'ms':>9} {'vs fp32':>8} {'vs autocast':>12} {'error':>10} {'lowered':>8}")
    med = {label: statistics.median(float(r[0]) for r in results[label]) for label, _, _ in modes}
    base, ac = med[modes[0][0]], med[modes[1][0]]
    for label, _, _ in modes:
        err, lowered = results[label][0][1:3]
        err = "-" if err == "nan" else f"{float(err):.2e}"
        print(f"{label:30} {med[label]:9.1f} {base / med[label]:7.2f}x {ac / med[label]:11.2f}x "
              f"{err:>10} {lowered:>8}")
    sys.stdout.flush()
if not quick:
    print("\nWhere a ResNet-50 batch 8 forward spends its oneDNN time (ONEDNN_VERBOSE, ms; "
          "the remainder of the wall time is torch's own work and ampshim's BLAS path)")
    for m in modes:
        total, count = profile(m)
        print(f"  {m[0]}:")
        for key in sorted(total, key=lambda k: -total[k])[:6]:
            print(f"    {key:64} {count[key]:4d} calls {total[key]:9.1f}")
