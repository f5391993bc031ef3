"""pip's PyTorch (the CUDA wheel; its CPU side runs without a GPU) under
ampshim. The wheel links MKL and oneDNN 3 into libtorch_cpu.so: MKL's
sgemm_ is exported and ATen's fp32 mm, addmm and linear call it through the
PLT, so the hook sees them (policy/data/embedded_blas.txt makes them the
program's calls, not the library's); oneDNN's functions are not exported,
and the shim reaches them by entry patches found in the library's static
symbol table (shim/onednn/v3_inside.c). Each mode runs the same work in a
child and hashes the results:

- the evidence: libtorch_cpu.so defines sgemm_ and exports no
  dnnl_primitive_execute; the report says its oneDNN was reached;
- AMPSHIM_ENABLE=0 and a passthrough policy: bit for bit without the shim;
- the defaults where this CPU has bf16 units: torch.mm and nn.Linear lowered
  through sgemm_, a Conv2d's forward pass and both its gradients lowered in
  oneDNN's descriptors, each with bf16's error; a weight changed in place
  between two calls gives the new weight's answer, and a convolution with a
  32 MiB output (asked for dense where the kernel chose channels-last)
  too; torch.linalg (MKL's LAPACK, fp32 regions) bit for bit. Without units, and with
  ONEDNN_MAX_CPU_ISA=AVX2: counted nounits, bit for bit fp32;
- a machine with pip's torch and no oneDNN 2 of the shim's own (a
  libdnnl.so.2 first on the library path that is not oneDNN, made here):
  where this CPU has bf16 units the BLAS products and the convolutions are
  still lowered, on the oneDNN 3 inside the wheel (the report's cpu line
  names it), with bf16's error; without units both run as made.
usage: pip_torch_check.py   (run by the pip torch environment's Python)"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

from client_util import Checker, four_ways, measure_child, shim_loaded, shim_stat

PASSTHROUGH = ",".join(f"cpu:{op}=passthrough"
                       for op in ("mm", "addmm", "linear", "matmul", "conv2d"))
CONV_ROWS = ("dnnl_convolution_2d_forward", "dnnl_convolution_2d_backward_data",
             "dnnl_convolution_2d_backward_weights")


def measure():
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    a, b = torch.randn(384, 384), torch.randn(384, 384)
    lin, x = torch.nn.Linear(384, 256), torch.randn(64, 384)
    conv, img = torch.nn.Conv2d(32, 64, 3, padding=1), torch.randn(4, 32, 28, 28)
    img.requires_grad_(True)
    # A forward convolution whose fp32 output is 32 MiB: where the lowered
    # kernel chose channels-last for it, its descriptor is made again with a
    # dense output (v3_inside.c, V3_DENSE_OUTPUT_BYTES).
    big, big_img = torch.nn.Conv2d(4, 64, 3, padding=1), torch.randn(8, 4, 128, 128)
    m = torch.randn(200, 200)
    spd = (m.double() @ m.double().T / 200 + torch.eye(200, dtype=torch.float64)).float()

    def conv64(w, bias, x):
        return torch.nn.functional.conv2d(x.double(), w.double(), bias.double(), padding=1)

    # A training step's convolution: the forward pass and both gradients.
    y = conv(img)
    y.square().sum().backward()
    x64 = img.detach().double().requires_grad_(True)
    w64 = conv.weight.detach().double().requires_grad_(True)
    y64 = conv64(w64, conv.bias.detach(), x64)
    y64.square().sum().backward()
    with torch.no_grad():
        # The weight changed in place between two calls.
        conv.weight.mul_(-0.5)
        y_new = conv(img)
        y_new64 = conv64(conv.weight, conv.bias, img)
        lowered = {"mm": a @ b, "linear": lin(x), "conv": y, "conv_dx": img.grad,
                   "conv_dw": conv.weight.grad, "conv_changed": y_new,
                   "conv_32mib_output": big(big_img)}
        exact = {"mm": a.double() @ b.double(),
                 "linear": torch.nn.functional.linear(x.double(), lin.weight.double(),
                                                      lin.bias.double()),
                 "conv": y64, "conv_dx": x64.grad, "conv_dw": w64.grad,
                 "conv_changed": y_new64,
                 "conv_32mib_output": conv64(big.weight, big.bias, big_img)}
        as_made = {"solve": torch.linalg.solve(m, x[:, :200].T),
                   "eigh": torch.linalg.eigh(spd)[0], "svd": torch.linalg.svdvals(m),
                   "cholesky": torch.linalg.cholesky(spd)}

    def digest(d):
        h = hashlib.sha256()
        for k in sorted(d):
            h.update(k.encode())
            h.update(d[k].detach().contiguous().numpy().tobytes())
        return h.hexdigest()

    err = {k: float((lowered[k].detach().double() - exact[k]).norm() / exact[k].norm())
           for k in lowered}
    print(repr({"all": digest({**lowered, **as_made}), "as_made": digest(as_made), "err": err,
                "lowered": shim_stat("sgemm_", "lowered"),
                "nounits": shim_stat("sgemm_", "nounits"),
                "conv_lowered": [shim_stat(r, "lowered") for r in CONV_ROWS],
                "conv_nounits": [shim_stat(r, "nounits") for r in CONV_ROWS],
                "torch": torch.__version__}))


if len(sys.argv) > 1 and sys.argv[1] == "--measure":
    measure()
    sys.exit(0)

ck = Checker("pip_torch_check")
ck.check("libampshim.so is loaded (the test runs under LD_PRELOAD)", shim_loaded())
import torch  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check  # noqa: E402  (tests/check.py)
lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
ck.check("libtorch_cpu.so exports MKL's sgemm_", hasattr(lib, "sgemm_"))
ck.check("... and no oneDNN entry point (dnnl_primitive_execute)",
         not hasattr(lib, "dnnl_primitive_execute"))
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
ran = four_ways(ck, __file__, base, PASSTHROUGH)
if ran:
    plain, default, report = ran
    print(f"torch {default['torch']}: errors fp32 {plain['err']}, defaults {default['err']}; "
          f"sgemm_ lowered {default['lowered']}, nounits {default['nounits']}; convolutions "
          f"lowered {default['conv_lowered']}, nounits {default['conv_nounits']}")
    ck.check("the report says the oneDNN inside libtorch_cpu.so was reached",
             "inside libtorch_cpu.so: reached by entry patches" in report, report[-2000:])
    ck.check("the defaults: torch.linalg (MKL's LAPACK) bit for bit",
             default["as_made"] == plain["as_made"])
    if check.cpu_has_bf16_units():
        ck.check("the defaults: torch.mm and nn.Linear lowered through the wheel's sgemm_",
                 default["lowered"] >= 2, report[-2000:])
        ck.check("... a Conv2d's forward pass, input and weight gradients lowered in oneDNN",
                 all(n >= 1 for n in default["conv_lowered"]), report[-2000:])
        ck.check("... each with bf16's error (1e-4 to 1e-2; fp32's ~1e-7), the weight changed "
                 "in place included", all(1e-4 < e < 1e-2 for e in default["err"].values()),
                 str(default["err"]))
    else:
        ck.check("no bf16 units: counted nounits, bit for bit fp32",
                 default["nounits"] >= 2 and default["all"] == plain["all"], report[-2000:])
    # oneDNN held to AVX2 (no bf16 kernels): its convolutions run as made.
    avx2_plain, _ = measure_child(__file__, 0, base, shim=False, ONEDNN_MAX_CPU_ISA="AVX2")
    avx2, avx2_report = measure_child(__file__, 0, base, AMPSHIM_REPORT="1",
                                      ONEDNN_MAX_CPU_ISA="AVX2")
    ck.check("ONEDNN_MAX_CPU_ISA=AVX2: no convolution lowered, counted nounits, bit for bit",
             avx2 and avx2_plain and avx2["conv_lowered"] == [0, 0, 0] and
             all(n >= 1 for n in avx2["conv_nounits"]) and avx2["all"] == avx2_plain["all"],
             avx2_report[-2000:])
    # No oneDNN 2 for the shim's own kernels: a libdnnl.so.2 that is not
    # oneDNN comes first on the library path.
    cc = shutil.which("cc")
    if cc:
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([cc, "-shared", "-fPIC", "-x", "c", "-", "-o",
                            os.path.join(d, "libdnnl.so.2")], input=b"int not_onednn;\n",
                           check=True)
            alone, alone_report = measure_child(__file__, 0, base, AMPSHIM_REPORT="1",
                                                LD_LIBRARY_PATH=d)
        units = check.cpu_has_bf16_units()
        ck.check("no oneDNN 2 for the shim: the BLAS products " +
                 ("lowered on the oneDNN 3 inside the wheel, with bf16's error" if units
                  else "counted nounits"),
                 alone and ((alone["lowered"] >= 2 and "inside libtorch_cpu.so" in alone_report and
                             all(1e-4 < e < 1e-2 for e in alone["err"].values()))
                            if units else (alone["lowered"] == 0 and alone["nounits"] >= 2)),
                 alone_report[-2000:])
        ck.check("... the convolutions " + ("lowered through the oneDNN inside the wheel"
                                            if units else "as made (no units)"),
                 alone and (all(n >= 1 for n in alone["conv_lowered"]) if units
                            else alone["conv_lowered"] == [0, 0, 0]), alone_report[-2000:])
ck.finish()
