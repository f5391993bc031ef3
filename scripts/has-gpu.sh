#!/bin/sh
# Exit 0 when this machine has an NVIDIA GPU the driver sees, 1 otherwise:
# the one test meson.build (the gpu suite) and scripts/gpu-check.sh share.
# nvidia-smi lists the GPUs; without it, the driver's device node counts.
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU '
else
    test -e /dev/nvidia0
fi
