#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One version everywhere: Kbuild's RTRS_SERVER_VERSION is the version of
# dkms.conf, of debian/changelog (its upstream part), of the man page and of
# rtrs-srv --version.
# Usage: version_test.sh SOURCE_DIR RTRS_SRV_BINARY
set -eu
top=$1 bin=$2
v=$(sed -n 's/^RTRS_SERVER_VERSION[[:blank:]]*:=[[:blank:]]*//p' "$top/Kbuild")
[ -n "$v" ] || { echo "FAIL: no RTRS_SERVER_VERSION in Kbuild"; exit 1; }
fails=0
check() {
	if [ "$2" = "$v" ]; then
		echo "ok: $1 is $v"
	else
		echo "FAIL: $1 is '$2', Kbuild says '$v'"
		fails=$((fails + 1))
	fi
}
check dkms.conf "$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$top/dkms.conf")"
# (its upstream part: without a Debian revision, if any)
check debian/changelog "$(sed -n '1s/^[^(]*(\([^)-]*\)\(-[^)]*\)\{0,1\}).*/\1/p' "$top/debian/changelog")"
check rtrs-srv.8 "$(sed -n 's/^\.TH .*"rtrs-server \([^"]*\)".*/\1/p' "$top/tools/rtrs-srv/rtrs-srv.8")"
check "rtrs-srv --version" "$("$bin" --version | sed 's/^rtrs-srv //')"
[ "$fails" -eq 0 ]
