#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prints the folder of a release's kernel scripts (checkpatch.pl, its
# spelling list, kernel-doc, checkstack.pl), unpacked once from that
# release's linux-source (/usr/src/linux-source-SERIES.tar.xz, where the
# command runs: the host for 6.1, the release's root for the others:
# tools/roots/in-root.sh) into CACHE/linux-source-SERIES.
#
#   tools/checks/kernel-scripts.sh SERIES CACHE
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SERIES CACHE" >&2; exit 2; }
series=$1 cache=$2
tarball=/usr/src/linux-source-$series.tar.xz
[ -f "$tarball" ] || { echo "FAIL: no $tarball here (the release's linux-source)" >&2; exit 1; }
mkdir -p "$cache"
dir=$cache/linux-source-$series
stamp=$dir/.unpacked
want=$(stat -c '%s %Y' "$tarball")
# One unpacking at a time (checkpatch and kernel-doc may start together).
exec 9>"$cache/.linux-source-$series.lock"
flock 9
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	rm -rf "$dir"
	# scripts/, and tools/ (7.x's kernel-doc is tools/docs/kernel-doc, with
	# its Python in tools/lib/python)
	tar -xJf "$tarball" -C "$cache" --wildcards "linux-source-$series/scripts/*" \
		"linux-source-$series/tools/*" >&2
	echo "$want" >"$stamp"
fi
echo "$dir/scripts"
