#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Instructions per I/O (issue 25; doc/benchmarks.md "Instructions per I/O"):
# boots one guest with one vCPU and the insn-count TCG plugin
# (tools/bench/insn/insn-count.c), runs fixed-size fio jobs on rnbd over our
# rtrs-server and over upstream's in that same guest
# (tools/bench/insn/insn-guest.sh), then prints instructions per I/O of each
# server's text, the ratio ours/upstream and the top functions
# (tools/bench/insn/report.py; also OUT/report.json).
#
# Usage: tools/bench/insn/insn.sh
# Environment (defaults in brackets):
#   KVER            kernel to boot [the first of tools/kernels.sh]
#   SERVERS         [ours upstream]
#   INVALS          always_invalidate values ["Y N"]
#   CASES           ["randread-4k-qd1 randread-4k-qd32 randwrite-4k-qd1 randwrite-4k-qd32"]
#   IOS_QD1 IOS_QD32  I/Os per job [2000 4000]
#   TOP             functions listed per server and case [8]
#   INSN_OUT        output folder [RTRS_BUILD_DIR/bench/insn-KVER-DATE]
#   RTRS_BUILD_DIR  build folder with module/KVER and peers/KVER [./build]
#   BENCH_NO_BUILD  1: take the module and peers already built [unset]
#   INSN_ROOT       a release's root to build in and boot from (sid, with
#                   KVER=7.2: Debian's 7.2 kernel) [unset: the host's]
set -euo pipefail
# shellcheck source=tools/bench/insn/setup.sh
. "$(dirname "$0")/setup.sh" insn
echo "insn: $kver, servers: $servers, always_invalidate: $invals, cases: $cases; results in $out"
tools/vm/run-guest --kver "$kver" "${guest_root[@]}" --smp 1 --out "$out/vm" --timeout "${INSN_TIMEOUT:-1500}" \
	--qemu-arg -plugin --qemu-arg "$build/insn/insn-count.so,out=$out/dumps" \
	-- "$top/tools/bench/insn/insn-guest.sh" "$build/module/$kver" "$build/peers/$kver" "$out/vm/insn" \
	"$build/insn/insn-mark" "$servers" "$invals" "$cases" "${IOS_QD1:-2000}" "${IOS_QD32:-4000}" >"$out/run-guest.log" 2>&1 ||
	{ echo "insn: the guest run failed (status $?): $out/run-guest.log"; tail -n 20 "$out/run-guest.log"; exit 1; }
grep -F '[insn]' "$out/run-guest.log" || true
echo "insn: guest run took $(($(date +%s) - begin)) s; host load before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
insn_report "$out/vm/insn"
