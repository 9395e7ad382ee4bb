#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The scale benchmark (not a test): how our rtrs-server and the upstream one
# take many sessions, in interleaved rounds in one guest run, under upstream
# rnbd-server and rnbd-client (tools/bench/scale-guest.sh says what is
# measured); writes scale.md and scale.json (tools/bench/scale-report.py).
# Installs what it needs (as root), builds our module and the upstream peers.
#
# Usage: tools/bench/scale.sh
# Environment (defaults in brackets):
#   KVER            kernel to boot [the first of tools/kernels.sh]
#   ROUNDS          rounds per server [3]
#   COUNTS          session counts mapped at once ["1 8 32"]
#   FIO_SECONDS     seconds per fio job of the 8 x 2-path load [10]
#   INVALIDATE      always_invalidate of both servers [Y]
#   GUEST_MEM       guest memory in MiB [6144]: 32 sessions at the default
#                   sess_queue_depth and max_chunk_size hold 2 GiB of chunks
#   BENCH_OUT       output folder [build/bench/scale-KVER-DATE]
#   RTRS_BUILD_DIR  build folder [./build]
#   BENCH_NO_BUILD  1: take the module and peers already built [unset]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
rounds=${ROUNDS:-3}
counts=$(xargs <<<"${COUNTS:-1 8 32}")
secs=${FIO_SECONDS:-10}
inv=${INVALIDATE:-Y}
mem=${GUEST_MEM:-6144}
for v in "$rounds" "$secs" "$mem" $counts; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "scale: ROUNDS, COUNTS, FIO_SECONDS and GUEST_MEM are positive integers" >&2; exit 2; }
done
case $inv in Y | N) ;; *) echo "scale: INVALIDATE is Y or N" >&2; exit 2 ;; esac

if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh
	dpkg-query -W -f='${Status}' fio 2>/dev/null | grep -q "install ok installed" || {
		apt-get update -q
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends fio
	}
fi
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
build=${RTRS_BUILD_DIR:-$top/build}
if [ "${BENCH_NO_BUILD:-}" = 1 ]; then
	for f in "$build/module/$kver/rtrs-server.ko" "$build/peers/$kver/rnbd-against/rnbd-server.ko"; do
		[ -e "$f" ] || { echo "scale: BENCH_NO_BUILD=1, but there is no $f" >&2; exit 2; }
	done
else
	tools/build-module.sh "$kver" "$build/module/$kver" >/dev/null
	tools/upstream/build-peers.sh --rnbd-server-against "$build/module/$kver" "$kver" "$build/peers/$kver" >/dev/null
fi
out=${BENCH_OUT:-$build/bench/scale-$kver-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(realpath "$out")
# Per round and server: the maps and unmaps (about 2 s a session under TCG,
# generously), two fio jobs, loading; a margin.
total=0
for n in $counts; do total=$((total + n)); done
timeout=$((600 + rounds * 2 * (4 * (total + 16) + 2 * (secs + 20) + 30)))
echo "scale: $kver, $rounds round(s) per server, sessions at once [$counts], 8 x 2 paths with I/O ($secs s per job), always_invalidate=$inv, guest $mem MiB; results in $out"
host_state() { echo "load $(cut -d' ' -f1-3 /proc/loadavg), other qemu guests: $(pgrep -c qemu-system || true)"; }
before=$(host_state)
begin=$(date +%s)
tools/vm/run-guest --kver "$kver" --mem "$mem" --out "$out/vm" --timeout "$timeout" \
	-- "$top/tools/bench/scale-guest.sh" "$build/module/$kver" "$build/peers/$kver" "$out/vm" \
	"$rounds" "$counts" "$secs" "$inv"
took=$(($(date +%s) - begin))
after=$(host_state)
echo "scale: guest run took $took s"
/usr/bin/python3 tools/bench/scale-report.py --kver "$kver" \
	--note "always_invalidate=$inv, guest $mem MiB, $(date -u -d @"$begin" '+%Y-%m-%d %H:%M UTC'), $(nproc) host cores, TCG; guest run $took s; host before: $before; after: $after" \
	"$out/vm" "$out"
