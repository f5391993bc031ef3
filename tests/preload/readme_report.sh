#!/bin/sh
# The sample reports of README.md and docs/*.md are in the report's current
# format: every
# header line ("ampshim report, pid N (...): key value, ...") names the
# settings the report names, in its order, and every column line ("symbol
# op policy calls ...") is the report's (a sample cut with "..." a prefix
# of it). The report compared is the one examples/matmul_demo gets now.
# usage: readme_report.sh SOURCE_ROOT LIBAMPSHIM MATMUL_DEMO
root=$1 shim=$2 demo=$3
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
readme=$work/documents
cat "$root/README.md" "$root"/docs/*.md >"$readme" || exit 1
passed=0 failed=0
check() { if eval "$2"; then passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi; }
squeeze() { sed 's/^ *//; s/  */ /g; s/ *$//'; }
# The settings' names of a header line, in order.
keys() { sed 's/^ *ampshim report, pid [0-9]* ([^)]*)://; s/, /\n/g' | awk '{ print $1 }' | tr '\n' ' '; }

LD_PRELOAD=$shim AMPSHIM_REPORT=1 "$demo" >/dev/null 2>"$work/report"
want_header=$(grep '^ampshim report, pid' "$work/report" | keys)
want_columns=$(grep '^symbol ' "$work/report" | squeeze)
check "the demo's report has a header and columns" '[ -n "$want_header" ] && [ -n "$want_columns" ]'
n=0
grep '^ *ampshim report, pid' "$readme" >"$work/headers"
while IFS= read -r line; do
    n=$((n + 1))
    got=$(printf '%s\n' "$line" | keys)
    check "README's report header $n names the report's settings (got: $got)" '[ "$got" = "$want_header" ]'
done <"$work/headers"
grep '^ *symbol  *op  *policy  *calls' "$readme" | squeeze >"$work/columns"
while IFS= read -r line; do
    n=$((n + 1))
    case $line in
    *...) prefix=${line%...}; prefix=${prefix% }
        check "README's cut column line is the report's ($line)" \
            'case "$want_columns" in "$prefix"*) true ;; *) false ;; esac' ;;
    *) check "README's column line is the report's ($line)" '[ "$line" = "$want_columns" ]' ;;
    esac
done <"$work/columns"
check "README has sample reports ($n lines)" '[ "$n" -ge 3 ]'
echo "readme_report: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
