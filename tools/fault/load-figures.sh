#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The load figures: the fault suites' long mode (RTRS_FAULT_LONG=1) in two
# guest boots, then a markdown table of what was done, what was lost and
# the kernel log's verdict for each.
#   boot 1, stock kernel KVER: test/fault/conn.sh (1000 connect/disconnect
#     cycles of a two-path session, always_invalidate Y and N),
#     test/fault/io.sh (16 sessions x 4 paths with I/O, every malformed
#     input 10 times, floods), test/fault/rnbd.sh (100 rnbd map/unmap
#     cycles, 100 path disconnects under verified writes);
#   boot 2, the debug kernel (KASAN, lockdep, kmemleak): test/fault/inject.sh
#     (every call of every fallible glue function made to fail, one run
#     each).
# Needs what the test command builds: BUILD/module/KVER, BUILD/peers/KVER,
# BUILD/rtrs-client, the debug kernel and BUILD/debug/module. Takes about
# an hour on a 2-core machine. One guest at a time.
# Usage: tools/fault/load-figures.sh [BUILD_DIR] [KVER]
#   BUILD_DIR default ./build; KVER default the newest 6.1 kernel installed.
#   The table goes to stdout and to BUILD_DIR/vm/load-figures.md.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || { echo "no build folder" >&2; exit 2; }
kver=${2:-$(ls /lib/modules | grep '^6\.1\.' | sort -V | tail -n 1)}
. "$top/tools/vm/kernel-issues.sh"
client=$build/rtrs-client
for f in "$build/module/$kver/rtrs-server.ko" "$build/peers/$kver/rnbd-against/rnbd-server.ko" "$client"; do
	[ -e "$f" ] || { echo "load-figures: missing $f (run the test command first)" >&2; exit 2; }
done
out=$build/vm/load-figures
mkdir -p "$out"
export RTRS_FAULT_LONG=1

echo "== boot 1: $kver, long mode of conn, io, rnbd" >&2
cat >"$out/stock.suites" <<EOF
fault-conn 3600 $top/test/fault/conn.sh $build/module/$kver $client
fault-io 3600 $top/test/fault/io.sh $build/module/$kver $client stock
fault-rnbd 3600 $top/test/fault/rnbd.sh $build/module/$kver $build/peers/$kver $client
EOF
"$top/tools/vm/boot-suites" --kver "$kver" --suites "$out/stock.suites" --out "$out/stock" >&2

debug=
if env=$("$top/tools/debug-kernel/build.sh" --check 2>/dev/null) && [ -e "$build/debug/module/rtrs-server.ko" ]; then
	eval "$env"
	echo "== boot 2: the debug kernel, long mode of inject" >&2
	cat >"$out/debug.suites" <<EOF
fault-inject 5400 $top/test/fault/inject.sh $build/debug/module $client
EOF
	"$top/tools/vm/boot-suites" --kernel "$RTRS_DEBUG_KERNEL_BZIMAGE" \
		--modules-root "$RTRS_DEBUG_KERNEL_MODROOT" --kver "$RTRS_DEBUG_KERNEL_VERSION" \
		--kmemleak --mem 1024 --suites "$out/debug.suites" --out "$out/debug" >&2
	debug=$out/debug
else
	echo "load-figures: no debug kernel or debug module: the injected faults are left out" >&2
fi

# verdict DIR SUITE: the kernel log's verdict on one suite (and kmemleak's
# on a --kmemleak boot).
verdict() {
	local dir=$1 name=$2 n v
	[ -e "$dir/suites/$name/status" ] || { echo "did not run"; return; }
	n=$(grep -caE "$rtrs_issue_re" "$dir/suites/$name/dmesg.txt")
	[ "$n" = 0 ] && v=clean || v="$n problem line(s): $(grep -aE "$rtrs_issue_re" "$dir/suites/$name/dmesg.txt" | head -n 1 | sed 's/^\[[^]]*\] //' | cut -c1-60)"
	if [ -e "$dir/kmemleak-expected" ]; then
		if [ -s "$dir/kmemleak.txt" ]; then v="$v; kmemleak: $(grep -c '^unreferenced object' "$dir/kmemleak.txt") leak(s)"
		elif [ -e "$dir/kmemleak.txt" ]; then v="$v; kmemleak clean"
		else v="$v; no kmemleak result"; fi
	fi
	echo "$v"
}
# rows DIR SUITE KERNEL: the table rows from the suite's "figure:" lines.
rows() {
	local dir=$1 name=$2 kern=$3 v st
	v=$(verdict "$dir" "$name")
	st=$(cat "$dir/suites/$name/status" 2>/dev/null || echo '-')
	grep -a '^figure: ' "$dir/suites/$name/log" 2>/dev/null | while IFS= read -r line; do
		line=${line#figure: }
		local what=${line%%: done=*} rest=${line##*: done=}
		local done=${rest%% *} lost=${rest##*lost=} more=
		# key=value fields after lost= (e.g. reconnected=1) go beside what
		[ "${lost#* }" != "$lost" ] && more=" (${lost#* })" lost=${lost%% *}
		echo "| $what$more | $done | $lost | $kern | $name (exit $st) | $v |"
	done
}
{
	echo "| load | done | lost | kernel | suite | kernel log |"
	echo "|---|---:|---:|---|---|---|"
	for s in fault-conn fault-io fault-rnbd; do rows "$out/stock" $s "$kver"; done
	[ -n "$debug" ] && rows "$debug" fault-inject "debug 6.1 (KASAN, lockdep, kmemleak)"
} | tee "$build/vm/load-figures.md"
