#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds rtrs-server-kunit.ko against a kernel build folder (the debug
# kernel's, normally) in a folder of its own, and fails on any warning.
#
# Usage: test/kunit/build.sh [--src TOP] KERNEL_BUILD_DIR OUTDIR
#   --src TOP   take src/, include/, Kbuild, tools/ (and test/kunit/, if TOP
#               has one) from TOP instead of this checkout: a scratch copy
#               with a deliberate bug, say
#
# OUTDIR gets: Kbuild (test/kunit/Kbuild), Kbuild.top (the top-level Kbuild
# without its module lists), src/, include/, tools/check-cxx-object.sh,
# test/kunit/*.{c,cpp,h}, and the result, OUTDIR/rtrs-server-kunit.ko.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
if [ "${1:-}" = --src ]; then
	top=$(cd "$2" && pwd)
	shift 2
fi
[ $# = 2 ] || { echo "usage: $0 [--src TOP] KERNEL_BUILD_DIR OUTDIR" >&2; exit 2; }
kdir=$1 out=$2
[ -f "$kdir/Makefile" ] && [ -f "$kdir/Module.symvers" ] ||
	{ echo "$kdir is not a built kernel tree (no Makefile or Module.symvers)" >&2; exit 1; }
grep -q '^CONFIG_KUNIT=y' "$kdir/.config" ||
	{ echo "$kdir: the kernel has no CONFIG_KUNIT=y" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Copies over what an earlier build left, so Kbuild rebuilds only what changed.
for item in src include tools/check-cxx-object.sh; do
	mkdir -p "$out/$(dirname "$item")"
	cp -a "$top/$item" "$out/$(dirname "$item")/"
done
tests=$here
[ -f "$top/test/kunit/Kbuild" ] && tests=$top/test/kunit
mkdir -p "$out/test/kunit"
for f in "$tests"/*.c "$tests"/*.cpp "$tests"/*.h; do
	[ -e "$f" ] && cp -a "$f" "$out/test/kunit/"
done
cp -a "$tests/Kbuild" "$out/Kbuild"
# The top-level Kbuild without the lists of what rtrs-server.ko and
# rtrs-null.ko are made of: its flags and rules apply, its modules are not
# built here.
awk '
	cont { cont = /\\$/; next }
	/^obj-m[ \t]*[+:]?=/ || /^rtrs-[A-Za-z0-9_-]*-(y|objs)[ \t]*[+:]?=/ { cont = /\\$/; next }
	{ print }
' "$top/Kbuild" >"$out/Kbuild.top.tmp"
if ! cmp -s "$out/Kbuild.top.tmp" "$out/Kbuild.top" 2>/dev/null; then
	mv "$out/Kbuild.top.tmp" "$out/Kbuild.top"
else
	rm -f "$out/Kbuild.top.tmp"
fi

log=$out/build.log
echo "building rtrs-server-kunit.ko against $kdir in $out"
if ! nice -n 19 make -C "$kdir" M="$out" -j"${RTRS_KUNIT_JOBS:-2}" modules >"$log" 2>&1; then
	cat "$log"
	echo "FAIL: KUnit module build failed" >&2
	exit 1
fi
cat "$log"
if grep -Ein 'warning|error' "$log"; then
	echo "FAIL: the KUnit module build printed the warnings above" >&2
	exit 1
fi
test -f "$out/rtrs-server-kunit.ko"
echo "ok: $out/rtrs-server-kunit.ko"
