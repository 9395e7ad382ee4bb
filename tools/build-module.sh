#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds the test variant of the module for one kernel (make RTRS_TEST_BUILD=1,
# see Kbuild: rtrs-server.ko open to fail_function, and rtrs-null.ko), which
# the tests load, in a folder of its own (Kbuild builds in the source folder,
# so the sources are copied there first), with the standard out-of-tree
# command, and fails on any warning in the build output.
# Usage: build-module.sh [--kdir DIR] [--shipped] KVER OUTDIR
#   KVER        a kernel version, or a series (6.1: the newest installed)
#   --kdir DIR  the kernel build folder (default /lib/modules/KVER/build), e.g.
#               the debug kernel's (tools/debug-kernel/build.sh)
#   --shipped   the shipped variant instead, as DKMS builds it: rtrs-server.ko
#               alone, no error injection
set -eu
usage="usage: $0 [--kdir DIR] [--shipped] KVER OUTDIR"
kdir='' variant=RTRS_TEST_BUILD=1
while [ $# -gt 2 ]; do
	case $1 in
	--kdir) kdir=$2; shift 2 ;;
	--shipped) variant=; shift ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
kver=$1 out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
case $kver in *.*.*) ;; *) kver=$("$top/tools/kernels.sh" --series "$kver") ;; esac
[ -n "$kdir" ] || kdir=/lib/modules/$kver/build
[ -d "$kdir" ] || { echo "no kernel headers for $kver at $kdir" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out" in *[[:space:]]*)
	echo "build-module.sh: $out has white space in it, which Kbuild cannot build in: use a folder without" >&2
	exit 1 ;;
esac
# Keep what an earlier build made, so that Kbuild rebuilds only what changed.
for item in Kbuild Makefile src include tools/check-cxx-object.sh; do
	mkdir -p "$out/$(dirname "$item")"
	cp -a "$top/$item" "$out/$(dirname "$item")/"
done
log=$out/build.log
echo "building rtrs-server.ko (${variant:-shipped}) for $kver in $out with $(${CC:-gcc} --version | head -n 1)"
# The other variant's objects and modules must not be mistaken for these.
if [ "$(cat "$out/variant" 2>/dev/null)" != "${variant:-shipped}" ]; then
	make -C "$kdir" M="$out" clean >/dev/null 2>&1 || true
	echo "${variant:-shipped}" >"$out/variant"
fi
# shellcheck disable=SC2086
if ! make -C "$kdir" M="$out" -j"$(nproc)" $variant modules >"$log" 2>&1; then
	cat "$log"
	echo "FAIL: module build for $kver failed" >&2
	exit 1
fi
cat "$log"
if grep -Ein 'warning|error' "$log"; then
	echo "FAIL: module build for $kver printed the warnings above" >&2
	exit 1
fi
if [ -n "$variant" ]; then
	test -f "$out/rtrs-server.ko" && test -f "$out/rtrs-null.ko"
	echo "ok: $out/rtrs-server.ko $out/rtrs-null.ko"
else
	test -f "$out/rtrs-server.ko" && test ! -e "$out/rtrs-null.ko"
	echo "ok: $out/rtrs-server.ko"
fi
