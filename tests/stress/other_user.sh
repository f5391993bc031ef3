#!/bin/sh
# Another user can neither read nor change this user's control block, nor
# plant one for it in advance. Runs as root (skips with 77 otherwise): it
# makes two users, runs a program under the shim as the first while the
# second uses ampctl on it and plants files where a block could be looked
# for; the first user's own ampctl keeps working.
# usage: other_user.sh AMPCTL NAMED_THREADS LIBAMPSHIM
ampctl=$1 program=$2 lib=$3
[ "$(id -u)" -eq 0 ] || { echo "not root: skipped"; exit 77; }
command -v useradd >/dev/null && command -v setpriv >/dev/null || { echo "no useradd/setpriv: skipped"; exit 77; }
for u in ampshim-victim ampshim-other; do
    id "$u" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/sh "$u" || exit 77
done
as() { user=$1; shift; setpriv --reuid="$user" --regid="$user" --clear-groups -- "$@"; }
work=$(mktemp -d) || exit 1
chmod 755 "$work"
mkdir "$work/victim" && chown ampshim-victim "$work/victim"
failed=0 passed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# Planted in advance by the other user: files with the names older versions
# used, a FIFO among them (the victim must not hang on it).
as ampshim-other sh -c 'for i in 1 2 3; do : > /dev/shm/ampshim-$i; done; mkfifo /dev/shm/ampshim-fifo' 2>/dev/null

# Not through as(): $! must be the program's own pid (setpriv and env exec).
setpriv --reuid=ampshim-victim --regid=ampshim-victim --clear-groups -- \
    env LD_PRELOAD="$lib" "$program" "$work/victim/status" "$work/victim/stop" &
pid=$!
trap 'touch "$work/victim/stop" 2>/dev/null; kill $pid 2>/dev/null; rm -rf "$work" /dev/shm/ampshim-[123] /dev/shm/ampshim-fifo' EXIT
for i in $(seq 100); do [ -s "$work/victim/status" ] && break; sleep 0.05; done
[ -s "$work/victim/status" ] && ok || bad "the victim did not start"

# The victim's own user sees and steers it.
# (Its block appears at its first hooked call, which a loaded machine may
# delay past the status file: asked again for up to five seconds.)
for i in $(seq 100); do as ampshim-victim "$ampctl" status "$pid" >/dev/null 2>&1 && break; sleep 0.05; done
as ampshim-victim "$ampctl" status "$pid" >/dev/null 2>&1 && ok || bad "the victim's user cannot read its block"
as ampshim-victim "$ampctl" ps 2>/dev/null | grep -q "^$pid " && ok || bad "the victim's user does not see it in ps"

# The other user: nothing.
as ampshim-other "$ampctl" ps 2>/dev/null | grep -q "^$pid " && bad "the other user sees the victim in ps" || ok
as ampshim-other "$ampctl" status "$pid" >/dev/null 2>"$work/err" && bad "the other user read the block" || ok
[ "$(wc -l <"$work/err")" -eq 1 ] && ok || bad "the other user's refusal is not one line: $(cat "$work/err")"
as ampshim-other "$ampctl" set "$pid" opt.enabled=0 >/dev/null 2>&1 && bad "the other user changed the block" || ok
as ampshim-other "$ampctl" get "$pid" opt.enabled >/dev/null 2>&1 && bad "the other user read a value" || ok
as ampshim-other sh -c "cat /proc/$pid/fd/* >/dev/null" 2>/dev/null && bad "the other user read the victim's descriptors" || ok
# ... and the block still says what the victim set.
[ "$(as ampshim-victim "$ampctl" get "$pid" opt.enabled 2>/dev/null)" = default ] && ok ||
    bad "opt.enabled changed: $(as ampshim-victim "$ampctl" get "$pid" opt.enabled 2>&1)"
touch "$work/victim/stop"
wait $pid && ok || bad "the victim exited with $?"
echo "other_user: $passed passed, $failed failed"
[ $failed -eq 0 ]
