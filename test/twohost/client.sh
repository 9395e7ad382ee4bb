#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The client host of the two-host lab (tools/vm/two-hosts; the server host
# is server.sh): upstream rtrs-client and rnbd-client map the device the
# server host exports (its ready signal names it) over two paths, write a
# pattern, read it back; then the scenario (basic: a 10 s cut of both
# wires, frames dropped, carrier kept, I/O resumes verified; long: a cut
# longer than the heartbeat timeout, the paths reconnect, verified I/O;
# reboot: the server host is stopped and booted again, this host keeps its
# map, the paths reconnect, what was written before reads back, verified
# I/O; failover: link 1 goes down under verified writes, they go on over
# path 1, nothing lost, the link and path 2 come back), then this host
# asks the host to stop it under I/O and boot it again. Booted again
# (RTRS_TH_BOOT=2), it maps the same session name once the server host has
# seen the death through, verified I/O, and unmaps.
# Usage: client.sh PEERS_DIR basic|long|reboot|failover
set -uo pipefail
peers=$1 scenario=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/lib.sh"
. "$here/lib.sh"
sess=s2h
cls=/sys/class/rtrs-client/$sess/paths
mib=16
# failover writes the whole ram disk (32 MiB) under the link's loss
fo_mib=32
wait_peer=${RTRS_TH_WAIT:-300}
boot=${RTRS_TH_BOOT:-1}

step "client host ($scenario, boot $boot): the wire, soft-RoCE, upstream rtrs-client and rnbd-client"
net_up || bail "the wire and soft-RoCE"
insmod "$peers/src/rtrs/rtrs-core.ko" && insmod "$peers/src/rtrs/rtrs-client.ko" &&
	insmod "$peers/src/rnbd/rnbd-client.ko" || bail "upstream rtrs-client and rnbd-client"

connected() { grep -q '^connected' "$cls/$1/state" 2>/dev/null; }
both_connected() { connected "$th_p1" && connected "$th_p2"; }
pattern=/tmp/pattern.bin
pmib=$mib
[ "$scenario" = failover ] && pmib=$fo_mib
awk -v n=$((pmib * 2048)) 'BEGIN { for (i = 0; i < n; i++) printf "%-511d\n", i * 2654435761 % 4294967296 }' >$pattern
# want TAG MIB: /tmp/want.bin, the first MIB MiB of the pattern shifted by
# TAG blocks (so each round's data differs)
want() { { head -c $(($1 * 512)) /dev/zero; cat $pattern; } | head -c $(($2 << 20)) >/tmp/want.bin; }
# readback MIB: the device's first MIB MiB equal /tmp/want.bin (O_DIRECT)
readback() { timeout 120 cmp <(dd if="$dev" bs=1M count="$1" iflag=direct status=none) /tmp/want.bin; }
# verify TAG: write the pattern (shifted by TAG blocks) with O_DIRECT, read
# back, compare; prints what it did.
verify() {
	local t
	t=$(now)
	want "$1" $mib
	timeout 120 dd if=/tmp/want.bin of="$dev" bs=64k oflag=direct status=none || return 1
	readback $mib || return 1
	echo "$mib MiB written and read back equal in $(elapsed "$t") s"
}
# writes since the mark w0 (the device's stat)
wrote() { local w; read -r _ _ _ _ w _ <"/sys/block/${dev#/dev/}/stat"; [ "$w" -gt $((w0 + 16)) ]; }
mark_writes() { read -r _ _ _ _ w0 _ <"/sys/block/${dev#/dev/}/stat"; }
unmap() { echo normal >"/sys/block/${dev#/dev/}/rnbd/unmap_device"; }

if [ "$boot" != 1 ]; then
	# booted again after the death (two-hosts' reboot-client)
	step "booted again: map the same session name ($sess) once the server host saw the death through"
	await death-checked "$wait_peer" || bail "the server host did not see the death through"
	exp=$(sigtext death-checked)
	t=$(now)
	dev=$(map $sess "$exp" "path=$th_p1 path=$th_p2") || bail "map $sess again over two paths"
	note "$dev ($exp) in $(elapsed "$t") s"
	check "both paths connected" wait_for 20 both_connected
	if r=$(verify 5); then pass "write and read back $mib MiB after the remap: $r"; else fail "write and read back after the remap"; r=failed; fi
	signal remapped "$r"
	await remap-checked 120 || bail "the server host did not check the remap"
	step "unmap"
	signal unmapping
	t=$(now)
	check "unmap $dev" unmap
	u=$(elapsed "$t")
	check "the session leaves this host" wait_gone "/sys/class/rtrs-client/$sess" 20
	# the client's close waits for the server's answers to its disconnects
	check "the unmap returns within 10 s ($u s)" le "$u" 10
	signal unmapped
	check "unload upstream's client" rmmod rnbd_client rtrs_client rtrs_core
	finish
	exit
fi

await ready "$wait_peer" || bail "the server host is not ready"
exp=$(sigtext ready)
case $exp in /dev/?*) ;; *) bail "the server host's ready names no device: '$exp'" ;; esac

