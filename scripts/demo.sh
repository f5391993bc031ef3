#!/bin/sh
# The main job: set everything up, build, and run an unmodified fp32 BLAS
# program (examples/matmul_demo.c, linked only to OpenBLAS/LAPACK) plainly
# and then under LD_PRELOAD=libampshim.so with the exit report, then numpy.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
[ -d build ] || meson setup build
ninja -C build
shim=$PWD/build/libampshim.so
# What this CPU can do for bf16, as the shim's report says it (a quiet run
# of the demo under the shim, its CPU lines only).
echo
echo "== this CPU, as ampshim sees it"
LD_PRELOAD=$shim AMPSHIM_REPORT=1 ./build/examples/matmul_demo 2>&1 >/dev/null | grep '^cpu' ||
    echo "(no report: the shim did not load)"
echo
echo "== examples/matmul_demo, plain fp32"
./build/examples/matmul_demo
echo
echo "== the same binary under LD_PRELOAD=$shim AMPSHIM_REPORT=1"
LD_PRELOAD=$shim AMPSHIM_REPORT=1 ./build/examples/matmul_demo
echo
echo "== numpy under the shim"
LD_PRELOAD=$shim AMPSHIM_REPORT=1 /usr/bin/python3 -c '
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((512, 512), dtype=np.float32)
exact = a.astype(np.float64) @ a.astype(np.float64).T
print("relative error of a @ a.T:", np.linalg.norm(a @ a.T - exact) / np.linalg.norm(exact))'
