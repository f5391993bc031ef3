#!/bin/sh
# Hostile files in the variables that name files: each warns at most once,
# never hangs (every run is bounded by timeout), follows no planted symbolic
# link, and leaves the program's results unchanged.
# usage: hostile_files.sh PRELOAD BLAS_CHECK
preload=$1 check=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# run NAME EXPECTED_LINES VAR=VALUE...: the program lowers exactly, in time,
# with EXPECTED_LINES lines on stderr.
run() {
    name=$1 lines=$2
    shift 2
    env LD_PRELOAD="$preload" "$@" timeout 60 "$check" lower bf16 >out 2>err
    rc=$?
    [ $rc -eq 0 ] && ok || bad "$name: exit $rc (124: it hung)"
    n=$(wc -l <err)
    [ "$n" -eq "$lines" ] && ok || { bad "$name: $n lines on stderr, want $lines"; cat err; }
}

mkfifo fifo
run "a FIFO as AMPSHIM_POLICY_FILE" 1 AMPSHIM_POLICY_FILE=fifo
run "a FIFO as AMPSHIM_LOG_FILE (and a bad dtype)" 2 AMPSHIM_LOG_FILE=./fifo AMPSHIM_DTYPE=fp17
run "a FIFO as AMPSHIM_REPORT" 1 AMPSHIM_REPORT=./fifo
mkdir dir
run "a directory as AMPSHIM_POLICY_FILE" 1 AMPSHIM_POLICY_FILE=dir
run "/dev/zero as AMPSHIM_POLICY_FILE" 1 AMPSHIM_POLICY_FILE=/dev/zero
truncate -s 1G sparse
run "a 1 GB sparse AMPSHIM_POLICY_FILE" 1 AMPSHIM_POLICY_FILE=sparse
run "/dev/full as AMPSHIM_REPORT" 0 AMPSHIM_REPORT=/dev/full
run "AMPSHIM_REPORT=stdout (a word, not a path)" 1 AMPSHIM_REPORT=stdout
[ ! -e stdout ] && ok || bad "AMPSHIM_REPORT=stdout created a file named stdout"

# Planted symbolic links are not followed: the target stays untouched.
echo precious >target
ln -s target link
run "a symbolic link as AMPSHIM_REPORT" 1 AMPSHIM_REPORT=./link
run "a symbolic link as AMPSHIM_LOG_FILE (and a bad dtype)" 2 AMPSHIM_LOG_FILE=./link AMPSHIM_DTYPE=fp17
[ "$(cat target)" = precious ] && ok || bad "a planted link's target was written"

# Size limits: 262,143 bytes of policy text are accepted (a whole audit
# policy), 262,144 are not.
awk 'BEGIN { for (i = 0; i < 262143 - 9; i++) printf "#"; printf "\nmm=lower" }' >exact
[ "$(wc -c <exact)" -eq 262143 ] || bad "the 262,143-byte fixture is $(wc -c <exact) bytes"
run "a 262,143-byte policy file" 0 AMPSHIM_POLICY_FILE=exact
printf '#' >>exact
run "a 262,144-byte policy file" 1 AMPSHIM_POLICY_FILE=exact

# Thousands of policy entries, the longest value exec passes (128 KiB), control
# characters: one sanitised line each.
entries=$(awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%smm=lower", (i ? "," : "") }')
run "3,000 policy entries" 0 AMPSHIM_POLICY="$entries"
big=$(head -c 120000 /dev/zero | tr '\0' 'x')
run "a 120 KB AMPSHIM_DTYPE" 1 AMPSHIM_DTYPE="$big"
run "control characters in AMPSHIM_DTYPE" 1 "AMPSHIM_DTYPE=$(printf 'fp\033[2J16\nfp32')"
echo "hostile_files: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
