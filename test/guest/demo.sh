#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the guest: load rtrs-server and show its sysfs class.
# Usage: demo.sh MODULE_DIR
set -eu
moddir=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/guest/lib.sh"
echo "== guest kernel $(uname -r)"
echo "== modprobe $(modinfo -F depends "$moddir/rtrs-server.ko"), insmod $moddir/rtrs-server.ko"
load_deps "$moddir/rtrs-server.ko"
insmod "$moddir/rtrs-server.ko"
dmesg | grep rtrs_server | tail -n 3
echo "== module parameters"
grep -H . /sys/module/rtrs_server/parameters/*
echo "== /sys/class/rtrs-server"
"$top/tools/show-sysfs-tree.sh"
echo "== rmmod rtrs_server"
rmmod rtrs_server
test ! -e /sys/class/rtrs-server && echo "class removed"
