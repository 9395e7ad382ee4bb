#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernels the tests target.
#
# kernels.sh [--require]: the host's own (Debian 12's), one a line: the
#   newest installed 6.1 with its headers and image. With --require, fails
#   when there is none.
# kernels.sh [--root DIR] --series SERIES: the newest kernel of SERIES (5.10,
#   6.1, 6.12, 7.2) installed in DIR (default /: the system it runs on,
#   which is a release's root under tools/roots/in-root.sh) with its headers
#   and image; fails when there is none. The other releases' kernels live in
#   their roots (tools/roots/make-root.sh), not on the host.
set -eu
require=0 series='' root=
while [ $# -gt 0 ]; do
	case $1 in
	--require) require=1; shift ;;
	--series) series=$2; shift 2 ;;
	--root) root=${2%/}; shift 2 ;;
	*) echo "usage: $0 [--require] | [--root DIR] --series SERIES" >&2; exit 2 ;;
	esac
done
# newest SERIES: the newest kernel of SERIES in $root with headers and image
# (build is an absolute link, to be read inside the root).
newest() {
	ls -1 "$root/lib/modules" 2>/dev/null | grep -E "^$(echo "$1" | sed 's/\./\\./g')\.[0-9]" |
		while read -r k; do
			[ -d "$root/usr/src/linux-headers-$k" ] || [ -d "$root/lib/modules/$k/build" ] || continue
			[ -f "$root/boot/vmlinuz-$k" ] && echo "$k"
		done | sort -V | tail -n 1
}
if [ -n "$series" ]; then
	v=$(newest "$series")
	[ -n "$v" ] || { echo "kernels.sh: no $series kernel with headers in ${root:-/}" >&2; exit 1; }
	echo "$v"
	exit 0
fi
v=$(newest 6.1)
if [ -n "$v" ]; then
	echo "$v"
elif [ $require = 1 ]; then
	echo "kernels.sh: no 6.1 kernel with headers installed (tools/install-deps.sh installs it)" >&2
	exit 1
fi
[ -n "$v" ]
