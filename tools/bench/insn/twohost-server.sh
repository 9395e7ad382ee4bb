#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The server host of the instruction counter's two-host mode
# (tools/bench/insn/twohost.sh; tools/vm/two-hosts boots this guest with the
# insn-count plugin, the client host without): for each always_invalidate
# value and server, that server with upstream rnbd-server on it exports a
# null_blk; insn-markd runs the plugin's marker when the client host asks
# (just before and just after each fio job), so each job's dump holds what
# this host executed for it, and nothing of a waiting shell: while the
# client's jobs run this script is blocked in wait.
#
# Usage: twohost-server.sh OUR_MODULE_DIR PEERS_DIR MARKD "SERVERS" "INVALS"
# Output in RTRS_TH_DIR/insn (the guest's results folder): marks.txt
# (MARKER_NO SERVER INVAL CASE, insn-markd's), sections-SERVER-INVAL.txt,
# markd-SERVER-INVAL.txt, dmesg.txt.
set -uo pipefail
# shellcheck disable=SC2034 # (ours, peers: read by guest-lib.sh)
ours=$1 peers=$2 markd=$3 servers=$4 invals=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../../test/guest/lib.sh"
. "$here/../../../test/twohost/lib.sh"
# shellcheck source=tools/bench/guest-lib.sh
. "$here/../guest-lib.sh"
out=$th_dir/insn
mkdir -p "$out" && : >"$out/marks.txt" || exit 1

step "server host (insn): the wire, soft-RoCE, a null_blk, rtrs-core and our module's dependencies"
net_up || bail "the wire and soft-RoCE"
modprobe null_blk || bail "null_blk"
insmod "$peers/src/rtrs/rtrs-core.ko" || bail "upstream rtrs-core"
load_deps "$ours/rtrs-server.ko" || bail "our module's dependencies"
echo 0 >/proc/sys/kernel/kptr_restrict
markers=0
for inv in $invals; do
	for srv in $servers; do
		step "$srv rtrs-server, always_invalidate=$inv"
		load_stack "$srv" "$inv" || bail "load $srv's stack"
		insn_sections "$out/sections-$srv-$inv.txt"
		log=$out/markd-$srv-$inv.txt
		"$markd" 10.81.0.1 7777 "$markers" "$out/marks.txt" >"$log" 2>&1 &
		pid=$!
		wait_line "$log" '^listening' 10 || bail "insn-markd did not start: $(cat "$log")"
		signal "ready-$srv-$inv"
		# the client's jobs run now; it ends insn-markd with quit
		wait "$pid" || bail "insn-markd failed: $(cat "$log")"
		markers=$(tail -n 1 "$log")
		note "markers so far: $markers"
		check "$srv's stack unloads" unload_stack
	done
done
dmesg >"$out/dmesg.txt"
signal done
finish
