#!/bin/sh
# On a machine with an NVIDIA GPU, one command: configure the build for the
# CUDA libraries this machine really has, run every GPU test against them
# (compute types first) and every GPU benchmark, and write everything they
# print to one file (default gpu-results.txt) to commit.
#
# It finds the CUDA libraries in the toolkit (meson option cudatoolkit,
# default /usr/local/cuda) and in the Python environment that has a CUDA
# torch (its site-packages/nvidia/*: cuBLAS, cuDNN and the runtime from
# pip, .so.N files with no unversioned links, headers there or not at all),
# reconfigures the build with them (gpu_library_dirs, torch_python), and
# runs with them on LD_LIBRARY_PATH. The Python is $PYTHON, else the first
# python3 on PATH that imports a CUDA torch, else Debian's.
#
# Exit status: 0 when every GPU test passed and every benchmark ran; 1 when
# one failed, or when a GPU is present but a test or benchmark did not run
# (not built, skipped, or unknown to meson), with a line saying which;
# 77 on a machine without a GPU (the file says so).
set -eu
cd "$(dirname "$0")/.."
out=${1:-gpu-results.txt}
dir=${AMPSHIM_BUILD_DIR:-build}
tests="cublas-compute-types-gpu cublas-gpu capture-gpu cudnn-gpu scaler-gpu torch-gpu"
benches="sgemm-gpu conv-gpu unscale-gpu torch-three-ways-gpu"

gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1

torch_py=
for py in ${PYTHON:-} python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    if "$py" -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)' 2>/dev/null; then
        torch_py=$(command -v "$py")
        break
    fi
done

# site-packages/nvidia/<package> folders of that Python (lib/ and include/).
extra=
if [ -n "$torch_py" ]; then
    extra=$("$torch_py" - <<'EOF' 2>/dev/null || true
import glob, os, site, sys
roots = set(site.getsitepackages() + [site.getusersitepackages()])
try:
    import nvidia
    roots.update(os.path.dirname(p) for p in nvidia.__path__)
except ImportError:
    pass
dirs = sorted({d for r in roots for d in glob.glob(os.path.join(r, "nvidia", "*"))
               if os.path.isdir(os.path.join(d, "lib")) or os.path.isdir(os.path.join(d, "include"))})
print(":".join(dirs))
EOF
)
fi
libpath=
for d in $(printf '%s' "$extra" | tr ':' ' '); do
    [ -d "$d/lib" ] && libpath=${libpath:+$libpath:}$d/lib
done

opts="-Dgpu_library_dirs=$extra -Dtorch_python=${torch_py:-/usr/bin/python3}"
if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" $opts >/dev/null
else
    meson setup "$dir" $opts >/dev/null
fi
ninja -C "$dir" >/dev/null
export LD_LIBRARY_PATH="${libpath}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
missing=
{
    echo "# ampshim GPU results, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
        echo "(no nvidia-smi)"
    echo "torch python: ${torch_py:-none with CUDA torch}"
    echo "CUDA libraries outside the toolkit: ${libpath:-none}"
    echo
} > "$out"

tests_defined=$(meson test -C "$dir" --list 2>/dev/null | sed 's@.* / @@')
benches_defined=$(meson test -C "$dir" --benchmark --list 2>/dev/null)
# run_one test|benchmark NAME DEFINED: runs it into the file; a failure sets
# status, one not built or skipped goes on the missing list.
run_one() {
    echo "## $1 $2" >> "$out"
    if ! printf '%s\n' "$3" | grep -qx "$2"; then
        echo "(not built: its libraries, headers or Python were not found)" >> "$out"
        missing="$missing $2"
        return
    fi
    rc=0
    if [ "$1" = test ]; then
        meson test -C "$dir" --no-rebuild --print-errorlogs --verbose "$2" > "$log" 2>&1 || rc=$?
    else
        meson test -C "$dir" --no-rebuild --benchmark --verbose "$2" > "$log" 2>&1 || rc=$?
    fi
    grep -v '^$' "$log" >> "$out" || true
    if grep -q "SKIP" "$log"; then
        missing="$missing $2(skipped)"
    elif [ "$rc" -ne 0 ]; then
        status=1
        echo "gpu-check: $2 failed" >&2
    fi
}
for t in $tests; do
    run_one test "$t" "$tests_defined"
done
for b in $benches; do
    run_one benchmark "$b" "$benches_defined"
done

echo "wrote $out"
if [ "$gpu" -eq 0 ]; then
    echo "(no GPU on this machine: everything skipped)" >> "$out"
    exit 77
fi
if [ -n "$missing" ]; then
    echo "gpu-check: a GPU is present but these did not run:$missing" | tee -a "$out" >&2
    status=1
fi
exit "$status"
