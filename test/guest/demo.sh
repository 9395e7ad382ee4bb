#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the guest: real block I/O through OUR rtrs-server.
# An unmodified upstream rnbd-server, built against our Module.symvers,
# exports a RAM disk through our rtrs-server; the unmodified upstream
# rnbd-client (on upstream rtrs-client) maps it over two soft-RoCE paths.
# Data written with O_DIRECT is read back and compared; the counters show in
# /sys/class/rtrs-server and in rtrs-srv; one path is disconnected through
# our sysfs, I/O goes on over the other, and the client brings the path back;
# then everything is unmapped and unloaded.
# Exits 0 only if every step worked; leaves no rtrs/rnbd module loaded.
# Usage: demo.sh MODULE_DIR PEERS_DIR RTRS_SRV_BINARY
#   MODULE_DIR: holds our rtrs-server.ko, the shipped build
#               (tools/build-module.sh --shipped, as DKMS builds it): the
#               demo refuses the test build
#   PEERS_DIR:  tools/upstream/build-peers.sh's OUTDIR, built with
#               --rnbd-server-against MODULE_DIR
set -uo pipefail
if [ $# -ne 3 ]; then
	echo "usage: $0 MODULE_DIR PEERS_DIR RTRS_SRV_BINARY" >&2
	exit 2
fi
moddir=$1 peers=$2 cli=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/guest/lib.sh"

mib=16                          # MiB written and read back at each step
class=/sys/class/rtrs-server
ctl=/sys/devices/virtual/rnbd-client/ctl
sess=demo
p1=ip:10.77.0.2@ip:10.77.0.1    # over rxe0
p2=ip:10.78.0.2@ip:10.78.0.1    # over rxe1
work=/run/demo                  # a fresh tmpfs in the guest
dev=

die() { echo "DEMO FAILED: $*"; exit 1; }
# Prints and runs a shell command line (the sysfs writes the demo is about).
run() { echo "\$ $*"; sh -c "$*"; }

# On any failure: unmap and unload what is there, so that the run ends
# without our modules loaded whatever happened.
cleanup() {
	local rc=$? d m
	[ $rc -eq 0 ] && return
	echo "cleaning up after the failure"
	for d in /sys/block/rnbd*; do
		[ -e "$d/rnbd/unmap_device" ] && echo force > "$d/rnbd/unmap_device"
	done
	wait_gone "$class/$sess" 15
	for m in rnbd_client rtrs_client rtrs_core rnbd_server rtrs_server brd; do
		[ -d "/sys/module/$m" ] && rmmod "$m"
	done
	exit $rc
}
trap cleanup EXIT

# rw_check LABEL FILE: writes FILE to the RNBD device with O_DIRECT, reads
# it back with O_DIRECT and compares; prints dd's rate lines.
rw_check() {
	local label=$1 data=$2 out
	out=$(dd if="$data" of="$dev" bs=1M count=$mib oflag=direct 2>&1) ||
		die "$label: write failed: $out"
	echo "write: ${out##*$'\n'}"
	out=$(dd if="$dev" of="$work/readback" bs=1M count=$mib iflag=direct 2>&1) ||
		die "$label: read failed: $out"
	echo "read:  ${out##*$'\n'}"
	cmp "$work/readback" "$data" || die "$label: the data read back differs from the data written"
	echo "data verified: $mib MiB ($label)"
}

step "guest kernel $(uname -r): soft-RoCE rxe0 on dummy0 (10.77.0.1 server, .2 client), rxe1 on dummy1 (10.78.0.x)"
rxe_up || die "soft-RoCE setup"
rdma link show
# From here on the console shows the kernel's info messages too (what the
# modules say about sessions and paths); the whole log is in dmesg anyway.
echo 7 > /proc/sys/kernel/printk
# the RAM disk to export: 32 MiB
modprobe brd rd_nr=1 rd_size=$((2 * mib * 1024)) || die "modprobe brd"

step "server side: OUR rtrs-server.ko, upstream rnbd-server.ko built against it"
# The module that ships (DKMS, the .deb): the test build says so in modinfo
# (test_build) and has rtrs-null.ko beside it.
modinfo "$moddir/rtrs-server.ko" | grep -E '^(filename|version|description|vermagic|test_build):'
[ -z "$(modinfo -F test_build "$moddir/rtrs-server.ko")" ] ||
	die "$moddir/rtrs-server.ko is the test build (modinfo test_build): the demo shows the module that ships (tools/build-module.sh --shipped)"
[ ! -e "$moddir/rtrs-null.ko" ] ||
	die "$moddir has rtrs-null.ko beside rtrs-server.ko: the test build's folder, not the shipped one"
echo "the shipped build: no test_build in modinfo, no rtrs-null.ko"
load_deps "$moddir/rtrs-server.ko" || die "modules rtrs-server.ko needs"
insmod "$moddir/rtrs-server.ko" || die "insmod $moddir/rtrs-server.ko"
insmod "$peers/rnbd-against/rnbd-server.ko" || die "insmod rnbd-server.ko"
echo "client side: upstream rtrs-core.ko, rtrs-client.ko, rnbd-client.ko"
insmod "$peers/src/rtrs/rtrs-core.ko" || die "insmod rtrs-core.ko"
insmod "$peers/src/rtrs/rtrs-client.ko" || die "insmod rtrs-client.ko"
insmod "$peers/src/rnbd/rnbd-client.ko" || die "insmod rnbd-client.ko"
lsmod | grep -E '^(Module|rtrs|rnbd)'
echo "rtrs_server: $(modinfo -F description "$moddir/rtrs-server.ko")"

step "map /dev/ram0 with rnbd-client over two paths, $p1 (rxe0) and $p2 (rxe1)"
[ -z "$(ls /sys/block | grep '^rnbd')" ] || die "an rnbd device exists before the map"
run "echo 'sessname=$sess path=$p1 path=$p2 device_path=/dev/ram0' > $ctl/map_device" ||
	die "map_device refused the map"
# rnbd_dev: the first rnbd device, in dev; false while there is none.
rnbd_dev() { dev=$(ls /sys/block | grep '^rnbd' | head -n 1); [ -n "$dev" ]; }
wait_for 10 rnbd_dev || die "no /dev/rnbd* after the map"
dev=/dev/$dev
wait_exists "$class/$sess/paths/$p1" 30 || die "path $p1 not in $class/$sess"
wait_exists "$class/$sess/paths/$p2" 30 || die "path $p2 not in $class/$sess"
echo "$dev: $(( $(blockdev --getsize64 "$dev") >> 20 )) MiB; session '$sess' in $class with both paths"

step "write $mib MiB of random data to $dev with O_DIRECT, read it back, compare"
mkdir -p "$work"
head -c $((mib << 20)) /dev/urandom > "$work/data1" || die "making the test data"
rw_check "over two paths" "$work/data1"
cmp <(dd if=/dev/ram0 bs=1M count=$mib iflag=direct status=none) "$work/data1" ||
	die "the RAM disk on the server side does not hold the data written"
echo "and the server's /dev/ram0 holds the same $mib MiB"

step "$class after the I/O (tools/show-sysfs-tree.sh)"
"$top/tools/show-sysfs-tree.sh" || die "no $class"
step "rtrs-srv list"
"$cli" list || die "rtrs-srv list"
read -r rc1 _ wc1 _ _ < "$class/$sess/paths/$p1/stats/rdma"
read -r rc2 _ wc2 _ _ < "$class/$sess/paths/$p2/stats/rdma"
[ $((rc1 + rc2)) -gt 0 ] && [ $((wc1 + wc2)) -gt 0 ] ||
	die "the read and write counters stayed at zero"

step "disconnect path $p1 through our sysfs"
read -r _ _ wc2_before _ _ < "$class/$sess/paths/$p2/stats/rdma"
t0=$(now)
run "echo 1 > $class/$sess/paths/$p1/disconnect" || die "the disconnect write failed"
wait_gone "$class/$sess/paths/$p1" 15 || die "path $p1 still there 15 s after the disconnect"
echo "path folder $p1 gone after $(elapsed "$t0" "" 1) s; $p2 remains:"
ls "$class/$sess/paths"

step "I/O over the remaining path $p2: $mib MiB of new random data"
head -c $((mib << 20)) /dev/urandom > "$work/data2" || die "making the test data"
rw_check "over $p2 alone" "$work/data2"
read -r _ _ wc2_after _ _ < "$class/$sess/paths/$p2/stats/rdma"
[ "$wc2_after" -gt "$wc2_before" ] || die "path $p2 counted no write"
echo "writes counted on $p2: $wc2_before -> $wc2_after"
"$cli" list || die "rtrs-srv list"

step "the client brings $p1 back (it retries after its reconnect delay, 30 s in rnbd-client)"
wait_exists "$class/$sess/paths/$p1" 90 || die "path $p1 did not come back within 90 s"
echo "path $p1 back, $(elapsed "$t0" "" 1) s after the disconnect"
out=$(dd if="$dev" of="$work/readback" bs=1M count=$mib iflag=direct 2>&1) || die "read failed: $out"
cmp "$work/readback" "$work/data2" || die "the data read back after the reconnect differs"
echo "data verified: $mib MiB (read again with both paths up)"
"$cli" list || die "rtrs-srv list"

step "unmap $dev, unload everything"
run "echo normal > /sys/block/${dev#/dev/}/rnbd/unmap_device" || die "unmap refused"
wait_gone "$class/$sess" 15 || die "session $sess still in $class after the unmap"
echo "session $sess gone from $class"
rmmod rnbd_client rtrs_client rtrs_core rnbd_server rtrs_server brd || die "rmmod"
[ ! -e "$class" ] || die "$class still there after rmmod"
echo "$class: gone"
left=$(lsmod | grep -E '^(rtrs|rnbd)')
[ -z "$left" ] || die "modules still loaded: $left"
echo "no rtrs/rnbd module loaded"

step "demo passed"
