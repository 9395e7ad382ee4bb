#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Interop, inside the guest: an unmodified upstream rnbd-client (on upstream
# rtrs-client) maps block devices that an unmodified upstream rnbd-server
# exports through OUR rtrs-server; data written with O_DIRECT reads back
# equal, our stats/rdma match the I/O, unmap removes the session.
# Usage: rnbd-guest.sh OUR_MODULE_DIR PEERS_DIR [always_invalidate=Y|N]
set -uo pipefail
ours=$1 peers=$2 inval=${3:-Y}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/lib.sh"

mib=${RTRS_INTEROP_MIB:-64}
class=/sys/class/rtrs-server

step "soft-RoCE: dummy0/rxe0 10.77.0.1 (server) 10.77.0.2 (client), dummy1/rxe1 10.78.0.x"
rxe_up || exit 1
modprobe -a null_blk brd || exit 1

step "server side: our rtrs-server (always_invalidate=$inval) + upstream rnbd-server"
insmod_deps "$ours/rtrs-server.ko" always_invalidate="$inval" || exit 1
modinfo -F depends "$peers/rnbd-against/rnbd-server.ko"
insmod "$peers/rnbd-against/rnbd-server.ko" || exit 1
step "client side: upstream rtrs-core, rtrs-client, rnbd-client"
insmod "$peers/src/rtrs/rtrs-core.ko" || exit 1
insmod "$peers/src/rtrs/rtrs-client.ko" || exit 1
insmod "$peers/src/rnbd/rnbd-client.ko" || exit 1

# Backing devices: null_blk (reads zeros, drops writes) and a RAM disk.
rd_kib=$(( (mib + 8) * 1024 ))
rmmod brd && modprobe brd rd_nr=2 rd_size=$rd_kib || exit 1
ls -l /dev/nullb0 /dev/ram0 /dev/ram1

stats() { cat "$class/$1/paths/ip:10.77.0.2@ip:10.77.0.1/stats/rdma"; }

step "map /dev/ram0 as session ram"
dev=$(map ram /dev/ram0)
check "map of /dev/ram0 gives a device ($dev)" test -b "$dev"
check "session 'ram' in our class" test -d "$class/ram/paths/ip:10.77.0.2@ip:10.77.0.1"
"$here/../../tools/show-sysfs-tree.sh"

step "write $mib MiB of a pattern with O_DIRECT, read back, compare"
pattern=/tmp/pattern.bin
# A pattern that differs per 512-byte block: a misplaced block shows.
awk -v n=$((mib * 2048)) 'BEGIN { for (i = 0; i < n; i++) printf "%-511d\n", i * 2654435761 % 4294967296 }' > $pattern
check "pattern is $mib MiB" test "$(stat -c %s $pattern)" -eq $((mib * 1024 * 1024))
echo 1 > "$class/ram/paths/ip:10.77.0.2@ip:10.77.0.1/stats/rdma"
check "write with O_DIRECT" dd if=$pattern of="$dev" bs=1M count=$mib oflag=direct status=none
after_write=$(stats ram)
check "read back with O_DIRECT and compare" \
	cmp <(dd if="$dev" bs=1M count=$mib iflag=direct status=none) $pattern
after_read=$(stats ram)
echo "stats after write: $after_write"
echo "stats after read:  $after_read"
read -r rc rb wc wb inflight <<<"$after_read"
# Each 1 MiB direct I/O may be split by the block layer; count bytes, not
# requests: every data byte crosses once, plus a small header per request.
check "write bytes cover the data ($wb >= $((mib << 20)))" test "$wb" -ge $((mib << 20))
check "read bytes cover the data ($rb >= $((mib << 20)))" test "$rb" -ge $((mib << 20))
check "header bytes per request are small" test $(( (wb - (mib << 20)) / wc )) -le 4096
check "no request in flight when idle" test "$inflight" -eq 0
check "the RAM disk holds the pattern" cmp <(dd if=/dev/ram0 bs=1M count=$mib status=none) $pattern

