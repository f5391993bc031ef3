#!/bin/sh
# ampshim on a machine with an NVIDIA GPU: build against the CUDA libraries
# this machine really has, run the GPU tests and benchmarks, and write what
# they print to RESULTS_FILE (to commit: README's Measured section and
# ampshim(7), ON A GPU, take their figures from it).
#
#   sh scripts/gpu-check.sh --quick RESULTS_FILE   a lent machine's first minutes
#   sh scripts/gpu-check.sh RESULTS_FILE           every GPU test and benchmark
#
# --quick: everything, the build included, within GPU_CHECK_DEADLINE seconds
# (default 480: one call of a lent machine, with room to spare); every step
# under `timeout`, the device-less checks first, then the most decisive,
# each appended to RESULTS_FILE and printed as it ends (a run cut short
# still leaves what it had):
#   1 devless-graph the real cuDNN 9 planning graph-API convolutions
#                   device-less, lowered by engine substitution
#                   (tests/cudnn_graph, suite real-cuda);
#   2 devless-legacy the legacy cuDNN hooks against the real cuDNN 9,
#                   device-less (tests/cudnn, suite real-cuda);
#   3 verdict       what CUBLAS_COMPUTE_32F_FAST_16F, _16BF and _TF32 do on
#                   this GPU (tests/cublas/compute_types_gpu): the "verdict"
#                   line decides AMPSHIM_CUDA_FP16's default;
#   4 sgemm         a hooked cublasSgemm lowered, against GemmEx and plain
#                   fp32 (tests/cublas/cublas_gpu);
#   5 graph         cuDNN graph-API engine substitution executing: counted
#                   lowered, an fp16-sized error, the same bits under
#                   stream capture (tests/cudnn_graph/cudnn_graph_gpu);
#   6 sgemm-bench   the lowered sgemm's speed-up (bench/gpu/sgemm_gpu);
#   7 torch         nn.Linear and nn.Conv2d forward and backward: fp32,
#                   torch's TF32, torch.autocast and ampshim, error against
#                   float64 on the CPU, times, the shim's exit report
#                   (bench/gpu/torch_quick.py);
#   8 cudnn-legacy  the legacy cuDNN hooks (tests/cudnn/cudnn_gpu);
#   9 capture       lowered calls inside a CUDA graph capture;
#  10 scaler        the loss scaler's CUDA plugin.
# GPU_CHECK_STEP_LIMIT=S caps every step's limit at S seconds.
#
# Without --quick: every GPU test (compute types first) and benchmark, each
# built on its own with what it depends on (one that does not compile hides
# no other), each ending in the file as: ran (passed or failed), skipped
# (built, but found no GPU), did not build, or not buildable here (the
# reason meson gave: a header and the pip package that brings it, no nvcc).
#
# Where things are found: the toolkit is GPU_CHECK_TOOLKIT, else $CUDA_HOME
# (default /usr/local/cuda) when it has crt/host_defines.h, else the folder
# above the bin/ of the nvcc on PATH when that has it. The other CUDA
# libraries come from the Python environment with a CUDA torch ($PYTHON,
# else the first python3 on PATH that imports one, else Debian's): its
# site-packages/nvidia/* folders (CUDA 12 wheels: nvidia/cublas, ...; CUDA
# 13: nvidia/cu13, cuDNN in nvidia/cudnn), or GPU_CHECK_NVIDIA_DIRS
# (colon-separated). OpenBLAS, LAPACK and BLAS are not needed (meson option
# cpu_blas). The build folder is $AMPSHIM_BUILD_DIR, default build-gpu,
# configured without -Werror (a compiler CI never used may warn).
#
# Exit status: 0 when every step or test that ran passed and every
# benchmark ran on the GPU; 1 when a GPU is present and something failed,
# timed out, did not build, could not be built, or ran nothing (skipped);
# 77 without a GPU (the file says so, and what was built); 2 for a usage
# error. The GPU is found as meson finds it (scripts/has-gpu.sh).
set -eu
usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
}
quick=0
case "${1:-}" in
--quick)
    quick=1
    shift
    ;;
-h | --help)
    usage
    exit 0
    ;;
