#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Instructions per I/O on the server host alone (issue 24 item 4, issue 25;
# doc/benchmarks.md "On the server host alone"): the two-host lab
# (tools/vm/two-hosts) with the insn-count plugin on the server host only.
# The client host runs upstream rnbd-client and fio; the server host runs
# our rtrs-server and then upstream's, each under upstream rnbd-server with
# a null_blk behind (tools/bench/insn/twohost-server.sh, -client.sh). The
# server host's markers come from the client host over TCP (insn-markd),
# so a job's count is everything the server host executed for it: the
# transport, soft-RoCE, rnbd-server, the block layer, the rest of the
# kernel. report.py prints each server's own text per I/O as insn.sh does
# (upstream's rtrs_core is all its server's here: no client on this host),
# and the whole server host's instructions per I/O ("guest").
#
# Usage: tools/bench/insn/twohost.sh
# Environment (defaults in brackets): KVER, SERVERS, INVALS, CASES,
# IOS_QD1, IOS_QD32, TOP, RTRS_BUILD_DIR, BENCH_NO_BUILD as insn.sh;
# INSN_OUT [RTRS_BUILD_DIR/bench/insn2h-KVER-DATE].
set -euo pipefail
# shellcheck source=tools/bench/insn/setup.sh
. "$(dirname "$0")/setup.sh" insn2h
echo "insn (two hosts): $kver, servers: $servers, always_invalidate: $invals, cases: $cases; results in $out"
rc=0
tools/vm/two-hosts --out "$out/2h" --server-kver "$kver" --client-kver "$kver" \
	--timeout "${INSN_TIMEOUT:-1800}" \
	--server-qemu-arg -plugin --server-qemu-arg "$build/insn/insn-count.so,out=$out/dumps" \
	-- "$top/tools/bench/insn/twohost-server.sh" "$build/module/$kver" "$build/peers/$kver" \
	"$build/insn/insn-markd" "$servers" "$invals" \
	--client-- "$top/tools/bench/insn/twohost-client.sh" "$build/peers/$kver" \
	"$servers" "$invals" "$cases" "${IOS_QD1:-2000}" "${IOS_QD32:-4000}" >"$out/two-hosts.log" 2>&1 || rc=$?
if [ $rc != 0 ]; then
	echo "insn (two hosts): the run failed (status $rc): $out/two-hosts.log"
	tail -n 20 "$out/two-hosts.log"
	for r in server client; do
		echo "--- $r host's last lines ($out/2h/$r/console.log):"
		grep -E 'FAIL|error|\[insn\]|^== ' "$out/2h/$r/console.log" 2>/dev/null | tail -n 10
	done
	exit 1
fi
echo "insn (two hosts): the run took $(($(date +%s) - begin)) s; host load before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
# one folder for report.py: the server host's marks and sections, the
# client host's fio results
mkdir -p "$out/report"
cp "$out"/2h/server/insn/* "$out"/2h/client/insn/*.json "$out/report/"
insn_report "$out/report"
# every case counted for every server asked, or the run failed
/usr/bin/python3 - "$out/report.json" "$servers" "$invals" "$cases" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
servers, invals, cases = (a.split() for a in sys.argv[2:5])
want = {(c, i) for c in cases for i in invals}
got = {(r["case"], r["inval"]) for r in rows if all(s in r for s in servers)}
missing = sorted(want - got)
if missing:
    print("insn (two hosts): FAIL: not counted: %s" % ", ".join("%s %s" % m for m in missing))
    sys.exit(1)
print("insn (two hosts): every case counted (%d)" % len(want))
PY
