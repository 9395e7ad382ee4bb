#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The package test, host side: builds rtrs-server-dkms and rtrs-server-tools
# from the working tree (tools/build-deb.sh, into BUILD_DIR/deb), then boots
# KVER in a QEMU guest where test/pkg/guest.sh installs them with dpkg -i
# (DKMS builds the module for the booted kernel), uses the module and
# rtrs-srv against a live two-path session, and purges them again. Nothing
# is installed on the host: the guest's writes go to its tmpfs overlay.
#
# Usage: test/pkg/run.sh [--release R] [--build-only | --prebuilt] KVER BUILD_DIR CLIENT_BINARY
#   --release R another Debian release (bullseye, trixie, sid): the packages
#               and the test module are built in its root by its tools
#               (tools/roots/in-root.sh; no lintian there, its verdict is
#               bookworm's), and its kernel boots with that root, where
#               DKMS builds the module with its compiler
#   BUILD_DIR   a folder of this test's own (one per kernel if tests run in
#               parallel): deb/ (the packages), deb.log, test-module/ (the
#               test build, for its rtrs-null.ko: the package has none), vm/
#               (the guest's results: console.log, dmesg.txt, dpkg and DKMS
#               logs)
#   --build-only  build the packages, boot nothing (ctest's pkg.build.KVER,
#               which runs beside the guests)
#   --prebuilt  boot with the packages a --build-only run left in BUILD_DIR
# Exit status: run-guest's (0 all passed, 1 a check failed, 3 kernel log
# problem, 124 timeout, 125 guest failure), or 1 if the packages don't build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

. "$top/tools/roots/releases.sh"

mode=all release=bookworm
args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	--build-only) mode=build; shift ;;
	--prebuilt) mode=guest; shift ;;
	--release) release=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ $# -ne 3 ]; then
	echo "usage: $0 [--release R] [--build-only | --prebuilt] KVER BUILD_DIR CLIENT_BINARY" >&2
	exit 2
fi
rtrs_release_series "$release" >/dev/null || { echo "run.sh: unknown release $release" >&2; exit 2; }
guest_root=()
if [ "$release" != bookworm ]; then
	build=$(mkdir -p "$2" && cd "$2" && pwd)
	# The client's folder too: a build folder outside the checkout has it
	# elsewhere.
	clientdir=$(cd "$(dirname "$3")" && pwd) || { echo "run.sh: no folder of $3" >&2; exit 1; }
	# Everything but the boot runs in the release's root.
	if [ "${RTRS_ROOT_RELEASE:-}" != "$release" ] && [ "$mode" != guest ]; then
		"$top/tools/roots/in-root.sh" "$release" --bind "$top" --bind "$build" --bind "$clientdir" -- \
			"$0" "${args[@]}" || exit
		[ "$mode" = build ] && exit 0
		mode=guest
	fi
	if [ "${RTRS_ROOT_RELEASE:-}" != "$release" ]; then
		guest_root=(--root "$(rtrs_release_root "$release")" --bind "$top" --bind "$build" --bind "$clientdir")
	else
		mode=build  # in the root: the boot is the host's
	fi
fi
kver=$1
# a series (6.1) is the newest kernel of it installed
# (another release's boot: run-guest finds it in the root)
if [ ${#guest_root[@]} -eq 0 ]; then
	case $kver in *.*.*) ;; *) kver=$("$top/tools/kernels.sh" --series "$kver") ;; esac
fi
build=$(mkdir -p "$2" && cd "$2" && pwd)
client=$(realpath "$3")

[ -x "$client" ] || { echo "run.sh: no rtrs-client at $client" >&2; exit 1; }
if [ ${#guest_root[@]} -gt 0 ]; then
	# (the root was checked when the packages were built in it; run-guest
	# finds the kernel there)
	out=$build/vm
	rm -rf "$out"
	cd "$top"
	exec "$top/tools/vm/run-guest" --kver "$kver" "${guest_root[@]}" --out "$out" --timeout 2100 \
		-- "$here/guest.sh" "$build/deb" "$client" "$build/test-module/rtrs-null.ko" "$out"
fi
[ -e "/boot/vmlinuz-$kver" ] || { echo "run.sh: no /boot/vmlinuz-$kver" >&2; exit 1; }
[ -d "/lib/modules/$kver/build" ] ||
	{ echo "run.sh: no headers for $kver (/lib/modules/$kver/build)" >&2; exit 1; }

# The guest has no network: what the packages depend on (dkms, g++, make),
# and what guest.sh uses, must already be installed on the host, whose / the
# guest runs on. dkms is the one a development host may lack.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if ! installed dkms; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "run.sh: dkms is not installed; as root: apt-get install dkms" >&2
		exit 1
	fi
	echo "run.sh: installing dkms"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dkms
fi
missing=
for p in g++ make; do
	installed "$p" || missing="$missing $p"
done
for c in python3 setpriv ip rdma modprobe dpkg-deb; do
	command -v "$c" >/dev/null || missing="$missing $c"
done
[ -z "$missing" ] || { echo "run.sh: missing on the host:$missing" >&2; exit 1; }
# The guest is a copy of the host: packages of ours installed here would be
# there too, and the test would not start from a clean system.
if installed rtrs-server-dkms || installed rtrs-server-tools; then
	echo "run.sh: rtrs-server-dkms or rtrs-server-tools is installed on the host;" \
		"the test needs a system without them" >&2
	exit 1
fi

# The packages, always from the working tree as it is now (with
# --prebuilt, as the --build-only run of this test run made them).
deb=$build/deb
if [ "$mode" != guest ]; then
	rm -rf "$deb"
	mkdir -p "$deb"
	echo "run.sh: building the packages into $deb (log: $build/deb.log)"
	t0=$(date +%s)
	nolint=
	[ "$release" != bookworm ] && nolint=--no-lintian
	if ! "$top/tools/build-deb.sh" $nolint "$deb" >"$build/deb.log" 2>&1; then
		tail -n 40 "$build/deb.log"
		echo "run.sh: tools/build-deb.sh failed (see $build/deb.log)" >&2
		exit 1
	fi
	echo "run.sh: packages built in $(($(date +%s) - t0)) s:"
	# The guest's upper layer: rtrs-null.ko, which only the test build makes.
	if ! "$top/tools/build-module.sh" "$kver" "$build/test-module" >"$build/test-module.log" 2>&1; then
		tail -n 40 "$build/test-module.log"
		echo "run.sh: the test build of the module failed (see $build/test-module.log)" >&2
		exit 1
	fi
fi
[ -f "$build/test-module/rtrs-null.ko" ] || { echo "run.sh: no $build/test-module/rtrs-null.ko" >&2; exit 1; }
ls -1 "$deb"/*.deb || { echo "run.sh: no packages in $deb" >&2; exit 1; }
[ "$mode" = build ] && exit 0

out=$build/vm
rm -rf "$out"
cd "$top"
exec "$top/tools/vm/run-guest" --kver "$kver" --out "$out" --timeout 2100 \
	-- "$here/guest.sh" "$deb" "$client" "$build/test-module/rtrs-null.ko" "$out"
