#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds the Debian packages rtrs-server-dkms and rtrs-server-tools from the
# working tree with dpkg-buildpackage, into build/deb/ (or OUT), and runs
# lintian on them. Installs the build dependencies with apt first when they
# are missing (which needs root).
# Usage: tools/build-deb.sh [--no-lintian] [OUT]
#   --no-lintian: no lintian (the package test on another release's root,
#   which has none; lintian's verdict is Debian 12's)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
lintian=lintian
[ "${1:-}" = --no-lintian ] && { lintian=; shift; }
out=${1:-$top/build/deb}

# On Debian 12 dh_dkms is in dh-dkms; on older releases, in dkms itself.
dh_dkms_pkg=dkms
if dpkg-query -W dh-dkms >/dev/null 2>&1 || apt-cache show dh-dkms >/dev/null 2>&1; then
	dh_dkms_pkg=dh-dkms
fi
deps="build-essential dpkg-dev debhelper $dh_dkms_pkg cmake g++ $lintian"
missing=""
for p in $deps; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "build-deb.sh: missing$missing; install them as root (apt-get install$missing)" >&2
		exit 1
	fi
	echo "build-deb.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/rtrs-server-$version
echo "build-deb.sh: building rtrs-server $version in $out"
rm -rf "$src"
mkdir -p "$src"
# The working tree as it is (tracked files and new ones), without what git
# ignores: no build folders, no objects of an in-place module build.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard) |
		(cd "$top" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
		tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -
else
	(cd "$top" && tar -c --exclude=./build --exclude='./build-*' --exclude=./.git \
		--exclude='*.o' --exclude='*.ko' --exclude='*.cmd' .) | tar -x -C "$src"
fi

(cd "$src" && dpkg-buildpackage -us -uc -b -j2)

changes=$out/rtrs-server_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).changes
echo "build-deb.sh: packages:"
ls -1 "$out"/*.deb
if [ -z "$lintian" ]; then
	echo "build-deb.sh: done (no lintian asked): $out"
	exit 0
fi
echo "== lintian"
# Fails on an error; warnings and the informational tags are only shown.
lintian --info --display-info --pedantic "$changes"
echo "build-deb.sh: done: $out"
