"""Debian's torch 1.13 under ampshim: its fp32 convolutions run as oneDNN
primitives (ideep, in libtorch_cpu.so, a listed oneDNN caller), which the
shim lowers in their descriptors. Checked here:

- Conv2d and Conv1d forward (torch 1.13 runs a Conv1d as a 2D convolution
  of height 1), and a Conv2d's input and weight gradients, are counted
  lowered in their primitive rows, and every element is
  within the bound of a bf16 product of the float64 result: a lowered
  output element sums k products of inputs rounded to bf16 (each within
  2^-8 relative), in fp32, so |y - y64| <= (2^-7 + (k + 2) 2^-24) S, S the
  sum of the products' magnitudes (computed here in float64 on |x|, |w|).
  At least one element is further than fp32 could be (lowering happened).
- A ResNet basic block (torchvision) trains a step: forward and backward
  lowered, its input gradient within 5% (relative norm) of float64.
- torch.linalg (solve, qr) bit-identical to torch without the shim.
- A channels_last Conv2d lowered on native units, within the same bound.
- With AMPSHIM_ENABLE=0 (--same), every result bit-identical to torch
  without the shim.
- Where oneDNN has no native kernel for the lowered convolutions
  (--no-kernel: ONEDNN_MAX_CPU_ISA=AVX2, a CPU without bf16 units, or
  AMPSHIM_CPU_DTYPE=fp16 on any x86 CPU), whatever the settings
  (AMPSHIM_LOWER_MIN=0, AMPSHIM_CPU_KERNEL=emulate): no exception, every
  convolution result (Conv2d, Conv1d, their gradients, a ResNet block's
  forward and backward) bit-identical to torch without the shim, the
  convolution rows counted nounits and never lowered; a Linear (BLAS
  sgemm) bit-identical too unless the settings lower BLAS products
  emulated, then within the bound of the dtype.
- The default run skips (77) on a CPU whose convolutions cannot be lowered
  (no bf16 units): it needs avx512_bf16 or AMX."""
import ctypes
import sys

import numpy as np
import torch
import torch.nn.functional as F

from client_util import Checker, emit_reference, reference, shim_loaded

torch.set_num_threads(1)
U = 2.0 ** -24


def counter(name):
    try:
        ctl = ctypes.CDLL(None).ampshim_ctl
    except AttributeError:
        return 0
    v, n = ctypes.c_ulonglong(0), ctypes.c_size_t(8)
    ctl(name.encode(), ctypes.byref(v), ctypes.byref(n), None, 0)
    return v.value


def inputs():
    g = torch.Generator().manual_seed(7)
    return {
        "x2": torch.randn(4, 32, 40, 40, generator=g),
        "w2": torch.randn(64, 32, 3, 3, generator=g) * 0.1,
        "b2": torch.randn(64, generator=g),
        "g2": torch.randn(4, 64, 20, 20, generator=g),
        "x1": torch.randn(4, 64, 300, generator=g),
        "w1": torch.randn(128, 64, 5, generator=g) * 0.1,
        "A": torch.randn(96, 96, generator=g),
        "B": torch.randn(96, 8, generator=g),
        "block_x": torch.randn(4, 64, 28, 28, generator=g),
        "lin_x": torch.randn(256, 512, generator=g),
        "lin_w": torch.randn(512, 512, generator=g) * 0.05,
    }


def compute(t, more=False):
    """Everything the shim may touch, in fp32 (as the program makes it);
    more: a Linear and a ResNet block's step too."""
    out = {}
    with torch.no_grad():
        out["conv2d"] = F.conv2d(t["x2"], t["w2"], t["b2"], stride=2, padding=1).numpy()
        out["conv1d"] = F.conv1d(t["x1"], t["w1"], padding=2).numpy()
        out["solve"] = torch.linalg.solve(t["A"], t["B"]).numpy()
        out["qr"] = torch.linalg.qr(t["A"])[0].numpy()
    x = t["x2"].clone().requires_grad_(True)
    w = t["w2"].clone().requires_grad_(True)
    F.conv2d(x, w, t["b2"], stride=2, padding=1).mul(t["g2"]).sum().backward()
    out["dx"], out["dw"] = x.grad.numpy(), w.grad.numpy()
    if more:
        import torchvision

        torch.manual_seed(3)
        block = torchvision.models.resnet.BasicBlock(64, 64)
        bx = t["block_x"].clone().requires_grad_(True)
        y = block(bx)
        y.square().mean().backward()
        out["block_y"], out["block_dx"] = y.detach().numpy(), bx.grad.numpy()
        out["block_dw"] = block.conv1.weight.grad.numpy()
        lx = t["lin_x"].clone().requires_grad_(True)
        lw = t["lin_w"].clone().requires_grad_(True)
        ly = F.linear(lx, lw)
        ly.sum().backward()
        out["linear"], out["linear_dx"] = ly.detach().numpy(), lx.grad.numpy()
    return out


