#!/bin/sh
# Run by `meson install` (not with --destdir): refresh the dynamic loader's
# cache, so the bare LD_PRELOAD=libampshim.so finds the new library, where
# that can work: root installing into a folder the loader searches
# (Debian's /usr/local/lib/x86_64-linux-gnu). Elsewhere it says what to do
# (meson 1.0 shows an install script's output only when it fails: run it by
# hand to read it).
# usage: install-ldconfig.sh LIBDIR
libdir=$1
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
if ! "$ldconfig" -Nv 2>/dev/null | grep -q "^$libdir:"; then
    echo "ampshim: $libdir is not a folder the dynamic loader searches:" \
        "preload it by its full path, LD_PRELOAD=$libdir/libampshim.so" \
        "(ampctl which prints it; ampctl run uses it)"
elif [ "$(id -u)" != 0 ]; then
    echo "ampshim: run ldconfig as root so that LD_PRELOAD=libampshim.so finds $libdir/libampshim.so"
elif "$ldconfig"; then
    echo "ampshim: ldconfig: LD_PRELOAD=libampshim.so finds $libdir/libampshim.so"
fi
exit 0
