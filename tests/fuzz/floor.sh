#!/bin/sh
# Runs a libFuzzer target and fails when the coverage it reached (the
# "cov:" of its DONE line: edges of the instrumented code, the core's
# parsers included) is under FLOOR. New inputs go to OUT (made here, in
# the build tree), never into the seed corpus of the source tree.
#   floor.sh FLOOR OUT FUZZER [LIBFUZZER ARGS...] [SEED CORPUS]
set -u
floor=$1 out=$2 fuzzer=$3
shift 3
mkdir -p "$out" || exit 1
log=$out.log
"$fuzzer" "$out" "$@" >"$log" 2>&1
rc=$?
tail -n 25 "$log"
if [ "$rc" -ne 0 ]; then
    echo "floor.sh: $fuzzer failed (exit $rc)"
    exit 1
fi
cov=$(sed -n 's/.*DONE *cov: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$cov" ]; then
    echo "floor.sh: $fuzzer printed no DONE line with its coverage"
    exit 1
fi
echo "floor.sh: $(basename "$fuzzer") reached coverage $cov (floor $floor)"
[ "$cov" -ge "$floor" ]
