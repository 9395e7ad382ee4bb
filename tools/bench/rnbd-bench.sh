#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark (not a test): fio on /dev/rnbd0 over our rtrs-server and over
# the upstream one, side by side in one guest run, as a table with ratios.
# Installs what it needs (as root), builds our module and the upstream peers.
# Usage: tools/bench/rnbd-bench.sh [RUNTIME_SECONDS]   (KVER picks the kernel)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
runtime=${1:-10}
if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh
	command -v fio >/dev/null || apt-get install -y -q fio
fi
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
build=${RTRS_BUILD_DIR:-$top/build}
tools/build-module.sh "$kver" "$build/module/$kver" >/dev/null
tools/upstream/build-peers.sh --rnbd-server-against "$build/module/$kver" "$kver" "$build/peers/$kver" >/dev/null
out=$build/bench/$kver-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
tools/vm/run-guest --kver "$kver" --out "$out/vm" --timeout 1800 \
	-- "$top/tools/bench/rnbd-bench-guest.sh" "$build/module/$kver" "$build/peers/$kver" "$runtime" "$out/vm"
echo "table: $out/vm/table.md (fio results beside it)"
