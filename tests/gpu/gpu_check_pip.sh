#!/bin/sh
# scripts/gpu-check.sh on machines whose only CUDA is what `pip install
# torch` brought (no toolkit), simulated from the wheels' layouts with this
# machine's CUDA files (no GPU here, so every test that builds is skipped):
#
#   cu13-no-crt  CUDA 13 wheels (nvidia/cu13/{include,lib}, cuDNN in
#                nvidia/cudnn) without nvidia-cuda-crt: the headers do not
#                compile; the results file is still written, names the
#                missing header and its pip package as the reason each CUDA
#                test is not buildable here, and the script exits 77;
#   cu13         the same with crt/: the GPU tests build against the wheels'
#                libraries and are skipped (no GPU); the scaler's plugin is
#                not buildable (no toolkit with the static runtime);
#   cu12         CUDA 12 wheels (nvidia/cuda_runtime, nvidia/cublas; here
#                the test-only fakes as libcudart.so.12 and libcublas.so.12):
#                found as major 12; no cuDNN, so its test is not buildable;
#   gpu-image    the lent GPU machine: no OpenBLAS, LAPACK or BLAS (no
#                pkg-config files at all), $CUDA_HOME without crt/, a
#                toolkit found from the nvcc on PATH, the CUDA 13 wheels:
#                every GPU target, the scaler's plugin included, is built
#                and skipped; then --quick on it runs its twelve steps in
#                order, the two device-less ones first (they run here, on
#                the real cuDNN), each bounded (GPU_CHECK_STEP_LIMIT=3 and
#                a Python whose torch never answers: the torch step times
#                out and the three after it still run), each printed as it
#                ends; then with a deadline of 5 s: the steps after it
#                are not run, and say so.
#
# In each, every test and benchmark gets exactly one outcome line.
# The trees and builds go in a temporary folder outside the source tree
# (meson refuses include folders inside it), removed when all passed.
# usage: gpu_check_pip.sh SOURCE_ROOT TOOLKIT FAKE_CUDART12 FAKE_CUBLAS12
set -u
src=$1 toolkit=$2 cudart12=$3 cublas12=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-pip.XXXXXX")
passed=0 failed=0
check() { # check WHAT CONDITION...
    what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL $what"; failed=$((failed + 1)); fi
}
has() { grep -qF -- "$2" "$1"; }
# The toolkit's headers matching $2, each top-level entry linked (crt/ left
# out when $3 is no-crt).
headers() {
    mkdir -p "$1"
    for e in "$toolkit"/include/$2; do
        [ "${3:-}" = no-crt ] && [ "$(basename "$e")" = crt ] && continue
        ln -s "$e" "$1/"
    done
}
lib() { mkdir -p "$1" && ln -s "$2" "$1/$3"; }
names="cublas-compute-types-gpu cublas-gpu cublas-gemmex-32f-gpu cublaslt-gpu capture-gpu cudnn-gpu scaler-gpu torch-gpu sgemm-gpu conv-gpu unscale-gpu torch-three-ways-gpu"
outcome() { # outcome RESULTS NAME: its outcome line
    awk -v n="$2" '/^## / { cur = $3 } cur == n && /^(not buildable here|skipped: built|did not build|did not run)/' "$1"
}
# run NAME DIRS: gpu-check.sh with no toolkit and those nvidia folders.
run() {
    site=$work/$1/site-packages/nvidia
    rc=0
    GPU_CHECK_TOOLKIT=$work/no-toolkit GPU_CHECK_NVIDIA_DIRS=$2 AMPSHIM_BUILD_DIR=$work/$1/build \
        sh "$src/scripts/gpu-check.sh" "$work/$1/results.txt" > "$work/$1/out.txt" 2>&1 || rc=$?
    results=$work/$1/results.txt
    check "$1: exits 77 without a GPU ($rc)" [ "$rc" -eq 77 ]
    check "$1: wrote its results file" [ -s "$results" ]
    [ -s "$results" ] || { cat "$work/$1/out.txt"; return; }
    for n in $names; do
        k=$(outcome "$results" "$n" | wc -l)
        check "$1: $n has one outcome ($k)" [ "$k" -eq 1 ]
    done
}

