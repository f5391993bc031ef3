#!/bin/sh
# Call sites from every CPython found here (Debian's, and any 3.x under
# ~/.pyenv or /usr/local): a product made by ctypes from a Python function
# is that function's line (runtime/python_frames.c reads 3.9 to 3.13), and
# an interpreter without a proven layout says so in the report, its sites
# native ones. No numpy needed: ctypes calls the BLAS.
#   sh python_versions.sh LIBAMPSHIM
set -u
shim=$1
dir=$(mktemp -d)
cat > "$dir/site.py" <<'PY'
import ctypes
ctypes.CDLL("libopenblas.so.0", mode=ctypes.RTLD_GLOBAL)
blas = ctypes.CDLL(None)
n = 128
a = (ctypes.c_float * (n * n))(*([1.0] * (n * n)))
c = (ctypes.c_float * (n * n))()
def product():
    blas.cblas_sgemm(102, 111, 111, n, n, n, ctypes.c_float(1.0), a, n, a, n, ctypes.c_float(0.0), c, n)
for _ in range(2):
    product()
PY
passed=0 failed=0
for py in /usr/bin/python3 /usr/local/bin/python3.[0-9]* "$HOME"/.pyenv/versions/3.*/bin/python3; do
    [ -x "$py" ] || continue
    ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
    case $ver in 3.[0-7]) continue ;; esac # ctypes' float arguments as written need 3.8
    report=$(cd "$dir" && LD_PRELOAD=$shim AMPSHIM_AUDIT=1 AMPSHIM_REPORT=1 \
        AMPSHIM_CPU_KERNEL=emulate AMPSHIM_LOWER_MIN=0 "$py" site.py 2>&1 >/dev/null)
    case $ver in
    3.9|3.1[0-3]) want="site.py:8 product" ;;
    *) want="python $ver: frames not read" ;;
    esac
    if printf '%s\n' "$report" | grep -q "$want"; then
        echo "ok $py ($ver): $want"
        passed=$((passed + 1))
    else
        echo "FAIL $py ($ver): no '$want' in"
        printf '%s\n' "$report" | tail -8
        failed=$((failed + 1))
    fi
done
rm -rf "$dir"
echo "python-versions: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