step "map the server host's $exp over $th_p1 and $th_p2"
t=$(now)
dev=$(map $sess "$exp" "path=$th_p1 path=$th_p2") || bail "map over two paths"
note "$dev in $(elapsed "$t") s"
check "both paths connected" wait_for 20 both_connected
signal mapped

step "verified I/O"
r=$(verify 0) && pass "write and read back $mib MiB: $r" || { fail "write and read back"; r=failed; }
signal verified "$r"

if [ "$scenario" = basic ]; then
	step "cut both links for 10 s (shorter than the heartbeat timeout)"
	signal cutting
	host cut 30 || bail "the host did not cut the links"
	sleep 10
	host heal 30 || bail "the host did not heal the links"
	d=$(sigtext host.heal.done)
	check "the cut dropped frames on both wires, both ways (${d#*dropped in the cut: })" cut_dropped "$d"
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
	check "the new boot exports the same disk ($(sigtext back))" test "$(sigtext back)" = "$exp"
	# upstream's client tries again about every 30 s: 120 s is about four tries
	check "the client reconnects both paths to the new boot" wait_for 120 both_connected
	both_connected || bail "no reconnect to the new boot"
	note "both connected $(elapsed "$t") s after the stop"
	# the server's disk survives its reboot: what was written before reads back
	want 0 $mib
	same=0
	readback $mib && same=1
	check "the $mib MiB written before the reboot read back" test "$same" = 1
	note "the first MiB after the reconnect reads: $(cmp -s <(dd if="$dev" bs=1M count=1 iflag=direct status=none) <(head -c 1048576 /dev/zero) && echo zeros || echo data)"
	if r=$(verify 13); then pass "I/O verified after the reconnect: $r"; else fail "I/O after the reconnect"; r=failed; fi
	# the server host checks both
	[ "$same" = 1 ] && [ "$r" != failed ] && r="the $mib MiB from before the reboot read back equal; $r"
	[ "$same" = 1 ] || r=failed
	signal verified2 "$r"
elif [ "$scenario" = failover ]; then
	step "link 1 (path 2, $th_p2) goes down under verified writes of $fo_mib MiB"
	want 17 $fo_mib
	mark_writes
	tw=$(now)
	timeout 300 dd if=/tmp/want.bin of="$dev" bs=64k oflag=direct status=none &
	wpid=$!
	check "writes flow" wait_for 30 wrote
	host linkoff1 30 || bail "the host did not take link 1 down"
	t=$(now)
	check "the writes were still going when link 1 went down" kill -0 $wpid
	p2_down() { ! connected "$th_p2"; }
	check "path 2 leaves the connected state" wait_for 60 p2_down
	note "path 2: $(cat "$cls/$th_p2/state" 2>&1) $(elapsed "$t") s after the link went down"
	check "path 1 stays connected" connected "$th_p1"
	wait_pid $wpid 240
	wait $wpid
	rc=$?
	check "the writes end without an error (dd: $rc)" test "$rc" = 0
	note "the $fo_mib MiB written in $(elapsed "$tw") s, ended $(elapsed "$t") s after the link went down"
	same=0
	readback $fo_mib && same=1
	check "nothing lost: the $fo_mib MiB read back equal" test "$same" = 1
	if r=$(verify 19); then pass "I/O verified over path 1 alone: $r"; else fail "I/O over path 1 alone"; r=failed; fi
	check "path 1 still connected" connected "$th_p1"
	res=failed
	[ "$rc" = 0 ] && [ "$same" = 1 ] && [ "$r" != failed ] &&
		res="$fo_mib MiB under the failover read back equal; then $r over path 1 alone"
	signal failover-done "$res"
	await path2-closed 180
	note "the server host closed path 2: $(got path2-closed && echo yes || echo no)"
	host linkon1 30 || bail "the host did not bring link 1 back"
	t=$(now)
	check "path 2 comes back with the link" wait_for 150 both_connected
	both_connected || bail "path 2 did not come back"
	note "both connected $(elapsed "$t") s after the link came back"
	if r=$(verify 11); then pass "I/O verified with both paths back: $r"; else fail "I/O with both paths back"; r=failed; fi
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
	d=$(sigtext host.heal.done)
	check "the cut dropped frames on both wires, both ways (${d#*dropped in the cut: })" cut_dropped "$d"
	check "the client reconnects both paths" wait_for 150 both_connected
	note "both connected $(elapsed "$t") s after the links healed"
	r=$(verify 11) && pass "I/O verified after the reconnect: $r" || { fail "I/O after the reconnect"; r=failed; }
	signal verified2 "$r"
fi

step "die under I/O: ask the host to stop this guest (and boot it again)"
dd if=/dev/urandom of="$dev" bs=64k count=100000 oflag=direct status=none &
mark_writes
check "writes flow before the kill" wait_for 30 wrote
echo "   (the host stops this guest now: nothing below runs)"
signal host.reboot-client
sleep 60
fail "still alive 60 s after asking to be killed"
finish
