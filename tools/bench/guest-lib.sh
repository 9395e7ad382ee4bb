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

# The instruction counter's cases (tools/bench/insn): insn_case_args CASE
# prints fio's options for CASE, with $ios1 I/Os a job at QD1 and $ios32
# at QD32; false for a case it does not know.
insn_case_args() {
	case $1 in
	randread-4k-qd1) echo "--rw=randread --bs=4k --iodepth=1 --number_ios=$ios1" ;;
	randread-4k-qd32) echo "--rw=randread --bs=4k --iodepth=32 --iodepth_batch_submit=1 --number_ios=$ios32" ;;
	randwrite-4k-qd1) echo "--rw=randwrite --bs=4k --iodepth=1 --number_ios=$ios1" ;;
	randwrite-4k-qd32) echo "--rw=randwrite --bs=4k --iodepth=32 --iodepth_batch_submit=1 --number_ios=$ios32" ;;
	*) return 1 ;;
	esac
}

# insn_warm DEV: one short job first, so that the code paths are translated
# and the session warm before anything is counted
insn_warm() {
	fio --name=warm --filename="$1" --direct=1 --ioengine=libaio --rw=randrw --bs=4k \
		--iodepth=8 --number_ios=200 --size=1g --eta=never >/dev/null
}

# insn_job CASE DEV JSON [FIO OPTIONS...]: CASE's fio job on DEV, its
# results in JSON
insn_job() {
	local c=$1 dev=$2 json=$3
	shift 3
	# shellcheck disable=SC2046
	fio --name="$c" --filename="$dev" --direct=1 --ioengine=libaio $(insn_case_args "$c") \
		--size=1g --randrepeat=1 --norandommap --eta=never \
		--output-format=json --output="$json" "$@" >/dev/null
}

# insn_sections FILE: the text sections of the stack's modules as loaded
# (MODULE SECTION ADDRESS; the addresses need kptr_restrict 0)
insn_sections() {
	local m s
	for m in rtrs_server rtrs_core rtrs_client rnbd_server rnbd_client; do
		for s in /sys/module/$m/sections/.text*; do
			[ -e "$s" ] && echo "$m ${s##*/} $(cat "$s")"
		done
	done >"$1"
}
