#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: installs what it needs, builds rtrs-server.ko (the shipped
# build, as DKMS and the .deb build it: no rtrs-null.ko, no fault-injection
# points), rtrs-srv and the upstream RTRS/RNBD peers (from Debian's linux-source, rnbd-server
# against our Module.symvers), boots Debian's kernel in a QEMU guest and runs
# test/guest/demo.sh there: upstream rnbd-server on OUR rtrs-server exports a
# RAM disk, upstream rnbd-client maps it over two soft-RoCE paths, data is
# written, read back and compared, the counters are shown, a path is
# disconnected through our sysfs and comes back, and everything is unloaded.
# The kernel is Debian 12's own (6.1) unless --release names another Debian
# release (bullseye 5.10, trixie 6.12, sid 7.2): its root is then made from
# Debian's registry (tools/roots/make-root.sh, a few minutes the first time),
# the module, the peers and rtrs-srv are built there by its compiler, and
# its kernel boots with that root. RTRS_BUILD_DIR: the build folder
# (default: build/ in this checkout).
# Usage: tools/demo.sh [--release bookworm|bullseye|trixie|sid]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. tools/roots/releases.sh
release=bookworm
case "${1:-}" in
--release) release=${2:?--release needs a release}; shift 2 ;;
--release=*) release=${1#--release=}; shift ;;
"") ;;
*) echo "usage: $0 [--release bookworm|bullseye|trixie|sid]" >&2; exit 2 ;;
esac
series=$(rtrs_release_series "$release") ||
	{ echo "${0##*/}: unknown release '$release' (bookworm bullseye trixie sid)" >&2; exit 2; }
build=${RTRS_BUILD_DIR:-$top/build}
for dir in "$top" "$build"; do
	case "$dir" in *[[:space:]]*)
		echo "${0##*/}: '$dir' has white space in it, which Kbuild cannot build in: use a folder without" >&2
		exit 1 ;;
	esac
done
if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh --demo
fi
mkdir -p "$build"
build=$(cd "$build" && pwd)
# The shipped build has a folder of its own (tools/build-module.sh cleans a
# folder whose build was the other one; the tests' build is in module/).
moddir=$build/module-shipped/$series
peers=$build/peers/$series

guest_root=()
if [ "$release" = bookworm ]; then
	inroot=()
	echo "== building rtrs-srv, rtrs-server.ko for $series, the upstream peers"
	# rtrs-srv on its own, as the Debian package builds it (no test
	# frameworks needed)
	cmake -S "$top/tools/rtrs-srv" -B "$build/demo-rtrs-srv" >/dev/null
	cmake --build "$build/demo-rtrs-srv" -j"$(nproc)"
	cli=$build/demo-rtrs-srv/rtrs-srv
else
	echo "== the root of $release ($series)"
	tools/roots/make-root.sh "$release"
	inroot=(tools/roots/in-root.sh "$release" --bind "$top" --bind "$build" --)
	guest_root=(--root "$(rtrs_release_root "$release")" --bind "$top" --bind "$build")
	echo "== building rtrs-srv, rtrs-server.ko for $series, the upstream peers, in the root of $release"
	"${inroot[@]}" tools/roots/build-tools.sh "$build/tools/$series"
	cli=$build/tools/$series/tools/rtrs-srv/rtrs-srv
fi
"${inroot[@]}" tools/build-module.sh --shipped "$series" "$moddir"
"${inroot[@]}" tools/upstream/build-peers.sh --rnbd-server-against "$moddir" "$series" "$peers"

echo "== booting $series in QEMU for the demo"
# loglevel=4: a quiet boot (the demo shows the kernel's messages again once
# it runs); the whole kernel log is still saved and checked. The kernel's
# "Run /init" line is then not on the console, but run-guest's boot-stall
# watch also ends at the line the guest's /init prints itself
# ("rtrsvm-init: started"), so a demo may run as long as it needs.
exec tools/vm/run-guest --kver "$series" "${guest_root[@]}" --out "$build/vm/demo-$series" \
	--append "loglevel=4" -- "$top/test/guest/demo.sh" "$moddir" "$peers" "$cli"