# CUDA 13 wheels without nvidia-cuda-crt.
s=$work/cu13-no-crt/site-packages/nvidia
headers "$s/cu13/include" "*" no-crt
for l in cudart cublas cublasLt; do lib "$s/cu13/lib" "$toolkit/lib64/lib$l.so.13" "lib$l.so.13"; done
headers "$s/cudnn/include" "cudnn*"
lib "$s/cudnn/lib" "$toolkit/lib64/libcudnn.so.9" libcudnn.so.9
run cu13-no-crt "$s/cu13:$s/cudnn"
r=$work/cu13-no-crt/results.txt
why="crt/host_defines.h is missing (pip: nvidia-cuda-crt)"
# A machine whose compiler finds crt/ on its own search path (CUDA's headers
# linked into /usr/local/include, as some images do) cannot lack it: the
# missing-crt outcome is not checked there.
if printf '#include <crt/host_defines.h>\n' | ${CC:-cc} -E -x c - >/dev/null 2>&1; then
    echo "cu13-no-crt: the compiler finds crt/host_defines.h on its own path: missing crt not checked"
else
    check "cu13-no-crt: the headers' reason" has "$r" "headers: cuda: $why"
    for n in cublas-gpu cublas-compute-types-gpu cudnn-gpu sgemm-gpu scaler-gpu; do
        check "cu13-no-crt: $n not buildable for crt ($(outcome "$r" $n))" \
            [ "$(outcome "$r" $n)" = "not buildable here: $why" ]
    done
fi

# The same with crt/.
s=$work/cu13/site-packages/nvidia
headers "$s/cu13/include" "*"
for l in cudart cublas cublasLt; do lib "$s/cu13/lib" "$toolkit/lib64/lib$l.so.13" "lib$l.so.13"; done
headers "$s/cudnn/include" "cudnn*"
lib "$s/cudnn/lib" "$toolkit/lib64/libcudnn.so.9" libcudnn.so.9
run cu13 "$s/cu13:$s/cudnn"
r=$work/cu13/results.txt
check "cu13: major 13 from the wheels" has "$r" "CUDA libraries: major 13"
check "cu13: the wheels' runtime" has "$r" "cudart $s/cu13/lib/libcudart.so.13"
for n in cublas-gpu cublas-gemmex-32f-gpu cublaslt-gpu cublas-compute-types-gpu capture-gpu cudnn-gpu sgemm-gpu conv-gpu; do
    check "cu13: $n built and skipped ($(outcome "$r" $n))" \
        [ "$(outcome "$r" $n)" = "skipped: built, but found no GPU" ]
done
check "cu13: the scaler's plugin not buildable without a toolkit ($(outcome "$r" scaler-gpu))" \
    has "$r" "not buildable here: no toolkit with the static runtime"
check "cu13: the verdict line says none ran" \
    has "$r" "compute types: no verdict (compute_types_gpu did not run)"

# CUDA 12 wheels.
s=$work/cu12/site-packages/nvidia
headers "$s/cuda_runtime/include" "*"
lib "$s/cuda_runtime/lib" "$cudart12" libcudart.so.12
lib "$s/cublas/lib" "$cublas12" libcublas.so.12
run cu12 "$s/cublas:$s/cuda_runtime"
r=$work/cu12/results.txt
check "cu12: major 12 from the wheels" has "$r" "CUDA libraries: major 12"
check "cu12: the wheels' runtime" has "$r" "cudart $s/cuda_runtime/lib/libcudart.so.12"
check "cu12: the wheels' cuBLAS" has "$r" "cublas $s/cublas/lib/libcublas.so.12"
check "cu12: no cuDNN: its test not buildable ($(outcome "$r" cudnn-gpu))" \
    [ "$(outcome "$r" cudnn-gpu)" = "not buildable here: libcudnn.so.9 not found in the toolkit or gpu_library_dirs" ]

