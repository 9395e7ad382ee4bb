#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark's smoke (ctest bench.smoke): one short round of two cases
# with always_invalidate=Y over the module and peers the test command built,
# so that the benchmark keeps working. It checks that both servers did I/O,
# that the table, results and chart were written and that the guest's
# kernel log is clean; never a speed.
# Usage: tools/bench/smoke.sh BUILD_DIR KVER
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR KVER" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd) kver=$2
out=$build/bench/smoke
. "$top/tools/vm/kernel-issues.sh"
rm -rf "$out"
cases="randread-4k-qd1 write-128k-seq"
if ! ROUNDS=1 CASE_SECONDS=2 CASES="$cases" INVALIDATE=Y KVER=$kver BENCH_NO_BUILD=1 \
	BENCH_OUT=$out RTRS_BUILD_DIR=$build bash "$top/tools/bench/rnbd-bench.sh"; then
	echo "FAIL: rnbd-bench.sh failed"
	exit 1
fi
fail=0
check() {
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }
for c in $cases; do
	# | case | Y | ours IOPS | ours MiB/s | upstream IOPS | upstream MiB/s | ...
	row=$(grep -F "| $c | Y |" "$out/table.md" | head -n 1)
	ours=$(awk -F'|' '{ gsub(/ /, "", $4); print $4 }' <<<"$row")
	up=$(awk -F'|' '{ gsub(/ /, "", $6); print $6 }' <<<"$row")
	check "$c: ours did I/O (IOPS '$ours')" positive "$ours"
	check "$c: upstream did I/O (IOPS '$up')" positive "$up"
done
check "results.json written" test -s "$out/results.json"
check "chart.png written" test -s "$out/chart.png"
log=$out/vm/console.log
check "the guest's console log is there" test -s "$log"
issues=$(grep -cE "$rtrs_issue_re" "$log")
check "the guest's kernel log is clean ($issues issue lines)" test "$issues" -eq 0
[ "$issues" -eq 0 ] || grep -E "$rtrs_issue_re" "$log" | head -n 20
exit $fail
