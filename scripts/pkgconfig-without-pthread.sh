#!/bin/sh
# Usage: scripts/pkgconfig-without-pthread.sh DIR (absolute), then PKG_CONFIG_PATH=DIR swift build ...
#
# Why: SwiftPM reads .pc files itself and passes on only -I/-F from Cflags and -L/-l/-F/-framework/-w
# from Libs; anything else is dropped with "warning: prohibited flag(s)" on every build, and there is
# no SwiftPM option to allow or silence it. glib (gthread-2.0, gmodule-no-export-2.0) and OpenEXR put
# -pthread in their Cflags, which reach CVips (vips) and CPoppler (poppler-glib) through Requires;
# Debian's hiredis.pc (CHiredis) has -D_FILE_OFFSET_BITS=64.
# This writes DIR/vips.pc, DIR/poppler-glib.pc and DIR/hiredis.pc holding the flags pkg-config resolves
# for the system's files, those two removed; SwiftPM looks in PKG_CONFIG_PATH first. The compile and link
# commands stay the same as before: SwiftPM already dropped both flags, glibc >= 2.34 has pthreads
# in libc, and off_t is 64 bits on every 64-bit Debian port anyway (nor does hiredis's API hold one).
# Used by the Makefile (build, test, bench) and the Dockerfile; DIR is never committed.
set -eu
dir=$1
# Ask about the system's .pc files, never about the copies an earlier run left in DIR.
PKG_CONFIG_PATH=$(printf '%s\n' "${PKG_CONFIG_PATH:-}" | tr : '\n' | grep -vxF -e "$dir" -e '' | paste -sd: -)
export PKG_CONFIG_PATH
mkdir -p "$dir"
without_pthread() {
    pkg-config "$@" | tr ' ' '\n' | grep -vx -e -pthread -e -D_FILE_OFFSET_BITS=64 -e '' | paste -sd' ' -
}
for name in vips poppler-glib hiredis; do  # the pkgConfig names of Package.swift's CVips, CPoppler, CHiredis
    version=$(pkg-config --print-errors --modversion "$name")  # fails here if it is not installed
    cat > "$dir/$name.pc" <<PC
# Written by scripts/pkgconfig-without-pthread.sh from the system's $name.pc: do not edit.
Name: $name
Description: $name's flags without -pthread and -D_FILE_OFFSET_BITS=64, for SwiftPM
Version: $version
Cflags: $(without_pthread --cflags "$name")
Libs: $(without_pthread --libs "$name")
PC
done