def check_bound(c, what, got, exact, mag, k):
    diff = np.abs(got.astype(np.float64) - exact)
    allowed = (2.0 ** -7 + (k + 2) * U) * mag + 1e-30
    worst = float((diff / allowed).max())
    c.check(f"{what} within the bf16 bound of float64", worst <= 1.0, f"{worst:.2f} of the bound")
    c.check(f"{what} lowered (beyond fp32's error somewhere)",
            float((diff / (mag + 1e-30)).max()) > 2 * (k + 2) * U)


if len(sys.argv) > 2 and sys.argv[1] == "--reference":
    emit_reference(compute(inputs(), more=sys.argv[2] == "more"))
    sys.exit(0)

CONV_ROWS = [f"dnnl_convolution_2d_{d}" for d in ("forward", "backward_data", "backward_weights")]


def no_kernel_run():
    """--no-kernel: oneDNN cannot make the lowered convolutions here."""
    import os

    c = Checker("onednn_torch_check --no-kernel")
    c.check("ampshim is loaded in this process", shim_loaded())
    t = inputs()
    before = {r: counter(f"stats.{r}.nounits") for r in CONV_ROWS}
    try:
        got = compute(t, more=True)
    except RuntimeError as e:  # what torch raised before ampshim asked oneDNN first
        c.check("torch runs its convolutions under the shim", False, str(e))
        c.finish()
    ref = reference(__file__, "more")
    emulated_blas = (os.environ.get("AMPSHIM_LOWER_MIN") == "0"
                     or os.environ.get("AMPSHIM_CPU_LOWER_MIN") == "0"
                     or os.environ.get("AMPSHIM_CPU_KERNEL") in ("emulate", "native"))
    for name in got:
        if name.startswith("linear") and emulated_blas:
            continue
        c.same_bits(f"torch {name} bit-identical to torch without the shim", got[name], ref[name])
    for r in CONV_ROWS:
        c.check(f"{r} counted nounits", counter(f"stats.{r}.nounits") > before[r])
        c.check(f"{r} never lowered", counter(f"stats.{r}.lowered") == 0)
    if emulated_blas:
        # The settings lower BLAS products emulated: the Linear's forward is
        # fp32 sums of products of rounded inputs (k = 512).
        fp16 = os.environ.get("AMPSHIM_CPU_DTYPE") == "fp16"
        u_in = 2.0 ** -11 if fp16 else 2.0 ** -8
        d, a = t["lin_x"].double(), t["lin_x"].double().abs()
        exact = F.linear(d, t["lin_w"].double()).numpy()
        mag = F.linear(a, t["lin_w"].double().abs()).numpy()
        diff = np.abs(got["linear"].astype(np.float64) - exact)
        worst = float((diff / ((2 * u_in + 514 * U) * mag + 1e-30)).max())
        c.check("Linear within the bound of its dtype (emulated)", worst <= 1.0,
                f"{worst:.2f} of the bound")
    c.finish()


if "--no-kernel" in sys.argv:
    no_kernel_run()

c = Checker("onednn_torch_check")
c.check("ampshim is loaded in this process", shim_loaded())
t = inputs()
if "--same" in sys.argv:
    got, ref = compute(t), reference(__file__, "plain")
    for name in got:
        c.same_bits(f"torch {name} bit-identical", got[name], ref[name])
    c.finish()

# A CPU whose convolutions cannot be lowered (no bf16 units) has nothing to
# check here: the --no-kernel runs cover it.
with torch.no_grad():
    nounits = counter("stats.dnnl_convolution_2d_forward.nounits")
    F.conv2d(t["x2"], t["w2"], t["b2"], stride=2, padding=1)
    if counter("stats.dnnl_convolution_2d_forward.nounits") > nounits:
        print("onednn_torch_check: skipped: needs native bf16 units (avx512_bf16 or AMX) "
              "for oneDNN's bf16 convolutions; this CPU's run as made (nounits)")
        sys.exit(77)