# The lent GPU machine, simulated.
s=$work/gpu-image/site-packages/nvidia
headers "$s/cu13/include" "*"
for l in cudart cublas cublasLt; do lib "$s/cu13/lib" "$toolkit/lib64/lib$l.so.13" "lib$l.so.13"; done
headers "$s/cudnn/include" "cudnn*"
lib "$s/cudnn/lib" "$toolkit/lib64/libcudnn.so.9" libcudnn.so.9
# (nvcc finds cicc and the rest beside the path it was run by: the whole
# toolkit is linked, entry by entry)
tk=$work/gpu-image/nvcc-toolkit
mkdir -p "$tk" "$work/gpu-image/cuda-no-crt/include" "$work/gpu-image/no-pkgconfig"
for e in "$toolkit"/*; do ln -s "$e" "$tk/"; done
image() { # image ARGS...: gpu-check.sh as on that machine
    env -u GPU_CHECK_TOOLKIT CUDA_HOME="$work/gpu-image/cuda-no-crt" PATH="$tk/bin:$PATH" \
        PKG_CONFIG_LIBDIR="$work/gpu-image/no-pkgconfig" PKG_CONFIG_PATH= \
        GPU_CHECK_NVIDIA_DIRS="$s/cu13:$s/cudnn" AMPSHIM_BUILD_DIR="$work/gpu-image/build" \
        "$@"
}
r=$work/gpu-image/results.txt
rc=0
image sh "$src/scripts/gpu-check.sh" "$r" > "$work/gpu-image/out.txt" 2>&1 || rc=$?
check "gpu-image: exits 77 without a GPU ($rc)" [ "$rc" -eq 77 ]
check "gpu-image: the toolkit found from nvcc" has "$r" "toolkit: $tk (from nvcc"
for n in $names cudnn-graph-gpu; do
    o=$(outcome "$r" "$n" | sort -u)
    check "gpu-image: $n built and skipped ($o)" [ "$o" = "skipped: built, but found no GPU" ]
done
check "gpu-image: the scaler's plugin built" [ -f "$work/gpu-image/build/libampscaler-cuda.so" ]
check "gpu-image: the CPU tests' one skip names what is missing" \
    has "$r" "CPU tests (OpenBLAS, LAPACK, BLAS): one skipped test: no openblas, openblas64, lapack, blas"
# --quick, with a Python whose torch never answers.
py=$work/gpu-image/python-torch-hangs
printf '#!/bin/sh\n[ "$1" = -c ] && exit 0\nexec sleep 30\n' > "$py"
chmod +x "$py"
q=$work/gpu-image/quick.txt
rc=0
t0=$(date +%s)
image env PYTHON="$py" GPU_CHECK_STEP_LIMIT=3 sh "$src/scripts/gpu-check.sh" --quick "$q" \
    > "$work/gpu-image/quick-out.txt" 2>&1 || rc=$?
took=$(($(date +%s) - t0))
check "gpu-image --quick: exits 77 without a GPU ($rc)" [ "$rc" -eq 77 ]
steps=$(sed -n 's/^## quick \([0-9]*\)\/12 \([a-z-]*\):.*/\1 \2/p' "$q" | tr '\n' ' ')
check "gpu-image --quick: twelve steps in order, device-less first ($steps)" [ "$steps" = \
    "1 devless-graph 2 devless-legacy 3 verdict 4 sgemm 5 gemmex 6 lt 7 graph 8 sgemm-bench 9 torch 10 cudnn-legacy 11 capture 12 scaler " ]
check "gpu-image --quick: each step's limit capped at 3 s" \
    [ "$(grep -c '^## quick [0-9]*/12 .*(limit 3 s' "$q")" -eq 12 ]
for k in 1 2; do
    check "gpu-image --quick: device-less step $k ran here" \
        [ "$(awk -v k="$k" '$0 ~ "^## quick " k "/12" { s = 1; next } /^## / { s = 0 } s && /^(rc 0|timed out after)/' "$q")" != "" ]
done
check "gpu-image --quick: the torch step timed out" \
    [ "$(awk '/^## quick 9\/12/ { s = 1; next } /^## / { s = 0 } s && /^timed out after 3 s/' "$q")" != "" ]
for k in 10 11 12; do
    check "gpu-image --quick: step $k ran after it" \
        [ "$(awk -v k="$k" '$0 ~ "^## quick " k "/12" { s = 1; next } /^## / { s = 0 } s && /^skipped: built/' "$q")" != "" ]
done
check "gpu-image --quick: bounded (took $took s)" [ "$took" -lt 240 ]
check "gpu-image --quick: each step printed as it ended" \
    [ "$(grep -c '^## quick [0-9]*/12 ' "$work/gpu-image/quick-out.txt")" -eq 12 ]
# The deadline: 5 s, spent by the build (already done, so it ends at once)
# and the first steps; what remains says it was not run.
q5=$work/gpu-image/quick-deadline.txt
rc=0
image env PYTHON="$py" GPU_CHECK_DEADLINE=5 GPU_CHECK_STEP_LIMIT=3 sh "$src/scripts/gpu-check.sh" \
    --quick "$q5" > "$work/gpu-image/quick-deadline-out.txt" 2>&1 || rc=$?
check "gpu-image --quick, deadline 5 s: the last step not run, and says why" \
    [ "$(awk '/^## quick 12\/12/ { s = 1; next } /^## / { s = 0 } s && /^not run: the quick check.s deadline \(5 s\) is spent/' "$q5")" != "" ]

echo "gpu_check_pip: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then
    rm -rf "$work"
else
    echo "(the trees, builds and results are in $work)"
    exit 1
fi
