#!/bin/sh
# On a machine with an NVIDIA GPU, one command: configure the build for the
# CUDA libraries this machine really has, run every GPU test against them
# (compute types first) and every GPU benchmark, and write everything they
# print to one file (default gpu-results.txt) to commit.
#
# It finds the CUDA libraries in the toolkit (meson option cudatoolkit,
# default /usr/local/cuda; GPU_CHECK_TOOLKIT sets it) and in the Python
# environment that has a CUDA torch: its site-packages/nvidia/* folders
# (CUDA 12 wheels: nvidia/cublas, nvidia/cuda_runtime, ...; CUDA 13 wheels:
# nvidia/cu13, with cuDNN in nvidia/cudnn), .so.N files with no unversioned
# links, headers there or not at all. GPU_CHECK_NVIDIA_DIRS (colon-separated
# folders) takes the place of that search. The Python is $PYTHON, else the
# first python3 on PATH that imports a CUDA torch, else Debian's. The build
# is reconfigured with them (gpu_library_dirs, torch_python); each test and
# benchmark is built on its own (one that does not compile hides no other)
# and runs with those libraries on LD_LIBRARY_PATH.
#
# Each test and benchmark ends in the file as one of: ran (passed or
# failed), skipped (built, but found no GPU), did not build (a compile or
# link error), or not buildable here (what it needs is missing: the reason
# meson gave, e.g. a header and the pip package that brings it, no nvcc).
#
# Exit status: 0 when every test that could be built passed and every such
# benchmark ran on the GPU; 1 when one failed, did not build, or was
# skipped on a machine with a GPU; 77 on a machine without a GPU (the file
# says so, and what would have run). The GPU is found as meson finds it
# (scripts/has-gpu.sh).
set -eu
cd "$(dirname "$0")/.."
out=${1:-gpu-results.txt}
dir=${AMPSHIM_BUILD_DIR:-build}
tests="cublas-compute-types-gpu cublas-gpu capture-gpu cudnn-gpu cudnn-graph-gpu scaler-gpu torch-gpu"
benches="sgemm-gpu conv-gpu cudnn-graph-gpu unscale-gpu torch-three-ways-gpu"

gpu=0
sh scripts/has-gpu.sh && gpu=1

torch_py=
for py in ${PYTHON:-} python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    if "$py" -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)' 2>/dev/null; then
        torch_py=$(command -v "$py")
        break
    fi
done
py=${torch_py:-$(command -v python3 || echo /usr/bin/python3)}

# site-packages/nvidia/<package> folders of that Python (lib/ and include/).
extra=${GPU_CHECK_NVIDIA_DIRS:-}
if [ -z "$extra" ] && [ -n "$torch_py" ]; then
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

{
    echo "# ampshim GPU results, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
        echo "(no nvidia-smi)"
    echo "GPU on this machine: $([ "$gpu" -eq 1 ] && echo yes || echo no)"
    echo "torch python: ${torch_py:-none with CUDA torch}"
    echo "CUDA folders outside the toolkit: ${extra:-none}"
} > "$out"

opts="-Dgpu_library_dirs=$extra -Dtorch_python=${torch_py:-/usr/bin/python3}"
[ -n "${GPU_CHECK_TOOLKIT:-}" ] && opts="$opts -Dcudatoolkit=$GPU_CHECK_TOOLKIT"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ -d "$dir" ]; then
    set -- --reconfigure
else
    set --
fi
if ! meson setup "$@" "$dir" $opts > "$log" 2>&1; then
    echo "## configure failed" >> "$out"
    cat "$log" >> "$out"
    echo "gpu-check: meson setup failed (see $out)" >&2
    exit 1
fi
# What the configuration found: the CUDA major and libraries, missing
# headers, and what cannot be built here.
echo "CUDA libraries: major $(sed -n 's/^major //p' "$dir/gpu-build.txt")" >> "$out"
sed -n 's/^library /  /p; s/^headers /  headers: /p' "$dir/gpu-build.txt" >> "$out"
echo >> "$out"

# target NAME KIND: the file of the executable test or benchmark NAME runs
# (relative to the build folder), '' for one run by an interpreter.
targets=$(meson introspect "$dir" --tests --benchmarks 2>/dev/null | "$py" -c '
import json, os, sys
build = os.path.realpath(sys.argv[1])
data = json.load(sys.stdin)
for kind in ("tests", "benchmarks"):
    for t in data.get(kind, []):
        exe = os.path.realpath(t["cmd"][0])
        rel = os.path.relpath(exe, build) if exe.startswith(build + "/") else ""
        print(kind, t["name"], rel or "-")
' "$dir")
ninja -C "$dir" libampshim.so > "$log" 2>&1 || {
    echo "## libampshim.so did not build" >> "$out"
    cat "$log" >> "$out"
    echo "gpu-check: libampshim.so did not build (see $out)" >&2
    exit 1
}
export LD_LIBRARY_PATH="${libpath}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

status=0
skipped=
# run_one tests|benchmarks NAME: builds it and runs it into the file.
run_one() {
    echo "## $1 $2" >> "$out"
    why=$(sed -n "s/^not-buildable $2: //p" "$dir/gpu-build.txt")
    if [ -n "$why" ]; then
        echo "not buildable here: $why" >> "$out"
        return
    fi
    exe=$(printf '%s\n' "$targets" | awk -v k="$1" -v n="$2" '$1 == k && $2 == n { print $3 }')
    if [ -z "$exe" ]; then
        echo "did not run: meson defines no such $1" >> "$out"
        status=1
        return
    fi
    if [ "$exe" != - ] && ! ninja -C "$dir" "$exe" > "$log" 2>&1; then
        echo "did not build:" >> "$out"
        grep -E 'error:|undefined reference' "$log" | head -20 >> "$out" || true
        status=1
        echo "gpu-check: $2 did not build" >&2
        return
    fi
    rc=0
    if [ "$1" = tests ]; then
        meson test -C "$dir" --no-rebuild --print-errorlogs --verbose "$2" > "$log" 2>&1 || rc=$?
    else
        meson test -C "$dir" --no-rebuild --benchmark --verbose "$2" > "$log" 2>&1 || rc=$?
    fi
    grep -v '^$' "$log" >> "$out" || true
    if grep -q "SKIP" "$log"; then
        echo "skipped: built, but found no GPU" >> "$out"
        skipped="$skipped $2"
    elif [ "$rc" -ne 0 ]; then
        status=1
        echo "gpu-check: $2 failed" >&2
    fi
}
for t in $tests; do
    run_one tests "$t"
done
for b in $benches; do
    run_one benchmarks "$b"
done

# The compute-type verdict (tests/gpu/compute_types_gpu), the line that
# decides AMPSHIM_CUDA_FP16's default (ampshim(7), ON A GPU), at the end.
verdict=$(grep -m1 '^verdict ' "$out" || true)
echo "compute types: ${verdict:-no verdict (compute_types_gpu did not run)}" >> "$out"
echo "wrote $out"
if [ "$gpu" -eq 0 ]; then
    echo "(no GPU on this machine: what was built was skipped)" >> "$out"
    exit 77
fi
if [ -n "$skipped" ]; then
    echo "gpu-check: a GPU is present but these were skipped:$skipped" | tee -a "$out" >&2
    status=1
fi
exit "$status"