step "null_blk as session null: I/O completes (null_blk keeps no data)"
ndev=$(map null /dev/nullb0)
check "map of /dev/nullb0 gives a device ($ndev)" test -b "$ndev"
nstats="$class/null/paths/ip:10.77.0.2@ip:10.77.0.1/stats/rdma"
echo 1 > "$nstats"
check "16 MiB of O_DIRECT writes" dd if=/dev/zero of="$ndev" bs=64k count=256 oflag=direct status=none
check "16 MiB of O_DIRECT reads" dd if="$ndev" of=/dev/null bs=64k count=256 iflag=direct status=none
read -r rc rb wc wb inflight < "$nstats"
echo "null stats: $rc $rb $wc $wb $inflight"
# 64 KiB requests are not split: 256 each, each with a small header.
check "256 reads counted" test "$rc" -eq 256
check "256 writes counted" test "$wc" -eq 256
check "read bytes: 256 x (64 KiB + header)" test $((rb / 256 - 65536)) -gt 0 -a $((rb / 256 - 65536)) -le 4096
check "write bytes: 256 x (64 KiB + header)" test $((wb / 256 - 65536)) -gt 0 -a $((wb / 256 - 65536)) -le 4096

step "two paths (rxe0, rxe1); one is disconnected through our sysfs during I/O"
p1=ip:10.77.0.2@ip:10.77.0.1 p2=ip:10.78.0.2@ip:10.78.0.1
mdev=$(map mp /dev/ram1 "path=$p1 path=$p2")
check "two-path map gives a device ($mdev)" test -b "$mdev"
check "both paths in our class" wait_exists "$class/mp/paths/$p2" 20
check "both paths in our class" test -d "$class/mp/paths/$p1"
# a slower writer (small requests, synced) so that the cut lands mid-stream
echo 1 > "$class/mp/paths/$p1/stats/rdma"
dd if=$pattern of="$mdev" bs=64k count=$((mib * 16)) oflag=direct status=none &
writer=$!
# The cut comes once writes flow on the path (not after a fixed time).
writes_on_p1() {
	local wc
	read -r _ _ wc _ _ < "$class/mp/paths/$p1/stats/rdma"
	[ "$wc" -ge 16 ]
}
check "writes flow on $p1 before the cut" wait_for 30 writes_on_p1
check "disconnect path $p1 during I/O" sh -c "echo 1 > $class/mp/paths/$p1/disconnect"
# Checked at once: the client brings a lost path back by itself 30 s later,
# which on a slow kernel comes before the read-back below is done.
check "the path is gone from our class" wait_gone "$class/mp/paths/$p1" 20
check "the writer finishes without an error" wait $writer
read -r _ _ wc1 _ _ < "$class/mp/paths/$p2/stats/rdma"
check "the other path carried writes ($wc1)" test "$wc1" -gt 0
check "read back over the surviving path equals the pattern" \
	cmp <(dd if="$mdev" bs=1M count=$mib iflag=direct status=none) $pattern
# The client retries a lost path after its fixed 30 s delay (the demo
# waits for that); here it is told to retry now, through its own sysfs.
clt_path=/sys/class/rtrs-client/mp/paths/$p1
reconnect_now() {
	for _ in 1 2 3; do
		echo 1 > "$clt_path/reconnect" 2>/dev/null && return 0
		sleep 1
	done
	return 1
}
check "the client reconnects the path when told to" reconnect_now
check "the client brings the path back" wait_exists "$class/mp/paths/$p1" 90
check "data still equal after the path is back" \
	cmp <(dd if="$mdev" bs=1M count=$mib iflag=direct status=none) $pattern

echo "   rxe0 counters: $(rxe_counters rxe0)"
echo "   rxe1 counters: $(rxe_counters rxe1)"

step "unmap: sessions go"
for d in $dev $ndev $mdev; do
	n=${d#/dev/}
	check "unmap $n" sh -c "echo normal > /sys/block/$n/rnbd/unmap_device"
done
check "sessions gone from our class" wait_gone "$class/ram" 15
check "session null gone" wait_gone "$class/null" 15
check "session mp gone" wait_gone "$class/mp" 15

step "unload"
rmmod rnbd_client rtrs_client rtrs_core rnbd_server rtrs_server
check "our class is gone" test ! -e $class
finish
