#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prints the kernel versions the tests target, one a line: the newest
# installed 6.1 (Debian 12's stock kernel) and the newest installed 6.12
# (Debian 13's series), each only if its headers are installed too.
# With --require, fails unless both are there.
set -eu
found=""
for series in 6.1 6.12; do
	v=$(ls -1 /lib/modules 2>/dev/null | grep -E "^${series}\.[0-9]" |
		while read -r k; do
			[ -d "/lib/modules/$k/build" ] && [ -f "/boot/vmlinuz-$k" ] && echo "$k"
		done | sort -V | tail -n 1)
	if [ -n "$v" ]; then
		echo "$v"
		found="$found $series"
	elif [ "${1:-}" = "--require" ]; then
		echo "kernels.sh: no $series kernel with headers installed (tools/install-deps.sh installs it)" >&2
		exit 1
	fi
done
[ -n "$found" ]
