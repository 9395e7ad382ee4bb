#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: installs what it needs, builds rtrs-server.ko, rtrs-null.ko,
# the userspace client and rtrs-srv, boots Debian's kernel in a QEMU guest,
# loads the modules there, connects the client with two paths over soft-RoCE
# and shows the /sys/class/rtrs-server tree. KVER picks the kernel (default:
# the 6.1 one).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${RTRS_BUILD_DIR:-$top/build}
for dir in "$top" "$build"; do
	case "$dir" in *[[:space:]]*)
		echo "${0##*/}: '$dir' has white space in it, which Kbuild cannot build in: use a folder without" >&2
		exit 1 ;;
	esac
done
if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh
fi
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
cmake -S "$top" -B "$build" -DRTRS_KERNELS="$kver" >/dev/null
cmake --build "$build" -j"$(nproc)" --target rtrs-client rtrs-srv
tools/build-module.sh "$kver" "$build/module/$kver"
exec tools/vm/run-guest --kver "$kver" --out "$build/vm/demo-$kver" \
	-- "$top/test/guest/demo.sh" "$build/module/$kver" "$build/rtrs-client" "$build/tools/rtrs-srv/rtrs-srv"
