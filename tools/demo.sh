#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: installs what it needs, builds rtrs-server.ko, rtrs-srv and
# the upstream RTRS/RNBD peers (from Debian's linux-source, rnbd-server
# against our Module.symvers), boots Debian's kernel in a QEMU guest and runs
# test/guest/demo.sh there: upstream rnbd-server on OUR rtrs-server exports a
# RAM disk, upstream rnbd-client maps it over two soft-RoCE paths, data is
# written, read back and compared, the counters are shown, a path is
# disconnected through our sysfs and comes back, and everything is unloaded.
# KVER picks the kernel (default: the 6.1 one); RTRS_BUILD_DIR the build
# folder (default: build/ in this checkout).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${RTRS_BUILD_DIR:-$top/build}
for dir in "$top" "$build"; do
	case "$dir" in *[[:space:]]*)
		echo "${0##*/}: '$dir' has white space in it, which Kbuild cannot build in: use a folder without" >&2
		exit 1 ;;
	esac
done
if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh
fi
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
mkdir -p "$build"
build=$(cd "$build" && pwd)
moddir=$build/module/$kver
peers=$build/peers/$kver

echo "== building rtrs-srv, rtrs-server.ko for $kver, the upstream peers"
cmake -S "$top" -B "$build" -DRTRS_KERNELS="$kver" >/dev/null
cmake --build "$build" -j"$(nproc)" --target rtrs-srv
tools/build-module.sh "$kver" "$moddir"
tools/upstream/build-peers.sh --rnbd-server-against "$moddir" "$kver" "$peers"

echo "== booting $kver in QEMU for the demo"
# loglevel=4: a quiet boot (the demo shows the kernel's messages again once
# it runs); the whole kernel log is still saved and checked. The kernel's
# "Run /init" line is then not on the console, but run-guest's boot-stall
# watch also ends at the line the guest's /init prints itself
# ("rtrsvm-init: started"), so a demo may run as long as it needs.
exec tools/vm/run-guest --kver "$kver" --out "$build/vm/demo-$kver" --append "loglevel=4" \
	-- "$top/test/guest/demo.sh" "$moddir" "$peers" "$build/tools/rtrs-srv/rtrs-srv"
