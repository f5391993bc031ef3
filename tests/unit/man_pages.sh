#!/bin/sh
# No man page makes man look for a file to include: a source line that
# starts with a dot and a name is a request, and ".so.12)," (in ampshim(7)
# once) was read as an include, man printed "can't open .12),", and the
# sentence lost its text. Each page is rendered (man -l) and must not say
# it cannot open something, and no source line starts with ".so", which
# none of ours means. Its EXAMPLES fit 80 columns. (ampctl(1) also renders without any warning at 80
# columns: tests/control/ampctl_run_which.sh; ampshim(7)'s wide tables do
# not yet.)
# usage: man_pages.sh PAGE...
command -v man >/dev/null 2>&1 || { echo "no man: skipped"; exit 77; }
failed=0
for page in "$@"; do
    opened=$(env -u LD_PRELOAD MANWIDTH=80 man -l "$page" 2>&1 >/dev/null | grep -i "open")
    if [ -n "$opened" ]; then
        echo "FAIL ${page##*/}: $opened"
        failed=$((failed + 1))
    fi
    if grep -n '^\.so' "$page"; then
        echo "FAIL ${page##*/}: a line starts with .so (an include request)"
        failed=$((failed + 1))
    fi
    # An example a reader copies fits an 80-column terminal.
    wide=$(env -u LD_PRELOAD MANWIDTH=80 man -l "$page" 2>/dev/null |
        sed -n '/^EXAMPLES/,/^[A-Z]/p' | awk 'length > 80')
    if [ -n "$wide" ]; then
        echo "FAIL ${page##*/}: EXAMPLES lines past 80 columns:"
        echo "$wide"
        failed=$((failed + 1))
    fi
done
echo "man_pages: $# pages, $failed failed"
[ $failed -eq 0 ]
