#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: installs what it needs, builds rtrs-server.ko, boots Debian's
# kernel in a QEMU guest, loads the module there and shows the
# /sys/class/rtrs-server tree. KVER picks the kernel (default: the 6.1 one).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh
fi
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
build=${RTRS_BUILD_DIR:-$top/build}
tools/build-module.sh "$kver" "$build/module/$kver"
exec tools/vm/run-guest --kver "$kver" --out "$build/vm/demo-$kver" \
	-- "$top/test/guest/demo.sh" "$build/module/$kver"
