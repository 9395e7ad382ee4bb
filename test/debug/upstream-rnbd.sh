#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Upstream alone, inside the guest on the debug kernel (test/debug/run.sh
# upstream-rnbd): upstream rtrs-server and rnbd-server from the peers
# folder, no module of ours, under upstream rnbd-client; one map of a RAM
# disk, a verified write, a path disconnected through the client's own
# sysfs, an unmap, and the modules unloaded. Its verdict is the kernel log
# (run-guest --kmemleak): what it reports is upstream's own, which is why
# the rnbd interop test cannot pass on this kernel (README "The debug
# kernel"). The script's own checks only say that the steps ran.
# Usage: upstream-rnbd.sh PEERS_DIR
set -u
peers=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/lib.sh"
ctl=/sys/devices/virtual/rnbd-client/ctl
rxe_up || exit 1
modprobe brd rd_nr=1 rd_size=65536 || exit 1
modprobe -a rdma_cm ib_core || exit 1
for m in src/rtrs/rtrs-core src/rtrs/rtrs-client src/rtrs/rtrs-server src/rnbd/rnbd-client src/rnbd/rnbd-server; do
	insmod "$peers/$m.ko" || { echo "cannot load $m"; exit 1; }
done
echo "sessname=up path=ip:10.77.0.2@ip:10.77.0.1 path=ip:10.78.0.2@ip:10.78.0.1 device_path=/dev/ram0" >$ctl/map_device
check "upstream maps /dev/ram0 as /dev/rnbd0" wait_exists /dev/rnbd0 60
dd if=/dev/urandom of=/tmp/pattern bs=1M count=16 status=none
check "16 MiB written with O_DIRECT" dd if=/tmp/pattern of=/dev/rnbd0 bs=64k oflag=direct status=none
check "and read back equal" cmp <(dd if=/dev/rnbd0 bs=1M count=16 iflag=direct status=none) /tmp/pattern
clt=/sys/class/rtrs-client/up/paths/ip:10.77.0.2@ip:10.77.0.1
check "the client disconnects a path" sh -c "echo 1 >$clt/disconnect"
check "and reconnects it" sh -c "sleep 2; echo 1 >$clt/reconnect"
check "unmap" sh -c "echo normal >/sys/block/rnbd0/rnbd/unmap_device"
check "the device goes" wait_gone /dev/rnbd0 60
sleep 5  # the delayed kobject releases (1-4 s each) run before the unload
check "upstream's modules unload" rmmod rnbd_server rnbd_client rtrs_server rtrs_client rtrs_core
finish
