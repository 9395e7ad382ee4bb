#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark (not a test): fio on /dev/rnbd0 over our rtrs-server and over
# the upstream one, in interleaved rounds in one guest run, with the raw rxe
# ceiling (perftest) measured in the same rounds; writes table.md, results.json
# and chart.png (tools/bench/report.py) to the output folder.
# Installs what it needs (as root), builds our module and the upstream peers.
#
# Usage: tools/bench/rnbd-bench.sh [SECONDS_PER_CASE]
# Environment (defaults in brackets):
#   KVER            kernel series to boot, the host's (6.1) [6.1]; the
#                   module and peers are those of build/module/KVER and
#                   build/peers/KVER, as the test command names them
#   ROUNDS          rounds per server, per case and always_invalidate value [5]
#   CASE_SECONDS    seconds per fio case [5] (the argument wins)
#   CASES           space-separated case names [all seven, see below]
#   INVALIDATE      always_invalidate values of both servers ["Y N"]
#   ORDER           fixed: ours, then upstream, in every round [fixed];
#                   alternate: upstream first in the even rounds
#   BENCH_OUT       output folder [build/bench/KVER-DATE]
#   RTRS_BUILD_DIR  build folder [./build]
#   BENCH_NO_BUILD  1: take the module and peers already built in
#                   RTRS_BUILD_DIR (the test command's smoke does) [unset]
#   BASELINE        a folder with another build of our rtrs-server.ko (of an
#                   older commit, say) to run in upstream's place, for the
#                   before/after figures of a change; its output says
#                   'baseline' where it would say 'upstream' [unset]
# Cases: randread-4k-qd1 randread-4k-qd32 randwrite-4k-qd1 randwrite-4k-qd32
#        read-128k-seq write-128k-seq mixed-70r-4k64k-qd8
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
all_cases="randread-4k-qd1 randread-4k-qd32 randwrite-4k-qd1 randwrite-4k-qd32 read-128k-seq write-128k-seq mixed-70r-4k64k-qd8"
secs=${1:-${CASE_SECONDS:-5}}
rounds=${ROUNDS:-5}
cases=$(xargs <<<"${CASES:-$all_cases}")  # one space between names
invs=${INVALIDATE:-Y N}
order=${ORDER:-fixed}
case $order in fixed | alternate) ;; *) echo "rnbd-bench: ORDER is fixed or alternate" >&2; exit 2 ;; esac
for v in "$secs" "$rounds"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "rnbd-bench: seconds and ROUNDS must be positive integers" >&2; exit 2; }
done
for v in $invs; do
	case $v in Y | N) ;; *) echo "rnbd-bench: INVALIDATE takes Y and/or N" >&2; exit 2 ;; esac
done
for c in $cases; do
	case " $all_cases " in *" $c "*) ;; *) echo "rnbd-bench: unknown case $c (cases: $all_cases)" >&2; exit 2 ;; esac
done

if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh
	# fio, perftest (ib_write_bw, ib_read_bw) and matplotlib (the chart)
	missing=
	for p in fio perftest python3-matplotlib; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		apt-get update -q
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
	fi
fi
kver=${KVER:-6.1}
full_kver=$(tools/kernels.sh --series "$kver") || exit 2
build=${RTRS_BUILD_DIR:-$top/build}
if [ "${BENCH_NO_BUILD:-}" = 1 ]; then
	for f in "$build/module/$kver/rtrs-server.ko" "$build/peers/$kver/rnbd-against/rnbd-server.ko"; do
		[ -e "$f" ] || { echo "rnbd-bench: BENCH_NO_BUILD=1, but there is no $f" >&2; exit 2; }
	done
else
	tools/build-module.sh "$kver" "$build/module/$kver" >/dev/null
	tools/upstream/build-peers.sh --rnbd-server-against "$build/module/$kver" "$kver" "$build/peers/$kver" >/dev/null
fi
baseline=
if [ -n "${BASELINE:-}" ]; then
	baseline=$(realpath "$BASELINE")
	[ -e "$baseline/rtrs-server.ko" ] || { echo "rnbd-bench: no rtrs-server.ko in $BASELINE" >&2; exit 2; }
	modinfo -F vermagic "$baseline/rtrs-server.ko" | grep -q "^$full_kver " ||
		{ echo "rnbd-bench: $BASELINE/rtrs-server.ko is not built for $full_kver" >&2; exit 2; }
fi
out=${BENCH_OUT:-$build/bench/$kver-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(realpath "$out")
# Guest time: per round and server, the cases plus about 10 s of module
# loading and mapping; 2 x seconds of perftest per round; a margin.
n=$(wc -w <<<"$cases")
timeout=$((600 + $(wc -w <<<"$invs") * rounds * (2 * n * (secs + 4) + 20 + 2 * (secs + 10))))
echo "rnbd-bench: $full_kver, $rounds round(s) x [$cases] x always_invalidate [$invs], $secs s per case, order $order${baseline:+, against the baseline $baseline}; results in $out"
# What else ran on the host: load average and other QEMU guests, before and after.
host_state() { echo "load $(cut -d' ' -f1-3 /proc/loadavg), other qemu guests: $(pgrep -c qemu-system || true)"; }
before=$(host_state)
begin=$(date +%s)
tools/vm/run-guest --kver "$kver" --out "$out/vm" --timeout "$timeout" \
	-- "$top/tools/bench/rnbd-bench-guest.sh" "$build/module/$kver" "$build/peers/$kver" "$out/vm" \
	"$rounds" "$secs" "$cases" "$invs" "$order" "$baseline"
took=$(($(date +%s) - begin))
after=$(host_state)
echo "rnbd-bench: guest run took $took s"
/usr/bin/python3 tools/bench/report.py --kver "$full_kver" --rounds "$rounds" --seconds "$secs" \
	--other "$(if [ -n "$baseline" ]; then echo baseline; else echo upstream; fi)" \
	--note "order $order;${baseline:+ baseline: $baseline ($(modinfo -F srcversion "$baseline/rtrs-server.ko"));} $(date -u -d @"$begin" '+%Y-%m-%d %H:%M UTC'), $(nproc) host cores, TCG; guest run $took s; host before: $before; after: $after" \
	"$out/vm" "$out"
