# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by the benchmarks' guest scripts (sourced after test/guest/lib.sh;
# runs in the QEMU guest). They set ours (our module's folder), peers (the
# upstream peers' folder) and, for a baseline build in upstream's place,
# baseline.
# shellcheck disable=SC2154

# bench_setup [NULL_BLK PARAMS...]: soft-RoCE, a null_blk, upstream's
# client side (rtrs-core, rtrs-client, rnbd-client) and what our module
# depends on.
bench_setup() {
	local m
	rxe_up || return 1
	modprobe null_blk "$@" || return 1
	for m in src/rtrs/rtrs-core src/rtrs/rtrs-client src/rnbd/rnbd-client; do
		insmod "$peers/$m.ko" || return 1
	done
	load_deps "$ours/rtrs-server.ko"
}

# load_stack ours|upstream Y|N: that server with always_invalidate Y or N,
# and upstream rnbd-server on it (upstream: the baseline build of ours
# instead, when one is given).
load_stack() {
	if [ "$1" = ours ]; then
		insmod "$ours/rtrs-server.ko" always_invalidate="$2" &&
			insmod "$peers/rnbd-against/rnbd-server.ko"
	elif [ -n "${baseline:-}" ]; then
		insmod "$baseline/rtrs-server.ko" always_invalidate="$2" &&
			insmod "$peers/rnbd-against/rnbd-server.ko"
	else
		insmod "$peers/src/rtrs/rtrs-server.ko" always_invalidate="$2" &&
			insmod "$peers/src/rnbd/rnbd-server.ko"
	fi
}

# unload_stack: rnbd_server and rtrs_server, whichever is loaded (a session
# may still be closing: retry for a while).
unload_stack() {
	local m
	for m in rnbd_server rtrs_server; do
		wait_for 10 unloaded "$m"
		[ -e /sys/module/$m ] && { echo "[bench] cannot unload $m"; return 1; }
	done
	return 0
}
# unloaded MODULE: MODULE is not loaded, or rmmod unloads it now.
unloaded() { [ ! -e "/sys/module/$1" ] || rmmod "$1" 2>/dev/null; }
