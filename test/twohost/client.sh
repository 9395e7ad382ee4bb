#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The client host of the two-host lab (tools/vm/two-hosts; the server host
# is server.sh): upstream rtrs-client and rnbd-client map the server host's
# /dev/ram0 over two paths, write a pattern, read it back; then the
# scenario (basic: a 10 s cut of both wires, frames dropped, carrier kept, I/O resumes verified; long: a
# 60 s cut, the paths reconnect, verified I/O; reboot: the server host is
# stopped and booted again, this host keeps its map, the paths reconnect,
# verified I/O), then this host asks the host to kill it under I/O.
# Usage: client.sh PEERS_DIR basic|long|reboot
set -uo pipefail
peers=$1 scenario=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/lib.sh"
. "$here/lib.sh"
sess=s2h
cls=/sys/class/rtrs-client/$sess/paths
mib=16
wait_peer=${RTRS_TH_WAIT:-300}

step "client host ($scenario): the wire, soft-RoCE, upstream rtrs-client and rnbd-client"
net_up || bail "the wire and soft-RoCE"
insmod "$peers/src/rtrs/rtrs-core.ko" && insmod "$peers/src/rtrs/rtrs-client.ko" &&
	insmod "$peers/src/rnbd/rnbd-client.ko" || bail "upstream rtrs-client and rnbd-client"
await ready "$wait_peer" || bail "the server host is not ready"

step "map the server host's /dev/ram0 over $th_p1 and $th_p2"
t=$(now)
dev=$(map $sess /dev/ram0 "path=$th_p1 path=$th_p2") || bail "map over two paths"
note "$dev in $(elapsed "$t") s"
connected() { grep -q '^connected' "$cls/$1/state" 2>/dev/null; }
both_connected() { connected "$th_p1" && connected "$th_p2"; }
check "both paths connected" wait_for 20 both_connected
signal mapped

pattern=/tmp/pattern.bin
awk -v n=$((mib * 2048)) 'BEGIN { for (i = 0; i < n; i++) printf "%-511d\n", i * 2654435761 % 4294967296 }' >$pattern
# verify TAG: write the pattern (shifted by TAG blocks, so each round's
# data differs) with O_DIRECT, read back, compare; prints what it did.
verify() {
	local t
	t=$(now)
	{ head -c $(($1 * 512)) /dev/zero; cat $pattern; } | head -c $((mib << 20)) >/tmp/want.bin
	timeout 120 dd if=/tmp/want.bin of="$dev" bs=64k oflag=direct status=none || return 1
	timeout 120 cmp <(dd if="$dev" bs=1M count=$mib iflag=direct status=none) /tmp/want.bin || return 1
	echo "$mib MiB written and read back equal in $(elapsed "$t") s"
}
step "verified I/O"
r=$(verify 0) && pass "write and read back $mib MiB: $r" || { fail "write and read back"; r=failed; }
signal verified "$r"

if [ "$scenario" = basic ]; then
	step "cut both links for 10 s (shorter than the heartbeat timeout)"
	signal cutting
	host cut 30 || bail "the host did not cut the links"
	sleep 10
	host heal 30 || bail "the host did not heal the links"
	r=$(verify 7) && pass "I/O resumes verified after the cut: $r" || { fail "I/O after the short cut"; r=failed; }
	check "both paths still connected" both_connected
	signal cut-done "$r"
elif [ "$scenario" = reboot ]; then
	step "the server host is stopped and booted again (this host keeps its map)"
	none_connected() { ! connected "$th_p1" && ! connected "$th_p2"; }
	await stop-me 60 || bail "the server host did not finish its checks"
	host reboot-server 120 || bail "the host did not stop the server host"
	t=$(now)
	check "both paths leave the connected state (the server host is gone)" wait_for 120 none_connected
	note "both left $(elapsed "$t") s after the stop: $(cat "$cls/$th_p1/state" "$cls/$th_p2/state" 2>&1 | tr '\n' ' ')"
	await back 240 || bail "the server host did not come back"
	note "the server host's new boot is ready (seen $(elapsed "$t") s after the stop; when it was: events.txt)"
	# upstream's client tries again about every 30 s: 120 s is about four tries
	check "the client reconnects both paths to the new boot" wait_for 120 both_connected
	both_connected || bail "no reconnect to the new boot"
	note "both connected $(elapsed "$t") s after the stop"
	# the new boot's ram disk is new: what was written before is gone
	zeros=$(cmp -s <(dd if="$dev" bs=1M count=1 iflag=direct status=none) <(head -c 1048576 /dev/zero) && echo zeros || echo data)
	note "the first MiB after the reconnect reads: $zeros (zeros: a new ram disk)"
	r=$(verify 13) && pass "I/O verified after the reconnect: $r" || { fail "I/O after the reconnect"; r=failed; }
	signal verified2 "$r"
else
	step "cut both links for 60 s (longer than the heartbeat timeout)"
	signal cutting
	host cut 30 || bail "the host did not cut the links"
	await server-closed 120
	note "the server host closed its paths (in the cut): $(got server-closed && echo yes || echo no)"
	sleep 5
	host heal 30 || bail "the host did not heal the links"
	t=$(now)
	check "the client reconnects both paths" wait_for 150 both_connected
	note "both connected $(elapsed "$t") s after the links healed"
	r=$(verify 11) && pass "I/O verified after the reconnect: $r" || { fail "I/O after the reconnect"; r=failed; }
	signal verified2 "$r"
fi

step "die under I/O: ask the host to stop this guest"
dd if=/dev/urandom of="$dev" bs=64k count=100000 oflag=direct status=none &
read -r _ _ _ _ w0 _ </sys/block/${dev#/dev/}/stat
wrote() { local w; read -r _ _ _ _ w _ </sys/block/${dev#/dev/}/stat; [ "$w" -gt $((w0 + 16)) ]; }
check "writes flow before the kill" wait_for 30 wrote
echo "   (the host stops this guest now: nothing below runs)"
signal host.kill-client
sleep 60
fail "still alive 60 s after asking to be killed"
finish
