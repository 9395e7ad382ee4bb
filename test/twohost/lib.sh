# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The two-host lab's guest side (tools/vm/two-hosts): the wire, and the
# signals between the two guests. Sourced after test/guest/lib.sh.
th_dir=${RTRS_TH_DIR:?run by tools/vm/two-hosts}
th_role=${RTRS_TH_ROLE:?run by tools/vm/two-hosts}

# Every check is also written to RTRS_TH_DIR/checks.txt as it is made (a
# write to the results folder, which reaches the host before it returns):
# the host stops a guest in the middle of its script (a kill, a reboot),
# and two-hosts judges what the guest checked before from that file.
th_checks=$th_dir/checks.txt
: >"$th_checks"
pass() {
	passed=$((passed + 1))
	echo "ok: $*"
	echo "ok: $*" >>"$th_checks"
}
fail() {
	failed=$((failed + 1))
	echo "FAIL: $*"
	echo "FAIL: $*" >>"$th_checks"
}

# net_up: NIC i (found by the MAC two-hosts gave it, 52:54:00:8i:00:0h,
# h = 1 on the server, 2 on the client) gets 10.8(1+i).0.h/24 and an rxe
# device rxe_i on it.
net_up() {
	local h i d nic
	[ "$th_role" = server ] && h=1 || h=2
	modprobe -a virtio_net rdma_rxe rdma_cm || return 1
	ip link set lo up
	for i in 0 1; do
		nic=
		for d in /sys/class/net/*; do
			[ "$(cat "$d/address")" = "52:54:00:8$i:00:0$h" ] && nic=${d##*/}
		done
		[ -n "$nic" ] || { echo "net_up: no NIC with MAC 52:54:00:8$i:00:0$h"; return 1; }
		ip addr add 10.8$((1 + i)).0.$h/24 dev "$nic" || return 1
		ip link set "$nic" up || return 1
		rdma link add rxe$i type rxe netdev "$nic" || return 1
		echo "   $nic: 10.8$((1 + i)).0.$h, rxe$i"
	done
	wait_for 10 gids_there "rxe1:0000:0000:0000:0000:0000:ffff:0a52:000$h"
}

# th_disk: the server host's disk that survives its reboots (two-hosts
# attaches it to every boot of the server: serial rtrs2h-disk), /dev/vdX.
th_disk() {
	modprobe virtio_blk || return 1
	wait_for 10 th_disk_there && return 0
	echo "th_disk: no virtio disk with the serial rtrs2h-disk" >&2
	return 1
}
th_disk_there() {
	local d
	for d in /sys/block/vd*; do
		[ "$(cat "$d/serial" 2>/dev/null)" = rtrs2h-disk ] && [ -b "/dev/${d##*/}" ] &&
			{ echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}

# the two paths, as the client names them (SRC@DST)
th_p1=ip:10.81.0.2@ip:10.81.0.1
th_p2=ip:10.82.0.2@ip:10.82.0.1

# signal NAME [TEXT]: tells the other guest (and the host) NAME.
signal() {
	echo "${2:-$(now)}" >"$th_dir/sig/.$1" && mv "$th_dir/sig/.$1" "$th_dir/sig/$1"
	note "signal $1"
}
# got NAME: the other guest (or the host) has signalled NAME.
got() { test -e "$th_dir/in/$1"; }
# sigtext NAME: the text that came with NAME.
sigtext() { cat "$th_dir/in/$1"; }
# await NAME SECONDS: true once NAME has come; false after SECONDS, or
# as soon as the other guest gave up (its abort: it waits for nothing more).
await() {
	wait_for "$2" got_or_abort "$1" || { echo "   no signal $1 within $2 s"; return 1; }
	got "$1" && return 0
	echo "   no signal $1: the other guest gave up ($(cat "$th_dir/in/abort"))"
	return 1
}
got_or_abort() { got "$1" || got abort; }
# host ACTION SECONDS: asks the host for ACTION (cut, heal, linkoff[N],
# linkon[N], kill-client, kill-server, reboot-client, reboot-server); true
# once it is done.
host() {
	signal "host.$1"
	await "host.$1.done" "$2"
}
# A peer that is gone, or failed, says so: the waiting guest stops waiting.
# bail TEXT: fail, tell the other guest, finish.
bail() {
	fail "$1"
	signal abort "$th_role: $1"
	finish
	exit 1
}

# cut_dropped TEXT: TEXT (the host's heal signal, "... dropped in the cut:
# wire0 server>client N wire0 client>server N wire1 ...") says each wire
# dropped frames both ways while it was cut (heartbeats go both ways every
# 5 s on each path: a cut of 10 s drops some on each).
cut_dropped() {
	local w=${1#*dropped in the cut: } n=0
	[ "$w" != "$1" ] || return 1
	# shellcheck disable=SC2086 # (the words of the text)
	set -- $w
	while [ $# -ge 3 ]; do
		[ "$3" -ge 1 ] 2>/dev/null || return 1
		n=$((n + 1))
		shift 3
	done
	[ "$n" = 4 ]
}

# mem_note WHEN: this host's memory now (/proc/meminfo), for the figures.
mem_note() {
	note "memory, $1: $(awk '/^(MemFree|MemAvailable|Slab|SUnreclaim|Percpu):/ { printf "%s %d kB ", $1, $2 }' /proc/meminfo)"
}
