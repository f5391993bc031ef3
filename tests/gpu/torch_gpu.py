"""PyTorch on a GPU under ampshim (run with the Python that has a CUDA
torch; exits 77 without one):

- torch.linalg (cholesky, eigh, qr, svd, solve) on fp32 CUDA tensors gives
  bit for bit the same results with the shim preloaded as without: cuSOLVER
  and the cuBLAS calls it makes are the library's own;
- nn.Linear(2048, 2048) with a bias (cublasLtMatmul with epilogue BIAS and a
  heuristic algorithm) is lowered: the shim's report counts cublasLtMatmul
  calls as lowered, not as passthrough, and the result is within fp16's
  error of fp32.

usage: torch_gpu.py PATH/TO/libampshim.so"""
import os
import pickle
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)


def child():
    import torch
    torch.manual_seed(0)
    # Inputs and the float64 reference are made on the CPU: a GEMM on the
    # GPU would itself be lowered under the shim (the SPD matrix would
    # differ before cuSOLVER saw it), and torch's float64 linear on the GPU
    # is a cublasLtMatmul the report would count as passed through.
    a_cpu = torch.randn(256, 256)
    a = a_cpu.cuda()
    a64 = a_cpu.double()
    spd = (a64 @ a64.T + 256 * torch.eye(256, dtype=torch.float64)).float().cuda()
    b = torch.randn(256, 8).cuda()
    out = {
        "cholesky": torch.linalg.cholesky(spd),
        "eigh": torch.linalg.eigh(spd)[0],
        "qr": torch.linalg.qr(a)[1],
        "svd": torch.linalg.svdvals(a),
        "solve": torch.linalg.solve(spd, b),
    }
    lin = torch.nn.Linear(2048, 2048)
    x_cpu = torch.randn(512, 2048)
    with torch.no_grad():
        ref = torch.nn.functional.linear(x_cpu.double(), lin.weight.double(), lin.bias.double())
        lin = lin.cuda()
        y = lin(x_cpu.cuda()).cpu()
    torch.cuda.synchronize()
    res = {k: v.cpu().numpy().tobytes() for k, v in out.items()}
    res["linear_err"] = ((y.double() - ref).norm() / ref.norm()).item()
    return res


if len(sys.argv) > 1 and sys.argv[1] == "--child":
    sys.stdout.buffer.write(pickle.dumps(child()))
    sys.exit(0)
try:
    import torch
    if not torch.cuda.is_available():
        raise ImportError
except ImportError:
    print("torch_gpu: no CUDA device for torch; skipped")
    sys.exit(77)

checker = Checker("torch_gpu")
check = checker.check
shim = sys.argv[1]
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
env["AMPSHIM_LOWER_MIN"] = "0"  # what lowering does to small products: the size rule off
report = os.path.join(tempfile.mkdtemp(), "report.txt")


def run(e):
    r = subprocess.run([sys.executable, __file__, "--child"], env=e, capture_output=True)
    check("child exits 0", r.returncode == 0, r.stderr.decode(errors="replace")[-2000:])
    return pickle.loads(r.stdout) if r.returncode == 0 else {}


plain = run(env)
shimmed = run(dict(env, LD_PRELOAD=shim, AMPSHIM_REPORT=report))
for op in ("cholesky", "eigh", "qr", "svd", "solve"):
    check(f"torch.linalg {op}: bit-identical with the shim", plain.get(op) == shimmed.get(op))
try:
    with open(report) as f:
        text = f.read()
except OSError:
    text = ""
print(text)
row = next((line.split() for line in text.splitlines() if line.startswith("cublasLtMatmul ")), None)
check("the report has a cublasLtMatmul row", row is not None, text)
if row:
    # symbol op policy calls lowered fp32 passthrough ...
    check("nn.Linear with a bias: cublasLtMatmul lowered, none passed through after all",
          int(row[4]) > 0 and int(row[6]) == 0, " ".join(row))
err = shimmed.get("linear_err", 1.0)
print(f"nn.Linear relative error: fp32 {plain.get('linear_err')}, ampshim {err}")
check("nn.Linear lowered: error of fp16 inputs (< 2e-3), more than fp32's", 0 < err < 2e-3, str(err))
checker.finish()
