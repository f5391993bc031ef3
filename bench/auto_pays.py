"""Whether AMPSHIM_AUDIT=auto pays: whole programs three ways, side by side
in one run: plain fp32 (no shim), the shim's defaults, and auto. Programs
(Debian's numpy, scikit-learn and torch, one BLAS and torch thread):

  numpy      a script of mixed sizes: an MLP forward in float32 (batch 512,
             784-1024-1024-10), a covariance, 64^3 and 2048x64x64 products
             and a 1024 matrix-vector loop, each from its own line
  pca        scikit-learn PCA(64, randomized) of 20000 x 512 float32 data
  ridge      scikit-learn Ridge(solver="cholesky") on 20000 x 512 float32
  cnn        a small torch CNN's inference (three 3x3 convolutions, batch 8,
             64 x 64 images)
  resnet50   torchvision's ResNet-50 inference, batch 8, 224 x 224

Each program runs in its own process per mode; the modes alternate for
ROUNDS rounds (their order turning each round) and each cell is the least of them (seconds of the program's
work, imports excluded; the first calls, and so auto's probation, are in
it). The ratio is fp32's time over the mode's (above 1 is faster than
fp32); "auto/best" is auto's time over the better of the defaults and fp32
(at most 1.05 is the goal). With --avx2 every process runs with
ONEDNN_MAX_CPU_ISA=AVX2 (a CPU without bf16 units, simulated: the shim
asks oneDNN and gets no native kernel). The CPU flags are printed.

usage: /usr/bin/python3 bench/auto_pays.py PATH/TO/libampshim.so [--avx2]
       [--rounds N] [--only NAME,...]"""
import os
import subprocess
import sys

from bench_util import cpu_line, plain_env

PROGRAMS = ["numpy", "pca", "ridge", "cnn", "resnet50"]


def work(name):
    """Builds the program's data, then returns a function that runs it."""
    import numpy as np
    rng = np.random.default_rng(1)
    if name == "numpy":
        x = rng.standard_normal((512, 784), dtype=np.float32)
        w = [rng.standard_normal(s, dtype=np.float32) * 0.03
             for s in ((784, 1024), (1024, 1024), (1024, 10))]
        data = rng.standard_normal((4096, 256), dtype=np.float32)
        small = rng.standard_normal((64, 64), dtype=np.float32)
        tall = rng.standard_normal((2048, 64), dtype=np.float32)
        m = rng.standard_normal((1024, 1024), dtype=np.float32) / 32
        v = rng.standard_normal(1024, dtype=np.float32)

        def run():
            for _ in range(20):
                h = np.maximum(x @ w[0], 0)
                h = np.maximum(h @ w[1], 0)
                h @ w[2]
            for _ in range(10):
                d = data - data.mean(axis=0)
                d.T @ d
            for _ in range(300):
                small @ small
            for _ in range(100):
                tall @ small
            u = v
            for _ in range(300):
                u = m @ u
                u /= np.linalg.norm(u)
        return run
    if name in ("pca", "ridge"):
        from sklearn.decomposition import PCA
        from sklearn.linear_model import Ridge
        X = rng.standard_normal((20000, 512), dtype=np.float32)
        X[:, :32] *= 10
        y = (X @ rng.standard_normal(512, dtype=np.float32) +
             rng.standard_normal(20000, dtype=np.float32)).astype(np.float32)
        if name == "pca":
            return lambda: [PCA(64, svd_solver="randomized", random_state=0).fit(X)
                            for _ in range(3)]
        return lambda: [Ridge(alpha=1.0, solver="cholesky").fit(X, y) for _ in range(10)]
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    nn = torch.nn
    if name == "cnn":
        model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                              nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.ReLU(),
                              nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)).eval()
        images, passes = torch.randn(8, 3, 64, 64), 40
    else:
        import torchvision
        model = torchvision.models.resnet50().eval()
        images, passes = torch.randn(8, 3, 224, 224), 4

    def run():
        with torch.no_grad():
            for _ in range(passes):
                model(images)
    return run


def child(name):
    import time
    run = work(name)
    t = time.perf_counter()
    run()
    print(f"seconds {time.perf_counter() - t:.4f}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    shim, rounds, only, avx2 = args[0], 3, PROGRAMS, False
    i = 1
    while i < len(args):
        if args[i] == "--avx2":
            avx2 = True
        elif args[i] == "--rounds" and i + 1 < len(args):
            rounds, i = int(args[i + 1]), i + 1
        elif args[i] == "--only" and i + 1 < len(args):
            only, i = args[i + 1].split(","), i + 1
        else:
            sys.exit(__doc__)
        i += 1
    base = plain_env()
    base["OMP_NUM_THREADS"] = "1"
    if avx2:
        base["ONEDNN_MAX_CPU_ISA"] = "AVX2"
    modes = [("fp32", {}), ("defaults", {"LD_PRELOAD": shim}),
             ("auto", {"LD_PRELOAD": shim, "AMPSHIM_AUDIT": "auto"})]
    print(cpu_line() + ("; ONEDNN_MAX_CPU_ISA=AVX2 (no bf16 units, simulated)" if avx2 else ""))
    print(f"seconds of each program's work, least of {rounds} alternating rounds; "
          "ratio = fp32's time over the mode's")
    print(f"{'program':10s} {'fp32 s':>8s} {'defaults s':>11s} {'ratio':>6s} {'auto s':>8s} "
          f"{'ratio':>6s} {'auto/best':>9s}")
    worst = 0.0
    for name in only:
        best = {m: float("inf") for m, _ in modes}
        for k in range(rounds):
            # The order turns each round, so that no mode always follows
            # the same one (a process after plain fp32's ran faster: 0.29 s
            # against 0.33 s for the same defaults, one machine).
            for mode, extra in modes[k % 3:] + modes[:k % 3]:
                r = subprocess.run([sys.executable, __file__, "--child", name],
                                   env=dict(base, **extra), capture_output=True, text=True)
                line = [l for l in r.stdout.splitlines() if l.startswith("seconds ")]
                if r.returncode or not line:
                    print(f"{name} under {mode} failed:\n{r.stderr[-2000:]}", file=sys.stderr)
                    continue
                best[mode] = min(best[mode], float(line[-1].split()[1]))
        f, d, a = best["fp32"], best["defaults"], best["auto"]
        ratio = a / min(f, d)
        worst = max(worst, ratio)
        print(f"{name:10s} {f:8.3f} {d:11.3f} {f / d:6.2f} {a:8.3f} {f / a:6.2f} {ratio:9.2f}",
              flush=True)
    print(f"auto against the better of the defaults and fp32, worst program: {worst:.2f} "
          "(goal: at most 1.05)")


if __name__ == "__main__":
    main()