rows = {
    "fwd": "stats.dnnl_convolution_2d_forward.lowered",
    "bwd_data": "stats.dnnl_convolution_2d_backward_data.lowered",
    "bwd_weights": "stats.dnnl_convolution_2d_backward_weights.lowered",
}
before = {k: counter(v) for k, v in rows.items()}
got = compute(t)
after = {k: counter(v) for k, v in rows.items()}
for k in rows:
    c.check(f"{rows[k]} counted", after[k] > before[k], f"{before[k]} -> {after[k]}")

d = {k: v.double() for k, v in t.items()}
a = {k: v.abs() for k, v in d.items()}
check_bound(c, "Conv2d forward", got["conv2d"],
            F.conv2d(d["x2"], d["w2"], d["b2"], stride=2, padding=1).numpy(),
            F.conv2d(a["x2"], a["w2"], a["b2"], stride=2, padding=1).numpy(), 32 * 9)
check_bound(c, "Conv1d forward", got["conv1d"], F.conv1d(d["x1"], d["w1"], padding=2).numpy(),
            F.conv1d(a["x1"], a["w1"], padding=2).numpy(), 64 * 5)
shape_x, shape_w = tuple(t["x2"].shape), tuple(t["w2"].shape)
grad_in = torch.nn.grad.conv2d_input
grad_w = torch.nn.grad.conv2d_weight
check_bound(c, "Conv2d input gradient", got["dx"],
            grad_in(shape_x, d["w2"], d["g2"], stride=2, padding=1).numpy(),
            grad_in(shape_x, a["w2"], a["g2"], stride=2, padding=1).numpy(), 64 * 9)
check_bound(c, "Conv2d weight gradient", got["dw"],
            grad_w(d["x2"], shape_w, d["g2"], stride=2, padding=1).numpy(),
            grad_w(a["x2"], shape_w, a["g2"], stride=2, padding=1).numpy(), 4 * 20 * 20)

ref = reference(__file__, "plain")
c.same_bits("torch.linalg.solve bit-identical", got["solve"], ref["solve"])
c.same_bits("torch.linalg.qr bit-identical", got["qr"], ref["qr"])

# A ResNet basic block, one training step, against float64.
import torchvision  # noqa: E402

torch.manual_seed(3)
block = torchvision.models.resnet.BasicBlock(64, 64)
block64 = torchvision.models.resnet.BasicBlock(64, 64).double()
block64.load_state_dict(block.state_dict())
x = t["block_x"].clone().requires_grad_(True)
x64 = t["block_x"].double().requires_grad_(True)
lowered = counter("stats.dnnl_convolution_2d_backward_data.lowered")
block(x).square().mean().backward()
block64(x64).square().mean().backward()
c.check("ResNet block backward lowered",
        counter("stats.dnnl_convolution_2d_backward_data.lowered") > lowered)
rel = float((x.grad.double() - x64.grad).norm() / x64.grad.norm())
c.check("ResNet block input gradient within 5% of float64", rel < 0.05, f"{rel:.3g}")

# channels_last (issue 51, item 10): its convolutions were counted nounits
# (the twin's input in oneDNN's chosen layout beside a channels-last output
# had only a reference kernel); now native, within the bf16 bound.
with torch.no_grad():
    xc = t["x2"].contiguous(memory_format=torch.channels_last)
    wc = t["w2"].contiguous(memory_format=torch.channels_last)
    low, nounits = (counter("stats.dnnl_convolution_2d_forward.lowered"),
                    counter("stats.dnnl_convolution_2d_forward.nounits"))
    yc = F.conv2d(xc, wc, t["b2"], stride=2, padding=1).contiguous().numpy()
    c.check("a channels_last Conv2d lowered, not counted nounits",
            counter("stats.dnnl_convolution_2d_forward.lowered") == low + 1 and
            counter("stats.dnnl_convolution_2d_forward.nounits") == nounits)
    check_bound(c, "channels_last Conv2d forward", yc,
                F.conv2d(d["x2"], d["w2"], d["b2"], stride=2, padding=1).numpy(),
                F.conv2d(a["x2"], a["w2"], a["b2"], stride=2, padding=1).numpy(), 32 * 9)
c.finish()
