#!/bin/sh
# ampctl as the tools beside it: `ampctl run CMD` with and without "--" (the
# command's own options untouched, --json among them), `ampctl which`
# naming the preload library and the audit module, `ampctl --version`; and,
# from a staged install (meson install --destdir), ampctl finds the
# library of its own install, not the configured prefix's; ampctl(1)
# renders within 80 columns without a warning from groff; the staged tree
# holds only what a user runs, and its ampshim.pc names the library.
# usage: ampctl_run_which.sh AMPCTL BUILD_DIR AMPCTL_1
set -u
ampctl=$1
build=$2
page=$3
fail=0
check() { # what, then a command that succeeds when it holds
    what=$1
    shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
shim=$("$ampctl" which | head -1)
check "which names an existing libampshim.so" test -r "$shim" -a "${shim##*/}" = libampshim.so
check "which names the audit module beside it" \
    test "$("$ampctl" which | sed -n 2p)" = "${shim%/*}/libampshim-audit.so"
check "which --json" sh -c "'$ampctl' --json which | grep -q '\"libampshim\": \"$shim\"'"
out=$("$ampctl" run sh -c 'echo "${LD_PRELOAD##* }"')
check "run CMD without --: the command runs under the shim ($out)" test "$out" = "$shim"
out=$("$ampctl" run -- sh -c 'echo "${LD_PRELOAD##* }"')
check "run -- CMD" test "$out" = "$shim"
out=$("$ampctl" run --policy cpu:mm=fp32 sh -c 'echo "$AMPSHIM_POLICY $0 $1"' --json x)
check "run's options, then the command's own (--json passed on): $out" \
    test "$out" = "cpu:mm=fp32 --json x"
out=$("$ampctl" --json run printf '[%s]' a b)
check "--json before run: the command's arguments once each ($out)" test "$out" = "[a][b]"
out=$("$ampctl" --json run --json printf '[%s]' a b)
check "--json twice: the same ($out)" test "$out" = "[a][b]"
"$ampctl" run >/dev/null 2>&1
check "run without a command is a usage error (2)" test $? -eq 2
v=$("$ampctl" --version)
check "--version ($v)" sh -c "echo '$v' | grep -q '^ampctl [0-9][0-9.]* (libampshim.so: $shim)$'"

if command -v man >/dev/null 2>&1; then
    warn=$(env -u LD_PRELOAD MANWIDTH=80 man -l "$page" 2>&1 >/dev/null)
    check "ampctl(1) at 80 columns: no groff warning${warn:+ ($warn)}" test -z "$warn"
else
    echo "skip: ampctl(1) at 80 columns (no man here)"
fi

# A staged install: ampctl finds its own install's library.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if env -u LD_PRELOAD meson install -C "$build" --no-rebuild --quiet --destdir "$stage" >"$stage.log" 2>&1; then
    staged=$(find "$stage" -path '*/bin/ampctl' | head -1)
    lib=$("$staged" which | head -1)
    check "a staged install's ampctl finds its own library ($lib)" \
        sh -c "case '$lib' in '$stage'/*/libampshim.so) true;; *) false;; esac"
    out=$("$staged" run sh -c 'echo "${LD_PRELOAD##* }"')
    check "... and runs a command under it" test -n "$lib" -a "$out" = "$lib"
    out=$("$staged" run -- sh -c 'echo "${LD_PRELOAD##* }"')
    check "... with -- too" test -n "$lib" -a "$out" = "$lib"
    # Issue 51, item 1: a library planted two levels above bin (the build
    # tree's place: a prefix right inside a shared folder) is not taken
    # outside a build tree, nor one another user owns or could replace.
    planted=${staged%/bin/ampctl}/../libampshim.so
    cp "$lib" "$planted" && chmod 644 "$planted"
    check "a library planted above the install prefix is not taken" \
        test "$("$staged" which | head -1)" = "$lib"
    rm -f "$planted"
    if [ "$(id -u)" = 0 ]; then
        chown 65534 "$lib"
        out=$("$staged" which 2>/dev/null | head -1)
        check "... nor its own install's library once another user owns it ($out)" \
            test "$out" != "$lib"
        chown 0 "$lib"
    fi
    # Only what a user runs: the libraries, ampctl, headers, pkg-config
    # files and man pages; no test, benchmark or example.
    extra=$(find "$stage" -type f -o -type l | sed "s|^$stage||" | grep -v \
        -e '/bin/ampctl$' -e '/include/amp[a-z_]*\.h$' -e '/lib/.*/libamp[a-z-]*\.so[0-9.]*$' \
        -e '/pkgconfig/amp[a-z]*\.pc$' -e '/man/man[137]/amp[a-z_]*\.[137]$')
    check "the installed tree holds nothing else${extra:+: $extra}" test -z "$extra"
    pc=$(find "$stage" -name ampshim.pc | head -1)
    if command -v pkg-config >/dev/null 2>&1 && [ -n "$pc" ]; then
        preload=$(PKG_CONFIG_PATH=${pc%/*} pkg-config --variable=preload ampshim)
        check "ampshim.pc names the preload library ($preload), the one ampctl which finds" \
            test -n "$preload" -a "$stage$preload" = "$lib" -a -r "$stage$preload"
    else
        check "ampshim.pc is installed" test -n "$pc"
    fi
else
    cat "$stage.log"
    check "meson install --destdir" false
fi
rm -f "$stage.log"
exit $fail
