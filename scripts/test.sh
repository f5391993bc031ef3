#!/bin/sh
# Builds and runs every test suite (unit, preload, clients), then prints one
# summary line "N passed, N failed, N skipped".
set -eu
cd "$(dirname "$0")/.."
build=${AMPSHIM_BUILD_DIR:-build}
[ -d "$build" ] || meson setup "$build"
ninja -C "$build"
status=0
meson test -C "$build" --print-errorlogs "$@" || status=$?
/usr/bin/python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    counts["OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $status
