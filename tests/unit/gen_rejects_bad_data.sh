#!/bin/sh
# The generator fails the build on inconsistent data, and an edit to a data
# file changes the generated policy with no other edit.
# usage: gen_rejects_bad_data.sh GENERATOR DATA_DIR MAN_TEMPLATE
gen=$1 data=$2 man=$3
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# expect_failure NAME MESSAGE: the generator must fail and say MESSAGE.
expect_failure() {
    if "$gen" "$work/d" "$work/h" "$work/c" "$man" "$work/m" "$work/dep" 2>"$work/err"; then
        echo "FAIL $1: generator accepted bad data"; failed=$((failed + 1))
    elif ! grep -q "$2" "$work/err"; then
        echo "FAIL $1: message '$(cat "$work/err")' lacks '$2'"; failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}
fresh() { rm -rf "$work/d"; cp -r "$data" "$work/d"; }

fresh; echo "sfoo gemm notanop -" >> "$work/d/bindings.txt"
expect_failure "unknown op" "op 'notanop' appears in no op list"
fresh; echo "sfoo gemmx mm -" >> "$work/d/bindings.txt"
expect_failure "unknown kind" "unknown kind 'gemmx'"
fresh; echo "sgemm gemm mm -" >> "$work/d/bindings.txt"
expect_failure "duplicate routine" "routine 'sgemm' bound twice"
fresh; echo "sfoo gemm" >> "$work/d/bindings.txt"
expect_failure "short line" "expected: routine kind op op_beta"
fresh; echo "cublasFoo cublas_sgemv mv addmv 32 quick" >> "$work/d/bindings_cuda.txt"
expect_failure "unknown binding category" "unknown category 'quick'"
fresh; echo "cublasFoo cublas_sgemv mv addmv 32+48" >> "$work/d/bindings_cuda.txt"
expect_failure "bad integer width" "ints must be 32, 64 or 32+64, not '32+48'"
# A 32+64 row adds the _64 twin: binding the twin again is binding it twice.
fresh; echo "cublasSgemm_v2_64 cublas_sgemm mm addmm 64" >> "$work/d/bindings_cuda.txt"
expect_failure "a _64 twin bound twice" "routine 'cublasSgemm_v2_64' bound twice"
fresh; echo "mm" >> "$work/d/cpu_float32.txt"
expect_failure "op in two categories" "'mm' is already lower"
fresh; echo "mm" >> "$work/d/cpu_bfloat16.txt"
expect_failure "op listed twice" "'mm' listed twice"
fresh; echo "two words" >> "$work/d/cuda_float16.txt"
expect_failure "malformed list line" "expected one op name a line"
fresh; echo "extra.txt gpu lower" >> "$work/d/lists.txt"
expect_failure "list file of an unknown device" "device is cpu or cuda, not 'gpu'"
fresh; echo "missing.txt cpu fp32" >> "$work/d/lists.txt"
expect_failure "list file that is not there" "missing.txt: No such file"
fresh; grep -v '^CUDNN' "$data/families.txt" > "$work/d/families.txt"
expect_failure "kind of an unnamed family" "family CUDNN, which families.txt does not name"
fresh; echo "cublas_sgemm CUBLAS shim/cublas/cublas.c" >> "$work/d/kinds.txt"
expect_failure "kind listed twice" "kind 'cublas_sgemm' twice"
fresh; echo "cublas_newkind CUBLAS shim/cuda/no_such_file.c" >> "$work/d/kinds.txt"
expect_failure "kind in a file that is not there" "no_such_file.c: No such file"
fresh; printf 'spilled amount 10 one too many\nspilt amount 10 two too many\nspent amount 10 three too many\n' >> "$work/d/counters.txt"
expect_failure "a thirteenth counter" "more than 12 counters"
fresh; echo "libnodescription.so*" >> "$work/d/libraries.txt"
expect_failure "a library without what it is" "expected: glob what"
fresh; echo 'lib"quoted.so  a quote' >> "$work/d/libraries.txt"
expect_failure "a library glob with a quote" "no quotes or backslashes"
fresh; echo "py:mine.*.f  mm" >> "$work/d/op_frames.txt"
expect_failure "an op frame naming an op of no float32 list" "'mm', which no CPU float32 list has"
fresh; echo "libmine.so  cdist" >> "$work/d/op_frames.txt"
expect_failure "an op frame that is no Python function" "rows are py:MODULE.QUALNAME globs"

# An edit to a data file is all it takes to change the policy.
fresh
"$gen" "$work/d" "$work/h" "$work/c" "$man" "$work/m" "$work/dep" || { echo "FAIL: good data rejected"; exit 1; }
if grep -A200 'AMP_DEVICE_CPU' "$work/c" | sed '/AMP_DEVICE_CUDA/q' | grep -q 'AMP_OP_mm] = AMP_CAT_LOWER'; then
    passed=$((passed + 1))
else
    echo "FAIL: cpu mm is not lower in the generated table"; failed=$((failed + 1))
fi
if grep -q 'cuda_float32_linalg.txt' "$work/dep" && grep -q 'counters.txt' "$work/dep"; then
    passed=$((passed + 1))
else
    echo "FAIL: the depfile does not name every data file read"; failed=$((failed + 1))
fi
grep -v '^mm$' "$data/cpu_bfloat16.txt" > "$work/d/cpu_bfloat16.txt"
echo mm >> "$work/d/cpu_float32.txt"
"$gen" "$work/d" "$work/h" "$work/c" "$man" "$work/m" "$work/dep" || { echo "FAIL: edited data rejected"; exit 1; }
if grep -A200 'AMP_DEVICE_CPU' "$work/c" | sed '/AMP_DEVICE_CUDA/q' | grep -q 'AMP_OP_mm] = AMP_CAT_FP32'; then
    passed=$((passed + 1))
else
    echo "FAIL: moving mm to cpu_float32.txt did not change the table"; failed=$((failed + 1))
fi
if grep -q '^sgemm	mm (addmm)	fp32	-$' "$work/m"; then
    passed=$((passed + 1))
else
    echo "FAIL: the man page table does not follow the data"; failed=$((failed + 1))
fi
fresh; echo "libnewsolver.so*   a new solver" >> "$work/d/libraries.txt"
"$gen" "$work/d" "$work/h" "$work/c" "$man" "$work/m" "$work/dep" || { echo "FAIL: a new library rejected"; exit 1; }
if grep -q 'X("libnewsolver.so\*", "a new solver")' "$work/h" && grep -q '^libnewsolver.so\*	T{' "$work/m"; then
    passed=$((passed + 1))
else
    echo "FAIL: a line of libraries.txt is not in the generated list and man page"; failed=$((failed + 1))
fi
echo "gen_rejects_bad_data: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
