#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The instructions-per-I/O guard (ctest bench.insn-guard): counts our
# server's instructions per I/O (tools/bench/insn/insn.sh, ours only, every
# case with always_invalidate Y and N) and fails when a case moves by more
# than the tolerance either way from tools/bench/insn-baseline.txt, or when
# a case of the baseline was not counted (no I/O, no dump). Higher is a
# regression; lower is either an improvement not recorded (record it with
# --update in the commit that makes it) or a count that no longer counts
# what it should (the markers or the module's sections gone wrong): the
# count is exact to 0.1%, so neither passes unnoticed.
#
# Usage: tools/bench/insn/guard.sh [--update] BUILD_DIR KVER
#   BUILD_DIR holds module/KVER and peers/KVER (the test command's build);
#   --update: write the counts as the new baseline of KVER's series.
# Environment: INSN_TOLERANCE (percent, default: the baseline's
# "tolerance" line), INSN_BASELINE (the file, default the one above).
set -uo pipefail
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
[ $# -eq 2 ] || { echo "usage: $0 [--update] BUILD_DIR KVER" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "$1" && pwd) kver=$2
base=${INSN_BASELINE:-$top/tools/bench/insn-baseline.txt}
series=$(awk -F. '{ print $1 "." $2 }' <<<"$kver")
out=$build/bench/insn-guard
if ! SERVERS=ours KVER=$kver BENCH_NO_BUILD=1 RTRS_BUILD_DIR=$build INSN_OUT=$out TOP=5 \
	INSN_TIMEOUT=600 bash "$top/tools/bench/insn/insn.sh"; then
	echo "FAIL: the count did not run (insn.sh failed)"
	exit 1
fi
now=$(python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if "ours" in r:
        print(r["case"], r["inval"], "%.1f" % r["ours"])
' "$out/report.json") || { echo "FAIL: no report"; exit 1; }
if [ $update = 1 ]; then
	tmp=$(mktemp)
	grep -v "^$series " "$base" >"$tmp" 2>/dev/null || true
	sed "s/^/$series /" <<<"$now" >>"$tmp"
	mv "$tmp" "$base"
	echo "baseline of $series written to $base:"
	grep "^$series " "$base"
	exit 0
fi
tol=${INSN_TOLERANCE:-$(awk '$1 == "tolerance" { print $2 }' "$base")}
[ -n "$tol" ] || { echo "FAIL: no tolerance in $base"; exit 1; }
grep -q "^$series " "$base" || { echo "FAIL: $base has no baseline for $series"; exit 1; }
fail=0
while read -r s c inv want; do
	[ "$s" = "$series" ] || continue
	got=$(awk -v c="$c" -v i="$inv" '$1 == c && $2 == i { print $3 }' <<<"$now")
	if [ -z "$got" ]; then
		echo "FAIL: $c always_invalidate=$inv: not counted"
		fail=1
	elif awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { exit !(g > w * (1 + t / 100)) }'; then
		echo "FAIL: $c always_invalidate=$inv: $got instructions/I/O, baseline $want (+${tol}% allowed)"
		fail=1
	elif awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { exit !(g < w * (1 - t / 100)) }'; then
		echo "FAIL: $c always_invalidate=$inv: $got instructions/I/O, baseline $want (-${tol}% allowed):" \
			"implausibly low for an unchanged I/O path; an improvement is recorded with guard.sh --update"
		fail=1
	else
		echo "ok: $c always_invalidate=$inv: $got instructions/I/O, baseline $want (+-${tol}%)"
	fi
done <"$base"
[ $fail = 0 ] || sed -n '/top functions/,$p' "$out/report.txt" | head -n 40
exit $fail
