#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Makes (or finds, cached) the root tree of one Debian release from Debian's
# package registry with mmdebstrap: that release's kernel image and headers,
# its compiler, rdma-core, GoogleTest, its linux-source (the upstream RTRS
# and RNBD peers) and what the guest suites run. The module, the peers and
# the userspace tools for that release are built in it (tools/roots/in-root.sh)
# and its kernel boots with it as the guest's root (tools/vm/run-guest --root).
#
# Usage: make-root.sh RELEASE        (bullseye, trixie or sid; as root)
# The root is $RTRS_ROOTS_DIR/RELEASE (default ~/.cache/rtrs-roots); it is
# made again when its recipe (below) changed or it is older than 30 days.
# Prints the kernel version it holds on its last line.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/releases.sh"

[ $# -eq 1 ] || { echo "usage: $0 RELEASE" >&2; exit 2; }
release=$1
series=$(rtrs_release_series "$release") || { echo "make-root.sh: unknown release $release" >&2; exit 2; }
[ "$release" != bookworm ] || { echo "make-root.sh: bookworm is the host's own root" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "make-root.sh: run as root (mmdebstrap, chroot)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "make-root.sh: mmdebstrap missing (tools/install-deps.sh)" >&2; exit 1; }

mirror=${RTRS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What the root holds: the kernel and what builds against it (its headers
# pull its compiler and kbuild), the peers' sources, the userspace build
# (rtrs-client, the ABI suite, rtrs-srv), what the guest suites call, and
# what builds our Debian packages and installs them with DKMS (the package
# test; dh_dkms is in dkms itself up to bullseye), and sparse (the module's
# C files against the release's headers: tools/checks/module-lint.sh).
dh_dkms=dh-dkms
[ "$release" = bullseye ] && dh_dkms=
packages="linux-image-amd64 linux-headers-amd64 linux-source-$series
	build-essential gcc g++ make cmake pkg-config libc6-dev kmod xz-utils dwarves
	rdma-core ibverbs-providers libibverbs-dev librdmacm-dev
	libgtest-dev iproute2 procps util-linux fio dmsetup python3
	dkms debhelper dpkg-dev $dh_dkms sparse"
# What the root is made of: a root made by another recipe is made again.
# Bump recipe_version when the mmdebstrap command below changes.
recipe_version=2
recipe=$(echo "$recipe_version $release $mirror" $packages | sha256sum | cut -c1-16)

top=$(rtrs_roots_dir)
root=$top/$release
stamp=$root/.rtrs-root
mkdir -p "$top"
# One maker a release at a time (tools/run-tests.sh starts them early, in
# the background; ctest's root.SERIES then finds the root made, or waits).
exec 9>"$top/.$release.lock"
flock 9
# kver_of ROOT: the newest kernel of ROOT with its headers (build is an
# absolute link, to be read inside ROOT).
kver_of() {
	for d in "$1"/lib/modules/*/; do
		v=${d%/}
		v=${v##*/}
		[ -d "$1/usr/src/linux-headers-$v" ] && [ -f "$1/boot/vmlinuz-$v" ] && echo "$v"
	done | sort -V | tail -n 1
}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ] &&
	[ -z "$(find "$stamp" -mtime +30)" ] && [ -n "$(kver_of "$root")" ]; then
	echo "root of $release: $root (cached)"
	kver_of "$root"
	exit 0
fi

# Made next to its place and moved there whole: a run stopped half way
# leaves no root that looks finished.
tmp=$top/.$release.tmp
# A make killed mid-way (the test command stopped) leaves mmdebstrap's
# mounts in its root (proc, sys, dev/pts, dev/shm), which rm -rf cannot
# remove (and must not walk into): take them away first, the deepest first.
unmount_below() {
	local d
	[ -e "$1" ] || return 0
	d=$(realpath "$1")
	awk -v d="$d" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts |
		sort -r | while read -r m; do
			echo "make-root.sh: unmounting $m (left by a make that was stopped)"
			umount -l "$m"
		done
}
unmount_below "$tmp"
unmount_below "$root.old"
rm -rf "$tmp" "$root.old"
echo "making the root of $release ($series) in $root from $mirror (a few minutes)"
start=$(date +%s)
# No documentation or translations (the package test looks for our man
# page: man pages stay). update-initramfs is diverted to true: nothing
# boots the root's initramfs (run-guest makes its own), and making one for
# the kernel takes minutes. The registry is a snapshot, so an expired
# Release file (sid's) is fine.
# shellcheck disable=SC2086
mmdebstrap --variant=minbase --mode=root --components=main \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--essential-hook='chroot "$1" dpkg-divert --quiet --local --rename --add /usr/sbin/update-initramfs && ln -s /bin/true "$1/usr/sbin/update-initramfs"' \
	--include="$(echo $packages | tr ' ' ',')" \
	"$release" "$tmp" "$mirror"
kver=$(kver_of "$tmp")
[ -n "$kver" ] || { echo "make-root.sh: no kernel headers in the new root of $release" >&2; exit 1; }
[ -f "$tmp/boot/vmlinuz-$kver" ] || { echo "make-root.sh: no /boot/vmlinuz-$kver in the new root" >&2; exit 1; }
ls "$tmp/usr/src/linux-source-$series.tar.xz" >/dev/null
echo "$recipe" >"$tmp/.rtrs-root"
[ -d "$root" ] && unmount_below "$root" && mv "$root" "$root.old"
mv "$tmp" "$root"
rm -rf "$root.old"
echo "root of $release made in $(($(date +%s) - start)) s: kernel $kver"
echo "$kver"
