#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds the upstream RTRS and RNBD modules (test peers for our server, never
# committed) out of tree from Debian's linux-source package of the kernel's
# series.
#
# Usage: build-peers.sh [--kdir DIR] [--rnbd-server-against DIR] KVER OUTDIR
#   --kdir DIR: the kernel build folder (default /lib/modules/KVER/build),
#     e.g. the debug kernel's (tools/debug-kernel/build.sh)
#   OUTDIR/src/rtrs  rtrs-core.ko rtrs-client.ko rtrs-server.ko
#   OUTDIR/src/rnbd  rnbd-client.ko rnbd-server.ko (on the upstream rtrs)
#   --rnbd-server-against DIR: also builds rnbd-server.ko against the
#     rtrs-server whose Module.symvers is in DIR (ours), in
#     OUTDIR/rnbd-against/ (headers still from upstream's rtrs.h).
# The sources are extracted once; later runs only rebuild.
set -eu

usage() { echo "usage: $0 [--kdir DIR] [--rnbd-server-against DIR] KVER OUTDIR" >&2; exit 2; }

against= kdir=
while [ $# -gt 0 ]; do
	case $1 in
	--kdir) [ $# -ge 2 ] || usage; kdir=$2; shift 2 ;;
	--rnbd-server-against) [ $# -ge 2 ] || usage; against=$2; shift 2 ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage
kver=$1
# a series (6.1) is the newest kernel of it installed
case $kver in *.*.*) ;; *) kver=$("$(dirname "$0")/../kernels.sh" --series "$kver") ;; esac
mkdir -p "$2"
out=$(cd "$2" && pwd)
[ -n "$kdir" ] || kdir=/lib/modules/$kver/build
[ -d "$kdir" ] || { echo "no kernel headers for $kver at $kdir" >&2; exit 1; }

# 6.1.0-57-amd64 -> 6.1, 6.12.117+deb12-amd64 -> 6.12
series=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
tarball=/usr/src/linux-source-$series.tar.xz
[ -f "$tarball" ] || { echo "no $tarball for kernel $kver (install linux-source-$series)" >&2; exit 1; }

src=$out/src
stamp=$src/.extracted-$series
if [ ! -f "$stamp" ]; then
	echo "extracting rtrs and rnbd from $tarball"
	rm -rf "$src"
	mkdir -p "$src/tmp"
	tar -xJf "$tarball" -C "$src/tmp" \
		"linux-source-$series/drivers/infiniband/ulp/rtrs" \
		"linux-source-$series/drivers/block/rnbd"
	mv "$src/tmp/linux-source-$series/drivers/infiniband/ulp/rtrs" "$src/rtrs"
	mv "$src/tmp/linux-source-$series/drivers/block/rnbd" "$src/rnbd"
	rm -rf "$src/tmp"
	touch "$stamp"
fi

# make -C KDIR M=DIR VARS...; the log goes to DIR/build.log, and is shown
# when the build fails.
kbuild() {
	dir=$1; shift
	echo "building $dir"
	if ! make -C "$kdir" M="$dir" -j"$(nproc)" "$@" modules >"$dir/build.log" 2>&1; then
		cat "$dir/build.log" >&2
		echo "FAIL: build in $dir failed (log: $dir/build.log)" >&2
		exit 1
	fi
	# modpost only warns about symbols that nothing exports.
	if grep -q 'undefined!' "$dir/build.log"; then
		cat "$dir/build.log" >&2
		echo "FAIL: undefined symbols in $dir (log: $dir/build.log)" >&2
		exit 1
	fi
}

rtrs=$src/rtrs
kbuild "$rtrs" CONFIG_INFINIBAND_RTRS=m CONFIG_INFINIBAND_RTRS_CLIENT=m \
	CONFIG_INFINIBAND_RTRS_SERVER=m
kbuild "$src/rnbd" CONFIG_BLK_DEV_RNBD_CLIENT=m CONFIG_BLK_DEV_RNBD_SERVER=m \
	"ccflags-y=-I$rtrs" "KBUILD_EXTRA_SYMBOLS=$rtrs/Module.symvers"

for ko in "$rtrs/rtrs-core.ko" "$rtrs/rtrs-client.ko" "$rtrs/rtrs-server.ko" \
	"$src/rnbd/rnbd-client.ko" "$src/rnbd/rnbd-server.ko"; do
	[ -f "$ko" ] || { echo "FAIL: $ko was not built" >&2; exit 1; }
done
echo "upstream rtrs: $rtrs/rtrs-core.ko $rtrs/rtrs-client.ko $rtrs/rtrs-server.ko"
echo "upstream rnbd: $src/rnbd/rnbd-client.ko $src/rnbd/rnbd-server.ko"

if [ -n "$against" ]; then
	against=$(cd "$against" && pwd)
	[ -f "$against/Module.symvers" ] ||
		{ echo "no Module.symvers in $against (build that rtrs-server first)" >&2; exit 1; }
	alt=$out/rnbd-against
	mkdir -p "$alt"
	# Kbuild builds in the source folder: a copy of its own, refreshed.
	cp -a "$src/rnbd/." "$alt/"
	rm -f "$alt"/*.o "$alt"/*.ko "$alt"/*.mod* "$alt"/.*.cmd "$alt/Module.symvers" "$alt/modules.order"
	kbuild "$alt" CONFIG_BLK_DEV_RNBD_SERVER=m \
		"ccflags-y=-I$rtrs" "KBUILD_EXTRA_SYMBOLS=$against/Module.symvers"
	[ -f "$alt/rnbd-server.ko" ] || { echo "FAIL: $alt/rnbd-server.ko was not built" >&2; exit 1; }
	echo "rnbd-server against $against: $alt/rnbd-server.ko"
fi
