#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What the latency histograms cost (not a test): counted I/O from rtrs-client
# to rtrs-null, timed on the module as built and on one built with
# RTRS_NO_LATENCY=1 (no clock readings, no histogram updates), in
# alternating rounds in one guest run; prints a table of medians and ratios.
# Usage: tools/bench/latency-cost.sh [ROUNDS]   (KVER picks the kernel; run
# after a build: it needs build/rtrs-client)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-5}
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
build=${RTRS_BUILD_DIR:-$top/build}
cd "$top"
tools/build-module.sh "$kver" "$build/module/$kver" >/dev/null
RTRS_NO_LATENCY=1 tools/build-module.sh "$kver" "$build/module-nolat/$kver" >/dev/null
out=$build/bench/latency-$kver-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
tools/vm/run-guest --kver "$kver" --out "$out/vm" --timeout 3000 \
	-- "$top/tools/bench/latency-cost-guest.sh" "$build/module/$kver" "$build/module-nolat/$kver" \
	"$build/rtrs-client" "$rounds" "$out/vm"
echo "table: $out/vm/table.md (each round in results.txt beside it)"
