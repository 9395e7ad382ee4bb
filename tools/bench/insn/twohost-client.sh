#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The client host of the instruction counter's two-host mode
# (tools/bench/insn/twohost.sh; the server host is twohost-server.sh):
# upstream rtrs-client and rnbd-client map the server host's null_blk over
# path 1 once the server host says it is ready, then for each case one fio
# job of a fixed number of I/Os, between two markers the server host's
# insn-markd runs when asked (10.81.0.1:7777); at the end the device is
# unmapped and insn-markd told to quit.
#
# Usage: twohost-client.sh PEERS_DIR "SERVERS" "INVALS" "CASES" IOS_QD1 IOS_QD32
# Output in RTRS_TH_DIR/insn (the guest's results folder):
# SERVER-INVAL-CASE.json (fio).
set -uo pipefail
# shellcheck disable=SC2034 # (ios1, ios32: read by guest-lib.sh)
peers=$1 servers=$2 invals=$3 cases=$4 ios1=$5 ios32=$6
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../../test/guest/lib.sh"
. "$here/../../../test/twohost/lib.sh"
# shellcheck source=tools/bench/guest-lib.sh
. "$here/../guest-lib.sh"
out=$th_dir/insn
mkdir -p "$out" || exit 1
for c in $cases; do
	insn_case_args "$c" >/dev/null || bail "unknown case $c"
done

# markd REQUEST: one request to the server host's insn-markd; prints its answer
markd() {
	local r
	exec 3<>/dev/tcp/10.81.0.1/7777 || return 1
	echo "$1" >&3
	read -r r <&3
	exec 3>&-
	echo "$r"
	case $r in ok* | bye*) return 0 ;; *) return 1 ;; esac
}

step "client host (insn): the wire, soft-RoCE, upstream rtrs-client and rnbd-client"
net_up || bail "the wire and soft-RoCE"
insmod "$peers/src/rtrs/rtrs-core.ko" && insmod "$peers/src/rtrs/rtrs-client.ko" &&
	insmod "$peers/src/rnbd/rnbd-client.ko" || bail "upstream rtrs-client and rnbd-client"
for inv in $invals; do
	for srv in $servers; do
		step "$srv rtrs-server, always_invalidate=$inv"
		await "ready-$srv-$inv" 300 || bail "the server host is not ready"
		dev=$(map insn /dev/nullb0 "path=$th_p1") || bail "map the server's null_blk"
		insn_warm "$dev" || bail "the warm-up job"
		for c in $cases; do
			markd mark >/dev/null || bail "no marker before $c"
			insn_job "$c" "$dev" "$out/$srv-$inv-$c.json" || bail "fio $srv $inv $c"
			r=$(markd "mark $srv $inv $c") || bail "no marker after $c"
			pass "$srv always_invalidate=$inv $c (marker ${r#ok })"
		done
		check "unmap $dev" eval "echo normal >/sys/block/${dev#/dev/}/rnbd/unmap_device"
		check "the session leaves this host" wait_gone /sys/class/rtrs-client/insn 20
		markd quit >/dev/null || bail "insn-markd's quit"
	done
done
signal done
finish
