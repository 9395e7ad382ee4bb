#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Instructions per I/O, inside the guest (tools/bench/insn/insn.sh boots it
# with one vCPU and the insn-count plugin): for each always_invalidate value
# and server, upstream rnbd-server on that server, /dev/rnbd0 over upstream
# rnbd-client, a null_blk behind; for each case one fio job of a fixed
# number of I/Os, with insn-mark run by fio just before the job and just
# after it (exec_prerun / exec_postrun), so the plugin's dump of the second
# marker holds exactly the job's instructions.
#
# Usage: insn-guest.sh OUR_MODULE_DIR PEERS_DIR OUT_DIR MARK "SERVERS" "INVALS" "CASES" IOS_QD1 IOS_QD32
# Output in OUT_DIR: marks.txt (one line per dump to use: MARKER_NO SERVER
# INVAL CASE), SERVER-INVAL-CASE.json (fio), sections-SERVER-INVAL.txt
# (MODULE SECTION ADDRESS of the modules loaded), dmesg.txt.
set -uo pipefail
# shellcheck disable=SC2034 # (ours, peers: read by guest-lib.sh)
ours=$1 peers=$2 out=$3 mark=$4 servers=$5 invals=$6 cases=$7 ios1=$8 ios32=$9
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../../test/guest/lib.sh"
# shellcheck source=tools/bench/guest-lib.sh
. "$here/../guest-lib.sh"
ctl=/sys/devices/virtual/rnbd-client/ctl
markers=0
mkdir -p "$out" && : >"$out/marks.txt" || exit 1

for c in $cases; do
	insn_case_args "$c" >/dev/null || { echo "[insn] unknown case $c"; exit 2; }
done

bench_setup || exit 1
echo 0 >/proc/sys/kernel/kptr_restrict

# one_case SERVER INVAL CASE
one_case() {
	local p=$out/$1-$2-$3
	insn_job "$3" /dev/rnbd0 "$p.json" --exec_prerun="$mark" --exec_postrun="$mark" ||
		{ echo "[insn] fio failed: $p"; return 1; }
	markers=$((markers + 2))
	echo "$markers $1 $2 $3" >>"$out/marks.txt"
	echo "[insn] $1 always_invalidate=$2 $3: done (marker $markers)"
}

for inv in $invals; do
	for srv in $servers; do
		load_stack "$srv" "$inv" || exit 1
		echo "sessname=insn path=ip:10.77.0.2@ip:10.77.0.1 device_path=/dev/nullb0" >$ctl/map_device || exit 1
		wait_exists /dev/rnbd0 10 || exit 1
		insn_sections "$out/sections-$srv-$inv.txt"
		insn_warm /dev/rnbd0 || exit 1
		for c in $cases; do
			one_case "$srv" "$inv" "$c" || exit 1
		done
		echo normal >/sys/block/rnbd0/rnbd/unmap_device || exit 1
		wait_gone /dev/rnbd0 10 || exit 1
		unload_stack || exit 1
	done
done
rmmod rnbd_client rtrs_client rtrs_core
dmesg >"$out/dmesg.txt"
exit 0
