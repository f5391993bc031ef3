#!/bin/sh
# Fills ampshim(7)'s @SETTINGS_TABLE@ line with the settings table as
# `ampctl settings --man` prints it (runtime/settings.h: one table for every
# setting). usage: fill-settings.sh AMPCTL IN OUT
set -eu
ampctl=$1 in=$2 out=$3
"$ampctl" settings --man > "$out.table"
awk -v table="$out.table" '
    $0 == "@SETTINGS_TABLE@" { while ((getline line < table) > 0) print line; found = 1; next }
    { print }
    END { if (!found) { print "no @SETTINGS_TABLE@ line" > "/dev/stderr"; exit 1 } }
' "$in" > "$out"
rm -f "$out.table"
