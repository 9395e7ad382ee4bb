#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the ABI suite inside the guest: sets up two soft-RoCE devices on two
# dummy interfaces, loads rtrs-server and rtrs-null, checks the listeners
# (listeners.py), runs the suite, then the unload test on its own, and checks
# that nothing is left.
# Usage: guest-run.sh MODULE_DIR ABI_TEST_BINARY CLIENT_BINARY [gtest args]
set -euo pipefail
moddir=$1 tests=$2 client=$3
shift 3
. "$(dirname "$0")/../guest/lib.sh"

echo "== network: dummy0/rxe0 10.77.0.0/24 fd00::/64, dummy1/rxe1 10.78.0.0/24"
rxe_up
rdma link show

echo "== loading rtrs-server and rtrs-null from $moddir"
servers_up

export RTRS_CLIENT=$client
status=0
echo "== listeners: IP (ps TCP) and native IB (ps IB) on every device, as upstream's"
python3 "$(dirname "$0")/listeners.py" 1234 || status=1
"$tests" --gtest_filter='-Unload.*' "$@" || status=1
echo "== unload with live sessions"
"$tests" --gtest_filter='Unload.*' "$@" || status=1
if lsmod | grep -q '^rtrs_'; then
	echo "FAIL: modules still loaded"; lsmod | grep '^rtrs_'
	status=1
fi
exit $status
