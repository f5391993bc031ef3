#!/bin/sh
# Every setting of the table (ampctl settings) is described in ampshim(7)'s
# prose (a .BR line of its own, or named in one), and the built page has the
# table filled in. usage: man_settings.sh AMPCTL MAN_TEMPLATE BUILT_MAN
ampctl=$1 template=$2 built=$3
passed=0 failed=0
for var in $("$ampctl" settings | awk 'NR > 1 && $1 != "-" { print $1 }'); do
    if grep -q "^\.BR* .*$var" "$template"; then
        passed=$((passed + 1))
    else
        echo "FAIL $var: no .BR or .B line of ampshim(7)'s ENVIRONMENT describes it"
        failed=$((failed + 1))
    fi
done
for ctl in $("$ampctl" settings | awk 'NR > 1 && $2 != "-" { print $2 }'); do
    if grep -q "	$(echo "$ctl" | sed 's/\./\\./g')	" "$built"; then
        passed=$((passed + 1))
    else
        echo "FAIL $ctl: not in the built page's settings table"
        failed=$((failed + 1))
    fi
done
if grep -q '@[A-Z_]*@' "$built"; then
    echo "FAIL the built page has a placeholder left"; failed=$((failed + 1))
else
    passed=$((passed + 1))
fi
echo "man-settings: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
