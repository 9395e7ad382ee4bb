#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the guest: rtrs-server + rtrs-null, our userspace client
# connected with two paths over two soft-RoCE devices, and the resulting
# /sys/class/rtrs-server tree.
# Usage: demo.sh MODULE_DIR CLIENT_BINARY [RTRS_SRV_BINARY]
set -eu
moddir=$1 client=$2 cli=${3:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/guest/lib.sh"
echo "== guest kernel $(uname -r)"

echo "== soft-RoCE: rxe0 on dummy0 (10.77.0.1 server, .2 client), rxe1 on dummy1 (10.78.0.x)"
rxe_up
rdma link show

echo "== modprobe $(modinfo -F depends "$moddir/rtrs-server.ko"); insmod rtrs-server.ko rtrs-null.ko"
load_deps "$moddir/rtrs-server.ko"
insmod "$moddir/rtrs-server.ko"
insmod "$moddir/rtrs-null.ko"
grep -H . /sys/module/rtrs_server/parameters/*

echo "== rtrs-client: session demo, paths 10.77.0.2->10.77.0.1 and 10.78.0.2->10.78.0.1"
"$client" connect --session demo --server 10.77.0.1 --src 10.77.0.2 \
	--server 10.78.0.1 --src 10.78.0.2 --hold 60 &
pid=$!
wait_exists /sys/class/rtrs-server/demo/paths/ip:10.78.0.2@ip:10.78.0.1 30
wait_exists /sys/class/rtrs-server/demo/paths/ip:10.77.0.2@ip:10.77.0.1 30

echo "== /sys/class/rtrs-server"
"$top/tools/show-sysfs-tree.sh"
if [ -n "$cli" ]; then
	echo "== rtrs-srv list"
	"$cli" list
fi

echo "== client disconnects; unload"
kill -TERM $pid
wait $pid || true
wait_gone /sys/class/rtrs-server/demo 15
rmmod rtrs_null rtrs_server
test ! -e /sys/class/rtrs-server && echo "class removed"
