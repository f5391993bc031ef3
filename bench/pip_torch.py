"""pip's PyTorch (the wheel most people have) on the CPU three ways, side by
side in one run: plainly (fp32), under torch.autocast("cpu", bfloat16), and
under ampshim with its defaults. The wheel's matmuls reach the shim through
the sgemm_ of the MKL linked into libtorch_cpu.so (policy/data/
embedded_blas.txt); its convolutions run on the oneDNN linked in, which
exports nothing, and are unseen (ampshim(7), NOT COVERED). Workloads:
torch.mm at 1024^3; a two-layer MLP's forward pass (Linear 1024 -> 4096 ->
1024, GELU, batch 256); a small CNN's forward pass (three 3x3 convolutions,
3 to 128 channels, batch 8 of 64x64), one thread. Each mode runs in its own
process; each cell is the median of the timed calls. Error: relative
Frobenius against float64. "sgemm_" counts the calls ampshim lowered.
usage: PIP_TORCH_PYTHON pip_torch.py PATH/TO/libampshim.so"""
import copy
import os
import statistics
import subprocess
import sys
import time

from bench_util import cpu_line, plain_env, shim_counter

REPS = 20


def child(workload, autocast):
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    nn = torch.nn
    if workload == "mm":
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        net = None
        x = (a, b)
    elif workload == "mlp":
        net = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).eval()
        x = torch.randn(256, 1024)
    else:
        net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                            nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.ReLU(),
                            nn.Conv2d(64, 128, 3, padding=1, stride=2)).eval()
        x = torch.randn(8, 3, 64, 64)

    def run():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            return (x[0] @ x[1] if net is None else net(x)).float()

    out = run()
    with torch.no_grad():
        exact = (x[0].double() @ x[1].double() if net is None
                 else copy.deepcopy(net).double()(x.double()))
    err = float((out.double() - exact).norm() / exact.norm())
    times = []
    for _ in range(REPS):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    lowered = shim_counter("stats.sgemm_.lowered")
    print(f"{statistics.median(times) * 1e3:.3f} {err:.2e} {'-' if lowered is None else lowered}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3] == "autocast")
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    shim = sys.argv[1]
    plain = plain_env()
    import torch
    print(cpu_line())
    print(f"torch {torch.__version__} from {os.path.dirname(torch.__file__)}; one thread; "
          f"median of {REPS} calls, each mode in its own process")
    modes = [("fp32 (no shim)", plain, "plain"), ("torch.autocast bf16", plain, "autocast"),
             ("ampshim (defaults)", dict(plain, LD_PRELOAD=shim), "plain")]
    for title, workload in (("torch.mm 1024^3", "mm"), ("MLP 1024-4096-1024, batch 256", "mlp"),
                            ("CNN, 3 convolutions, batch 8 of 64x64", "cnn")):
        print(f"\n{title}\n{'mode':24} {'ms':>9} {'vs fp32':>8} {'vs autocast':>12} "
              f"{'error':>9} {'sgemm_':>7}")
        rows = []
        for label, env, kind in modes:
            r = subprocess.run([sys.executable, __file__, "--child", workload, kind], env=env,
                               capture_output=True, text=True, check=True)
            rows.append((label, r.stdout.split()))
        base, ac = float(rows[0][1][0]), float(rows[1][1][0])
        for label, (ms, err, lowered) in rows:
            print(f"{label:24} {float(ms):9.2f} {base / float(ms):7.2f}x "
                  f"{ac / float(ms):11.2f}x {err:>9} {lowered:>7}")


if __name__ == "__main__":
    main()
