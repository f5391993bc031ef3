#!/bin/sh
# On a machine with an NVIDIA GPU: build, run the GPU tests against the
# real CUDA libraries, and run the GPU benchmarks, writing everything they
# print to one file (default gpu-results.txt) to commit as the results
# table. Assumes the CUDA toolkit under /usr/local/cuda (meson option
# cudatoolkit) and, for the PyTorch comparison, a python3 with CUDA torch.
# Without a GPU every step skips (exit 77) and the file says so.
set -eu
cd "$(dirname "$0")/.."
out=${1:-gpu-results.txt}
dir=${AMPSHIM_BUILD_DIR:-build}
[ -d "$dir" ] || meson setup "$dir"
ninja -C "$dir"
{
    echo "# ampshim GPU results, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
        echo "(no nvidia-smi)"
    echo
    echo "## meson test --suite gpu"
    meson test -C "$dir" --suite gpu --print-errorlogs --verbose 2>&1 | grep -v '^$' || true
    echo
    echo "## benchmarks"
    meson test -C "$dir" --benchmark --verbose sgemm-gpu conv-gpu unscale-gpu \
        torch-three-ways-gpu 2>&1 | grep -v '^$' || true
} > "$out"
echo "wrote $out"