esac
if [ $# -ne 1 ] || [ -z "$1" ]; then
    usage >&2
    exit 2
fi
out=$1
case "$out" in
/*) ;;
*) out=$PWD/$out ;;
esac
cd "$(dirname "$0")/.."
dir=${AMPSHIM_BUILD_DIR:-build-gpu}
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
# bounded LIMIT: LIMIT, or less where --quick's deadline is nearer (at
# least 1: a spent deadline is said by the step that finds it).
deadline=${GPU_CHECK_DEADLINE:-480}
bounded() {
    if [ "$quick" -eq 1 ]; then
        b=$((deadline - $(elapsed)))
        [ "$b" -lt 1 ] && b=1
        [ "$b" -lt "$1" ] && { echo "$b"; return; }
    fi
    echo "$1"
}
# show FROM: the results file's lines from FROM on, to standard output too
# (a call cut short still printed what it had).
show() {
    tail -n "+$1" "$out"
}
lines() {
    echo $(($(wc -l < "$out") + 1))
}

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
# The Python this script reads meson's JSON with (any).
py=$(command -v python3 || echo /usr/bin/python3)

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

# The toolkit: one whose headers are complete (crt/ is where a CUDA 13
# image's /usr/local/cuda may lack it while nvcc's own folder has it).
toolkit=${GPU_CHECK_TOOLKIT:-}
toolkit_from=GPU_CHECK_TOOLKIT
if [ -z "$toolkit" ]; then
    toolkit=${CUDA_HOME:-/usr/local/cuda}
    toolkit_from=${CUDA_HOME:+CUDA_HOME}
    toolkit_from=${toolkit_from:-default}
    nvcc=$(command -v nvcc 2>/dev/null || true)
    if [ ! -f "$toolkit/include/crt/host_defines.h" ] && [ -n "$nvcc" ]; then
        root=$(dirname "$(dirname "$nvcc")")
        if [ -f "$root/include/crt/host_defines.h" ]; then
            toolkit=$root
            toolkit_from="nvcc ($nvcc)"
        fi
    fi
fi

{
    echo "# ampshim GPU results ($([ "$quick" -eq 1 ] && echo quick || echo full)), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
        echo "(no nvidia-smi)"
    echo "GPU on this machine: $([ "$gpu" -eq 1 ] && echo yes || echo no)"
    echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1), $(nproc 2>/dev/null || echo '?') cores"
    echo "CPU flags: $(grep -m1 -o -w -E 'avx2|f16c|avx512f|avx512_bf16|avx512_fp16|amx_bf16|amx_tile' /proc/cpuinfo 2>/dev/null | tr '\n' ' ')"
    echo "torch python: ${torch_py:-none with CUDA torch}"
    [ -n "$torch_py" ] && "$torch_py" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())' 2>/dev/null || true
    echo "toolkit: $toolkit (from $toolkit_from)"
    echo "nvcc: $(command -v nvcc 2>/dev/null || echo none)"
    echo "CUDA folders outside the toolkit: ${extra:-none}"
} > "$out"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ -d "$dir" ]; then
    set -- --reconfigure
else
    set --
fi
show 1
mark=$(lines)
if ! timeout "$(bounded 240)" meson setup "$@" "$dir" -Dtests=true -Dwerror=false -Dcudatoolkit="$toolkit" \
    -Dgpu_library_dirs="$extra" -Dtorch_python="${torch_py:-/usr/bin/python3}" > "$log" 2>&1; then
    echo "## configure failed" >> "$out"
    cat "$log" >> "$out"
    echo "gpu-check: meson setup failed (see $out)" >&2
    exit 1
fi
# What the configuration found: the CUDA major and libraries, missing
# headers, and what cannot be built here.
echo "CUDA libraries: major $(sed -n 's/^major //p' "$dir/gpu-build.txt")" >> "$out"
sed -n 's/^library /  /p; s/^headers /  headers: /p' "$dir/gpu-build.txt" >> "$out"
echo "CPU tests (OpenBLAS, LAPACK, BLAS): $(sed -n 's/^cpu-tests //p' "$dir/gpu-build.txt")" >> "$out"
echo >> "$out"

# targets: one line per test and benchmark, "KIND NAME FILE..." where the
# files are the build outputs it runs and depends on (relative to the build
# folder), "-" where it has none there.
targets=$(meson introspect "$dir" --tests --benchmarks --targets 2>/dev/null | "$py" -c '
import json, os, sys
build = os.path.realpath(sys.argv[1])
data = json.load(sys.stdin)
files = {t["id"]: t["filename"] for t in data.get("targets", [])}
def inside(path):
    real = os.path.realpath(path)
    return os.path.relpath(real, build) if real.startswith(build + "/") else None
for kind in ("tests", "benchmarks"):
    for t in data.get(kind, []):
        out = [inside(t["cmd"][0])]
        for dep in t.get("depends", []):
            out += [inside(f) for f in files.get(dep, [])]
        out = [o for o in dict.fromkeys(out) if o]
        print(kind, t["name"], " ".join(out) or "-")
' "$dir")
show "$mark"
if ! timeout "$(bounded 240)" ninja -C "$dir" libampshim.so > "$log" 2>&1; then
    echo "## libampshim.so did not build" >> "$out"
    cat "$log" >> "$out"
    echo "gpu-check: libampshim.so did not build (see $out)" >&2
    exit 1
fi
export LD_LIBRARY_PATH="${libpath}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

status=0
skipped=
# files_of KIND NAME: its build outputs, space-separated ("" when none).
files_of() {
    printf '%s\n' "$targets" |
        awk -v k="$1" -v n="$2" '$1 == k && $2 == n { for (i = 3; i <= NF; i++) if ($i != "-") print $i }' |
        tr '\n' ' '
}
# build_one KIND NAME: builds it; 0 when it can run. Says why not in the file.
build_one() {
    why=$(sed -n "s/^not-buildable $2: //p" "$dir/gpu-build.txt")
    if [ -n "$why" ]; then
        echo "not buildable here: $why" >> "$out"
        [ "$gpu" -eq 1 ] && status=1
        return 1
    fi
    if ! printf '%s\n' "$targets" | awk -v k="$1" -v n="$2" '$1 == k && $2 == n { f = 1 } END { exit !f }'; then
        echo "did not run: meson defines no such $1" >> "$out"
        status=1
        return 1
    fi
    files=$(files_of "$1" "$2")
    # shellcheck disable=SC2086
    if [ -n "${files% }" ] && ! timeout "$(bounded 240)" ninja -C "$dir" $files < /dev/null > "$log" 2>&1; then
        echo "did not build:" >> "$out"
        grep -E 'error:|undefined reference|FAILED' "$log" | head -20 >> "$out" || true
        status=1
        echo "gpu-check: $2 did not build" >&2
        return 1
    fi
    return 0
}
# keep LOG: what meson test printed, into the file, without its summary
# and rulers.
keep() {
    grep -v -E '^$|^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout): |^Full log written|^(―|=)+|✀' \
        "$1" >> "$out" || true
}
# verdict_line: the compute-type verdict (tests/cublas/compute_types_gpu),
# which decides AMPSHIM_CUDA_FP16's default (ampshim(7), ON A GPU).
verdict_line() {
    verdict=$(grep -m1 '^verdict ' "$out" || true)
    echo "compute types: ${verdict:-no verdict (compute_types_gpu did not run)}" >> "$out"
}

if [ "$quick" -eq 1 ]; then
    # name, limit (s), kind, what: each step in order.
    steps="devless-graph 30 tests cudnn-graph-devless-lowered
devless-legacy 30 tests cudnn-legacy-devless-lowered
verdict 30 tests cublas-compute-types-gpu
sgemm 30 tests cublas-gpu
gemmex 20 tests cublas-gemmex-32f-gpu
lt 20 tests cublaslt-gpu
graph 45 tests cudnn-graph-gpu
sgemm-bench 45 benchmarks sgemm-gpu
torch 90 benchmarks torch-quick-gpu
cudnn-legacy 20 tests cudnn-gpu
capture 20 tests capture-gpu
scaler 20 tests scaler-gpu"
    n=$(printf '%s\n' "$steps" | wc -l)
    # Everything the steps run, built at once (one ninja, bounded).
    all=
    for name in $(printf '%s\n' "$steps" | awk '{ print $4 }'); do
        kind=$(printf '%s\n' "$steps" | awk -v n="$name" '$4 == n { print $3 }')
        grep -q "^not-buildable $name: " "$dir/gpu-build.txt" || all="$all $(files_of "$kind" "$name")"
    done
    all=$(printf '%s\n' $all | sort -u | tr '\n' ' ')
    mark=$(lines)
    echo "## quick: build ($(elapsed) s in, deadline $deadline s)" >> "$out"
    # shellcheck disable=SC2086
    if [ -n "${all% }" ] && ! timeout "$(bounded 240)" ninja -C "$dir" -k 0 $all > "$log" 2>&1; then
        echo "some targets did not build:" >> "$out"
        grep -E 'error:|undefined reference|FAILED' "$log" | head -20 >> "$out" || true
    fi
    show "$mark"
    i=0
    printf '%s\n' "$steps" > "$log.steps"
    while read -r step limit kind name; do
        i=$((i + 1))
        [ -n "${GPU_CHECK_STEP_LIMIT:-}" ] && [ "$GPU_CHECK_STEP_LIMIT" -lt "$limit" ] &&
            limit=$GPU_CHECK_STEP_LIMIT
        mark=$(lines)
        echo "## quick $i/$n $step: $kind $name (limit $limit s, $(elapsed) s in)" >> "$out"
        left=$((deadline - $(elapsed)))
        if [ "$left" -le 0 ]; then
            echo "not run: the quick check's deadline ($deadline s) is spent" >> "$out"
            [ "$gpu" -eq 1 ] && status=1
            show "$mark"
            continue
        fi
        [ "$left" -lt "$limit" ] && limit=$left
        build_one "$kind" "$name" || { show "$mark"; continue; }
        t=$(date +%s)
        rc=0
        if [ "$kind" = tests ]; then
            timeout -k 5 "$limit" meson test -C "$dir" --no-rebuild --print-errorlogs --verbose \
                "$name" < /dev/null > "$log" 2>&1 || rc=$?
        else
            timeout -k 5 "$limit" meson test -C "$dir" --no-rebuild --benchmark --verbose \
                "$name" < /dev/null > "$log" 2>&1 || rc=$?
        fi
        keep "$log"
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            echo "timed out after $limit s" >> "$out"
            status=1
        elif grep -q "SKIP" "$log"; then
            echo "skipped: built, but found no GPU ($(($(date +%s) - t)) s)" >> "$out"
            skipped="$skipped $name"
        else
            echo "rc $rc ($(($(date +%s) - t)) s)" >> "$out"
            [ "$rc" -ne 0 ] && status=1
        fi
        show "$mark"
    done < "$log.steps"
    rm -f "$log.steps"
else
    tests="cublas-compute-types-gpu cublas-gpu cublas-gemmex-32f-gpu cublaslt-gpu capture-gpu cudnn-gpu cudnn-graph-gpu scaler-gpu torch-gpu"
    benches="sgemm-gpu conv-gpu cudnn-graph-gpu unscale-gpu torch-three-ways-gpu torch-quick-gpu"
    # run_one tests|benchmarks NAME: builds it and runs it into the file.
    run_one() {
        echo "## $1 $2" >> "$out"
        build_one "$1" "$2" || return 0
        rc=0
        if [ "$1" = tests ]; then
            meson test -C "$dir" --no-rebuild --print-errorlogs --verbose "$2" > "$log" 2>&1 || rc=$?
        else
            meson test -C "$dir" --no-rebuild --benchmark --verbose "$2" > "$log" 2>&1 || rc=$?
        fi
        keep "$log"
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
fi

verdict_line
echo "gpu-check: $(elapsed) s in all" >> "$out"
echo "wrote $out"
if [ "$gpu" -eq 0 ]; then
    echo "(no GPU on this machine: what was built was skipped)" >> "$out"
    exit 77
fi
if [ -n "$skipped" ]; then
    echo "gpu-check: a GPU is present but these ran nothing (skipped):$skipped" | tee -a "$out" >&2
    status=1
fi
exit "$status"
