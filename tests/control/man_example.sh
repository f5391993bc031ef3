#!/bin/sh
# Runs the EXAMPLES of man/ampctl.1 exactly as written (the "$ " lines of the
# .EX block, with troff's \- unescaped), with the built ampctl and Debian's
# python3 first on PATH. Every command must succeed.
# usage: man_example.sh MAN_PAGE AMPCTL
set -u
page=$1 ampctl=$2
bin=$(mktemp -d)
trap 'rm -rf "$bin"; [ -n "${job:-}" ] && kill "$job" 2>/dev/null' EXIT
ln -s "$(cd "$(dirname "$ampctl")" && pwd)/$(basename "$ampctl")" "$bin/ampctl"
ln -s /usr/bin/python3 "$bin/python3"
PATH=$bin:$PATH
export PATH
script=$bin/example.sh
sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$page" | sed -n '/^\.EX/,/^\.EE/p' |
    sed -n 's/^\$ //p' | sed 's/\\-/-/g' > "$script"
lines=$(wc -l < "$script")
[ "$lines" -ge 5 ] || { echo "FAIL: found only $lines example lines"; exit 1; }
# Run the example line by line in one shell, stopping at the first failure.
{
    echo 'set -e'
    cat "$script"
} > "$bin/run.sh"
sh "$bin/run.sh"
rc=$?
if [ "$rc" -eq 0 ]; then
    echo "man_example: $lines passed, 0 failed"
else
    echo "FAIL: an example line failed (status $rc)"
    echo "man_example: 0 passed, 1 failed"
fi
exit "$rc"
