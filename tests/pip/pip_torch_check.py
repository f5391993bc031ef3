"""pip's PyTorch (the CUDA wheel; its CPU side runs without a GPU) under
ampshim. The wheel links MKL and oneDNN into libtorch_cpu.so: MKL's sgemm_
is exported and ATen's fp32 mm, addmm and linear call it through the PLT,
so the hook sees them (policy/data/embedded_blas.txt makes them the
program's calls, not the library's); oneDNN's functions are not exported
(its convolutions are unseen). Each mode runs the same work in a child and
hashes the results:

- the evidence: libtorch_cpu.so defines sgemm_ and no dnnl_primitive_execute;
- AMPSHIM_ENABLE=0 and a passthrough policy: bit for bit without the shim;
- the defaults: torch.mm and nn.Linear lowered through sgemm_ where this
  CPU has bf16 units (bf16's error; counted nounits and bit for bit fp32
  where it has none); Conv2d (oneDNN, unseen) and torch.linalg (MKL's
  LAPACK, fp32 regions) bit for bit.
usage: pip_torch_check.py   (run by the pip torch environment's Python)"""
import ctypes
import hashlib
import os
import sys

from client_util import Checker, four_ways, shim_loaded, shim_stat

PASSTHROUGH = ",".join(f"cpu:{op}=passthrough" for op in ("mm", "addmm", "linear", "matmul"))


def measure():
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    a, b = torch.randn(384, 384), torch.randn(384, 384)
    lin, x = torch.nn.Linear(384, 256), torch.randn(64, 384)
    conv, img = torch.nn.Conv2d(32, 64, 3, padding=1), torch.randn(4, 32, 28, 28)
    m = torch.randn(200, 200)
    spd = (m.double() @ m.double().T / 200 + torch.eye(200, dtype=torch.float64)).float()
    with torch.no_grad():
        lowered = {"mm": a @ b, "linear": lin(x)}
        exact = {"mm": a.double() @ b.double(),
                 "linear": torch.nn.functional.linear(x.double(), lin.weight.double(),
                                                      lin.bias.double())}
        as_made = {"conv": conv(img), "solve": torch.linalg.solve(m, x[:, :200].T),
                   "eigh": torch.linalg.eigh(spd)[0], "svd": torch.linalg.svdvals(m),
                   "cholesky": torch.linalg.cholesky(spd)}

    def digest(d):
        h = hashlib.sha256()
        for k in sorted(d):
            h.update(k.encode())
            h.update(d[k].contiguous().numpy().tobytes())
        return h.hexdigest()

    err = {k: float((lowered[k].double() - exact[k]).norm() / exact[k].norm()) for k in lowered}
    print(repr({"all": digest({**lowered, **as_made}), "as_made": digest(as_made), "err": err,
                "lowered": shim_stat("sgemm_", "lowered"),
                "nounits": shim_stat("sgemm_", "nounits"),
                "dnnl": shim_stat("dnnl_primitive_execute", "passthrough"),
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
          f"sgemm_ lowered {default['lowered']}, nounits {default['nounits']}")
    ck.check("the defaults: Conv2d (oneDNN inside the wheel, unseen) and torch.linalg (MKL's "
             "LAPACK) bit for bit", default["as_made"] == plain["as_made"])
    if check.cpu_has_bf16_units():
        ck.check("the defaults: torch.mm and nn.Linear lowered through the wheel's sgemm_",
                 default["lowered"] >= 2, report[-2000:])
        ck.check("... with bf16's error (1e-4 to 1e-2; fp32's ~1e-7)",
                 all(1e-4 < e < 1e-2 for e in default["err"].values()), str(default["err"]))
    else:
        ck.check("no bf16 units: counted nounits, bit for bit fp32",
                 default["nounits"] >= 2 and default["all"] == plain["all"], report[-2000:])
ck.finish()
