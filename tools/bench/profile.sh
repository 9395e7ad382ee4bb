#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where the CPU time goes (not a test): `perf record -e cpu-clock -a -g` in
# the guest while the same fio load runs on rnbd over our rtrs-server and
# over the upstream one (tools/bench/profile-guest.sh), then a side-by-side
# summary: samples per I/O by module and the top symbols of each server
# (tools/bench/profile-report.py). Installs what it needs (as root) and
# builds our module and the upstream peers.
#
# Usage: tools/bench/profile.sh
# Environment (defaults in brackets):
#   KVER            kernel to boot [the first of tools/kernels.sh]
#   SECONDS_EACH    seconds sampled per server and round [10]
#   ROUNDS          rounds (ours and upstream alternate who goes first) [2]
#   FIO             fio options of the load ["--rw=randread --bs=4k --iodepth=32"]
#   INVALIDATE      always_invalidate of both servers [Y]
#   PERF            perf record's event options ["-e cpu-clock"]
#   BENCH_OUT       output folder [build/bench/profile-KVER-DATE]
#   RTRS_BUILD_DIR  build folder [./build]
#   BENCH_NO_BUILD  1: take the module and peers already built [unset]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
secs=${SECONDS_EACH:-10}
rounds=${ROUNDS:-2}
fio_args=${FIO:---rw=randread --bs=4k --iodepth=32}
inv=${INVALIDATE:-Y}
perf_args=${PERF:--e cpu-clock}
case $inv in Y | N) ;; *) echo "profile: INVALIDATE is Y or N" >&2; exit 2 ;; esac
if [ "$(id -u)" -eq 0 ]; then
	tools/install-deps.sh
	for p in fio linux-perf; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || {
			apt-get update -q
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$p"
		}
	done
fi
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
build=${RTRS_BUILD_DIR:-$top/build}
if [ "${BENCH_NO_BUILD:-}" != 1 ]; then
	tools/build-module.sh "$kver" "$build/module/$kver" >/dev/null
	tools/upstream/build-peers.sh --rnbd-server-against "$build/module/$kver" "$kver" "$build/peers/$kver" >/dev/null
fi
out=${BENCH_OUT:-$build/bench/profile-$kver-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(realpath "$out")
echo "profile: $kver, $rounds round(s), $secs s sampled per server, fio $fio_args, always_invalidate=$inv; results in $out"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
begin=$(date +%s)
tools/vm/run-guest --kver "$kver" --out "$out/vm" --timeout $((600 + rounds * 2 * (secs + 90))) \
	-- "$top/tools/bench/profile-guest.sh" "$build/module/$kver" "$build/peers/$kver" "$out/vm" \
	"$secs" "$fio_args" "$inv" "$rounds" "$perf_args"
echo "profile: guest run took $(($(date +%s) - begin)) s"
/usr/bin/python3 tools/bench/profile-report.py --seconds "$secs" \
	--note "kernel $kver, fio $fio_args, always_invalidate=$inv, perf $perf_args, $secs s sampled per server and round, $(date -u -d @"$begin" '+%Y-%m-%d %H:%M UTC'); host load before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)" \
	"$out/vm" "$out"
