#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs a command in the root tree of a Debian release (tools/roots/make-root.sh),
# so that it builds with that release's compiler, headers and libraries; for
# bookworm (the host's own release) it just runs the command.
#
# Usage: in-root.sh RELEASE [--bind DIR]... -- COMMAND [ARGS...]
#   --bind DIR  DIR is seen at the same path in the root (read-write); the
#               checkout and the build folder, so that paths stay the same
# The root's /proc and /dev are the host's, in a mount namespace of the
# command's own: nothing stays mounted when it ends. The command sees
# RTRS_ROOT_RELEASE=RELEASE.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/releases.sh"

usage() { echo "usage: $0 RELEASE [--bind DIR]... -- COMMAND [ARGS...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
release=$1
shift
rtrs_release_series "$release" >/dev/null || { echo "in-root.sh: unknown release $release" >&2; exit 2; }
binds=
while [ $# -gt 0 ]; do
	case $1 in
	--bind)
		[ $# -ge 2 ] || usage
		d=$(cd "$2" && pwd -P) || { echo "in-root.sh: no folder $2" >&2; exit 2; }
		binds="$binds $d"
		shift 2 ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -ge 1 ] || usage

if [ "$release" = bookworm ]; then
	exec "$@"
fi
root=$(rtrs_release_root "$release")
[ -f "$root/.rtrs-root" ] || { echo "in-root.sh: no root of $release in $root (tools/roots/make-root.sh $release)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "in-root.sh: run as root (chroot)" >&2; exit 1; }
for d in $binds; do
	case "$d" in *[[:space:]]*) echo "in-root.sh: '$d' has white space in it" >&2; exit 2 ;; esac
done

# The mounts are made in a private mount namespace and go with it.
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private sh -c '
	set -e
	root=$1 binds=$2 release=$3
	shift 3
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	for d in $binds; do
		mkdir -p "$root$d"
		mount --bind "$d" "$root$d"
	done
	cwd=$(pwd -P)
	[ -d "$root$cwd" ] || cwd=/
	exec chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C TERM=dumb RTRS_ROOT_RELEASE=$release \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c "cd \"\$1\" && shift && exec \"\$@\"" sh "$cwd" "$@"
' sh "$root" "$binds" "$release" "$@"
