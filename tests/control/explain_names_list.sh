#!/bin/sh
# ampctl policy --explain names the op list a category really comes from:
# for each symbol given, every "is listed in policy/data/FILE" line must name
# a file of DATA_DIR that lists the op on its own line.
# usage: explain_names_list.sh AMPCTL DATA_DIR SYMBOL...
ampctl=$1 data=$2
shift 2
passed=0 failed=0
for sym in "$@"; do
    out=$("$ampctl" policy --explain "$sym") || { echo "FAIL: $sym: ampctl failed"; failed=$((failed + 1)); continue; }
    lines=$(printf '%s\n' "$out" | grep 'is listed in policy/data/')
    [ -n "$lines" ] || { echo "FAIL: $sym: no list named"; failed=$((failed + 1)); continue; }
    printf '%s\n' "$lines" | while read -r line; do
        op=$(printf '%s\n' "$line" | sed 's/.*because \([^ ]*\) is listed.*/\1/')
        file=$(printf '%s\n' "$line" | sed 's@.*policy/data/@@')
        grep -qx "$op" "$data/$file" || echo "FAIL: $sym: '$op' is not in $file ($line)"
    done > /tmp/explain.$$
    if [ -s /tmp/explain.$$ ]; then cat /tmp/explain.$$; failed=$((failed + 1)); else passed=$((passed + 1)); fi
    rm -f /tmp/explain.$$
done
echo "explain_names_list: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
