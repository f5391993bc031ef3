#!/bin/sh
# A CPU without native bf16 units, simulated on any CPU with
# ONEDNN_MAX_CPU_ISA=AVX2 (ampshim's probe asks oneDNN, which follows it),
# with an ordinary fp32 program (examples/matmul_demo: sgemm, ssyrk, sposv):
# - the report's header names the CPU and says in words that bf16 has no
#   native units here and what to set to study it anyway; the products the
#   policy lowers are counted nounits, none lowered, and the program's results
#   are those of a run without the shim;
# - AMPSHIM_AUDIT=1 measures anyway: the audit's table and its policy file
#   are written, and the results stay those of a run without the shim;
#   AMPSHIM_AUDIT=auto runs nothing twice for a lowering that cannot pay:
#   every call counted nounits, none audited, the results those without it;
# - a misspelt AMPSHIM_ variable gets one warning naming the real one, and
#   none in a program that makes no hooked call; the project's tools'
#   variables (AMPSHIM_PIP_VENV) get none;
# - a process that ends by _exit writes its report; a vfork child that
#   _exits after a failed exec writes none.
# usage: no_units.sh LIBAMPSHIM MATMUL_DEMO
shim=$1 demo=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
check() { if eval "$2"; then passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi; }
# The demo's results without its timings.
results() { sed 's/, [0-9.]* ms; first call [0-9.]* ms//' "$1"; }
# A counter of a symbol's row in a report: counter REPORT SYMBOL COLUMN.
counter() {
    awk -v sym="$2" -v col="$3" '$1 == "symbol" { for (i = 1; i <= NF; i++) at[$i] = i }
        $1 == sym && at[col] { print $(at[col]); exit }' "$1"
}

export ONEDNN_MAX_CPU_ISA=AVX2
# The size rule as shipped (auto; the test setup sets 0).
unset AMPSHIM_LOWER_MIN AMPSHIM_CPU_LOWER_MIN
"$demo" >plain.out 2>plain.err
check "the demo runs without the shim" '[ $? -eq 0 ]'

LD_PRELOAD=$shim AMPSHIM_REPORT=1 "$demo" >shim.out 2>shim.err
check "the demo runs under the shim" '[ $? -eq 0 ]'
check "the report names the CPU and ONEDNN_MAX_CPU_ISA" 'grep -q "^cpu: .*ONEDNN_MAX_CPU_ISA=AVX2" shim.err'
check "the report says bf16 has no native units here, and what to set" \
    'grep -q "^cpu bf16: no native units here" shim.err && grep -q "AMPSHIM_AUDIT=1" shim.err'
calls=$(counter shim.err cblas_sgemm calls)
check "cblas_sgemm counted nounits ($calls calls, $(counter shim.err cblas_sgemm nounits) nounits)" \
    '[ "${calls:-0}" -gt 0 ] && [ "$(counter shim.err cblas_sgemm nounits)" = "$calls" ]'
check "nothing lowered" '[ "$(counter shim.err total lowered)" = 0 ]'
results plain.out >plain.out.r
check "the results are those without the shim (compared)" 'results shim.out | cmp -s - plain.out.r'

for mode in 1 auto; do
    rm -f policy.txt
    LD_PRELOAD=$shim AMPSHIM_AUDIT=$mode AMPSHIM_AUDIT_POLICY=./policy.txt AMPSHIM_REPORT=1 \
        "$demo" >audit.out 2>audit.err
    check "AMPSHIM_AUDIT=$mode: the demo runs" '[ $? -eq 0 ]'
    if [ $mode = 1 ]; then
        check "AMPSHIM_AUDIT=$mode: the audit's table is written" \
            'grep -q "^ampshim audit" audit.err && grep -q "^[0-9].*cblas_sgemm" audit.err'
        check "AMPSHIM_AUDIT=$mode: its policy file is written" 'grep -q "cblas_sgemm" policy.txt'
    else
        check "AMPSHIM_AUDIT=$mode: no call audited, every one counted nounits" \
            '! grep -q "^[0-9].*cblas_sgemm" audit.err &&
             [ "$(counter audit.err cblas_sgemm nounits)" = "$calls" ]'
    fi
    check "AMPSHIM_AUDIT=$mode: the results are those without the shim" \
        'results audit.out | cmp -s - plain.out.r'
done

LD_PRELOAD=$shim AMPSHIM_LOWERMIN=0 "$demo" >/dev/null 2>typo.err
check "a misspelt variable: one line naming the real one ($(cat typo.err))" \
    '[ "$(wc -l <typo.err)" -eq 1 ] && grep -q "^ampshim: AMPSHIM_LOWERMIN: no such setting (did you mean AMPSHIM_LOWER_MIN?)" typo.err'
LD_PRELOAD=$shim AMPSHIM_PIP_VENV=/opt/venv AMPSHIM_BUILD_DIR=/tmp "$demo" >/dev/null 2>tool.err
check "the project's tools' variables (AMPSHIM_PIP_VENV): not called unknown ($(cat tool.err))" \
    '[ ! -s tool.err ]'
LD_PRELOAD=$shim AMPSHIM_LOWERMIN=0 sh -c 'echo quiet | cat >/dev/null' 2>quiet.err
check "no hooked call: nothing said ($(cat quiet.err))" '[ ! -s quiet.err ]'
LD_PRELOAD=$shim AMPSHIM_LOWERMIN=0 AMPSHIM_STRICT=1 "$demo" >/dev/null 2>&1
check "AMPSHIM_STRICT=1 counts it as a bad variable" '[ $? -eq 2 ]'

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    LD_PRELOAD=$shim AMPSHIM_REPORT=./r-%p.txt /usr/bin/python3 -c '
import os, subprocess
import numpy as np
a = np.ones((128, 128), np.float32)
a @ a
try:
    subprocess.run(["/nonexistent/program"])
except OSError:
    pass
os._exit(3)'
    status=$?
    check "os._exit's status kept ($status)" '[ $status -eq 3 ]'
    check "a process ending by _exit wrote its report, and only it ($(ls r-* 2>/dev/null | wc -l) files)" \
        '[ "$(ls r-* | wc -l)" -eq 1 ] && grep -q "^cblas_sgemm" r-*'
fi
echo "no_units: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
