#!/bin/sh
# Builds and runs every test suite (unit, preload, control, fakes, real-cuda
# (the real cuDNN 9 and cuBLAS without a GPU), clients,
# outside (numpy, scipy and scikit-learn's own suites under the shim);
# gpu skips without a GPU), then prints one
# summary line "N passed, N failed, N skipped".
#   sh scripts/test.sh [MESON TEST ARGS]
#   sh scripts/test.sh --with-sanitizers   also: unit, preload, control,
#       fakes, real-cuda and stress suites under ASan+UBSan and under TSan, and libFuzzer on every parser
#       and on ampctl's block reader (clang)
set -eu
cd "$(dirname "$0")/.."
sanitizers=0
if [ "${1:-}" = "--with-sanitizers" ]; then
    sanitizers=1
    shift
fi
logs=""
status=0

# run DIR "SETUP OPTIONS" "ENV" [MESON TEST ARGS]
run() {
    dir=$1 options=$2 extra_env=$3
    shift 3
    # The tests are built on request (-Dtests=true), an older folder's too.
    if [ -d "$dir" ]; then
        meson setup --reconfigure "$dir" -Dtests=true >/dev/null
    else
        meson setup "$dir" -Dtests=true $options
    fi
    ninja -C "$dir"
    env $extra_env meson test -C "$dir" --print-errorlogs "$@" || status=1
    logs="$logs $dir/meson-logs/testlog.json"
}

run "${AMPSHIM_BUILD_DIR:-build}" "" "" "$@"
if [ "$sanitizers" -eq 1 ]; then
    quick="-Dexhaustive_tests=false -Dbuildtype=debugoptimized"
    # Instrumented code runs several times slower (TSan's native product
    # tests run for minutes on two cores): the sanitizer runs give every test
    # three times its limit.
    run build-asan "$quick -Db_sanitize=address,undefined" \
        "ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1" \
        --timeout-multiplier 3 \
        --suite unit --suite preload --suite control --suite fakes --suite real-cuda --suite stress
    # OpenBLAS's own worker threads synchronise by spinning, which TSan cannot
    # see; with one OpenBLAS thread only the shim's threads remain (the
    # threads-4-concurrent test runs four at once through the shim). oneDNN,
    # not instrumented either, has its suppressions in tests/tsan.supp, and
    # its own primitive cache is off: it hands one thread's primitive
    # descriptor to another through code TSan cannot see (ampshim's cache,
    # which TSan does see, is what the tests exercise).
    run build-tsan "$quick -Db_sanitize=thread" \
        "OPENBLAS_NUM_THREADS=1 DNNL_PRIMITIVE_CACHE_CAPACITY=0 TSAN_OPTIONS=halt_on_error=1:suppressions=$PWD/tests/tsan.supp" \
        --timeout-multiplier 3 --suite unit --suite preload \
        --suite control --suite fakes --suite real-cuda --suite stress
    [ -d build-fuzz ] || CC=clang meson setup build-fuzz $quick -Dtests=true -Dfuzzing=true \
        -Db_sanitize=address,undefined -Db_lundef=false
    ninja -C build-fuzz tests/fuzz/fuzz_parsers tests/fuzz/fuzz_block tests/fuzz/fuzz_scaler_state
    meson test -C build-fuzz --no-rebuild --print-errorlogs --suite fuzz || status=1
    logs="$logs build-fuzz/meson-logs/testlog.json"
fi

/usr/bin/python3 - $logs <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)["result"]
        counts["OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $status
